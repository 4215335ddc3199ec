package cli_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/certs"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
	"github.com/idgenkit/idgen/internal/testenv/redistest"
	"github.com/idgenkit/idgen/internal/testenv/zktest"
	"github.com/idgenkit/idgen/internal/throwaway"
)

// A refusal is a worker source (or spec) that must fail: the exit code
// and a part of the message that says why.
type refusal struct {
	name string
	args []string
	code int
	want string
}

// checkRefusals runs each case and checks its exit code and message, and
// that no secret of secrets reaches stdout or stderr. The cases run at
// once, each a cli.Main of its own: several wait out a client's dial
// timeout (six of TestWorkerSourceEtcdSecure's took 5 s each, one after
// the other).
func checkRefusals(t *testing.T, cases []refusal, secrets ...string) {
	t.Helper()
	type ran struct {
		out, errs string
		code      int
	}
	results := make([]ran, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { results[i].out, results[i].errs, results[i].code = run(c.args...) })
	}
	wg.Wait()
	for i, c := range cases {
		out, errs, code := results[i].out, results[i].errs, results[i].code
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.name, code, errs, c.code, c.want)
		}
		for _, s := range secrets {
			if strings.Contains(out+errs, s) {
				t.Errorf("%s: a secret is printed: %s%s", c.name, out, errs)
			}
		}
	}
}

// writeSecret writes text to a new file of mode 0600 and returns its path.
func writeSecret(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func genWorker(src string) []string {
	return []string{"gen", "-s", "snowflake?preset=twitter", "--worker-source", src}
}

// TestWorkerSourceEtcdSecure leases a worker ID from Debian's etcd started
// with --client-cert-auth, --trusted-ca-file and RBAC on, as a user whose
// only role is readwrite on /idgen/secure/, and checks each refusal.
func TestWorkerSourceEtcdSecure(t *testing.T) {
	t.Parallel() // its own etcd on its own ports
	cs := certs.New(t)
	s := etcdtest.Secure{Certs: cs, User: "idgen-worker", Password: "s3cret-etcd", Role: "idgen-secure",
		Namespace: "secure", RootPassword: "r00t-etcd"}
	e := etcdtest.StartSecure(t, s)
	pw := writeSecret(t, "etcd-password", s.Password)
	wrong := writeSecret(t, "wrong-password", "not-it")
	src := func(user, ns string, q url.Values) string {
		return "etcd://" + user + e.Addr + "/" + ns + "?" + q.Encode()
	}
	good := func() url.Values {
		return url.Values{"tls_ca": {cs.CA.CertFile}, "tls_cert": {cs.Client.CertFile}, "tls_key": {cs.Client.KeyFile},
			"password_file": {pw}, "ttl": {"5s"}}
	}
	with := func(kv ...string) url.Values { return setQuery(good(), kv...) }
	out, errs, code := run(genWorker(src("idgen-worker@", "secure", good()))...)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("etcd over mutual TLS as idgen-worker: exit %d, %q, %s", code, out, errs)
	}
	checkRefusals(t, []refusal{
		{"no client certificate", genWorker(src("idgen-worker@", "secure", with("tls_cert", "", "tls_key", ""))), 1, "the server may want a client certificate"},
		{"server of a wrong CA", genWorker(src("idgen-worker@", "secure", with("tls_ca", cs.WrongCA.CertFile))), 1, "certificate signed by unknown authority"},
		{"client of a wrong CA", genWorker(src("idgen-worker@", "secure", with("tls_cert", cs.WrongClient.CertFile, "tls_key", cs.WrongClient.KeyFile))), 1, "did the server refuse the client certificate? is it signed by a CA"},
		{"expired client certificate", genWorker(src("idgen-worker@", "secure", with("tls_cert", cs.Expired.CertFile, "tls_key", cs.Expired.KeyFile))), 1, "the client certificate expired at"},
		{"wrong password", genWorker(src("idgen-worker@", "secure", with("password_file", wrong))), 1, "authentication failed"},
		{"certificate alone (no such user)", genWorker(src("", "secure", with("password_file", ""))), 1, "permission denied"},
		{"a namespace outside the role", genWorker(src("idgen-worker@", "other", good())), 1, "permission denied"},
		{"plaintext", genWorker(src("idgen-worker@", "secure", url.Values{"password_file": {pw}})), 1, "etcd"},
		{"tls=true: the system's roots", genWorker(src("idgen-worker@", "secure", with("tls_ca", "", "tls_cert", "", "tls_key", "", "tls", "true"))), 1, "certificate signed by unknown authority"},
		{"tls=yes", genWorker(src("idgen-worker@", "secure", with("tls", "yes"))), 2, `tls "yes": want tls=true`},
		{"CA file missing", genWorker(src("idgen-worker@", "secure", with("tls_ca", "/nonexistent/ca.pem"))), 2, "tls_ca: tls: unusable certificate files: open /nonexistent/ca.pem"},
		{"CA file not PEM", genWorker(src("idgen-worker@", "secure", with("tls_ca", pw))), 2, "holds no PEM certificate"},
		{"certificate without key", genWorker(src("idgen-worker@", "secure", with("tls_key", ""))), 2, "tls_cert and tls_key go together"},
		{"user without password", genWorker(src("idgen-worker@", "secure", with("password_file", ""))), 2, `user "idgen-worker" needs a password`},
		{"password file missing", genWorker(src("idgen-worker@", "secure", with("password_file", "/nonexistent/pw"))), 2, "password_file: open /nonexistent/pw"},
		{"password in URL and file", genWorker(src("idgen-worker:"+s.Password+"@", "secure", good())), 2, "give one"},
	}, s.Password, "not-it")
	// A password in the URL works and is masked (here refused: it is wrong).
	checkRefusals(t, []refusal{
		{"wrong password in the URL", genWorker(src("idgen-worker:inline-wrong@", "secure", with("password_file", ""))), 1, "authentication failed"},
	}, "inline-wrong")
}

// TestStoreRedisTLS leases a worker ID and initialises and draws a segment
// from a redis-server that listens on a TLS port only, requires client
// certificates, and has the default user off and one ACL user, and checks
// each refusal.
func TestStoreRedisTLS(t *testing.T) {
	cs := certs.New(t)
	r := redistest.StartTLS(t, cs, "idgen-app", "s3cret-redis")
	pw := writeSecret(t, "redis-password", r.Password)
	wrong := writeSecret(t, "wrong-password", "not-it")
	// url builds rediss://USER@addr/0 with the good options, then kv.
	mk := func(scheme, user string, kv ...string) string {
		q := setQuery(url.Values{"tls_ca": {cs.CA.CertFile}, "tls_cert": {cs.Client.CertFile}, "tls_key": {cs.Client.KeyFile},
			"password_file": {pw}}, kv...)
		return scheme + "://" + user + r.Addr + "/0?" + q.Encode()
	}
	good := mk("rediss", "idgen-app@")
	worksOnBothPaths(t, "rediss:// as idgen-app", good)
	out, errs, code := run("gen", "-s", "segment?dsn="+url.QueryEscape(good)+"&tag=tls", "-n", "3")
	if code != 0 || strings.Join(strings.Fields(out), " ") != "1 2 3" {
		t.Fatalf("gen -s segment over rediss://: exit %d, %q, %s; want 1 2 3", code, out, errs)
	}
	if _, errs, code := run("ticket", "init", "--dsn", good, "--name", "tls"); code != 0 {
		t.Fatalf("ticket init over rediss://: exit %d, %s", code, errs)
	}
	out, errs, code = run("gen", "-s", "ticket?dsn="+url.QueryEscape(good)+"&name=tls", "-n", "2")
	if code != 0 || len(strings.Fields(out)) != 2 {
		t.Fatalf("gen -s ticket over rediss://: exit %d, %q, %s", code, out, errs)
	}
	cases := bothPaths([]refusal{
		{"no client certificate", []string{mk("rediss", "idgen-app@", "tls_cert", "", "tls_key", "")}, 1, "the server may want a client certificate"},
		{"server of a wrong CA", []string{mk("rediss", "idgen-app@", "tls_ca", cs.WrongCA.CertFile)}, 1, "certificate signed by unknown authority"},
		{"client of a wrong CA", []string{mk("rediss", "idgen-app@", "tls_cert", cs.WrongClient.CertFile, "tls_key", cs.WrongClient.KeyFile)}, 1, "is it signed by a CA the server trusts?"},
		{"expired client certificate", []string{mk("rediss", "idgen-app@", "tls_cert", cs.Expired.CertFile, "tls_key", cs.Expired.KeyFile)}, 1, "the client certificate expired at"},
		{"wrong password", []string{mk("rediss", "idgen-app@", "password_file", wrong)}, 1, "WRONGPASS"},
		{"default user (off)", []string{mk("rediss", "", "password_file", "")}, 1, "NOAUTH"},
		{"plaintext to the TLS port", []string{mk("redis", "idgen-app@", "tls_ca", "", "tls_cert", "", "tls_key", "")}, 1, r.Addr},
		{"tls_ca without rediss://", []string{mk("redis", "idgen-app@")}, 2, "need rediss://"},
		{"CA file missing", []string{mk("rediss", "idgen-app@", "tls_ca", "/nonexistent/ca.pem")}, 2, "tls_ca: tls: unusable certificate files: open /nonexistent/ca.pem"},
		{"certificate without key", []string{mk("rediss", "idgen-app@", "tls_key", "")}, 2, "tls_cert and tls_key go together"},
		{"password in URL and file", []string{mk("rediss", "idgen-app:"+r.Password+"@")}, 2, "give one"},
	})
	checkRefusals(t, cases, r.Password, "not-it")
}

// TestWorkerSourceZKDigest leases a worker ID from ZooKeeper as a digest
// user (the ACL itself is TestZKDigestACL's in workerid) and checks the
// refusals of the URL.
func TestWorkerSourceZKDigest(t *testing.T) {
	addr := zktest.Shared(t)
	path := fmt.Sprintf("/idgen-acl-%d", time.Now().UnixNano()) // the package's ZooKeeper: a path of its own
	pw := writeSecret(t, "zk-password", "s3cret-zk")
	wrong := writeSecret(t, "wrong-password", "not-it")
	src := func(user, query string) string { return "zk://" + user + addr + path + "?ttl=5s&" + query }
	if out, errs, code := run(genWorker(src("idgen@", "password_file="+pw))...); code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("zk:// as digest user idgen: exit %d, %q, %s", code, out, errs)
	}
	checkRefusals(t, []refusal{
		{"wrong password", genWorker(src("idgen@", "password_file="+wrong)), 1, "zk: not authenticated"},
		{"no credentials", genWorker(src("", "")), 1, "zk: not authenticated"},
		{"password in the URL", genWorker(src("idgen:s3cret-zk@", "")), 2, "give password_file=PATH"},
		{"user without password_file", genWorker(src("idgen@", "")), 2, "needs both user@ and password_file=PATH"},
		{"password_file without user", genWorker(src("", "password_file="+pw)), 2, "needs both user@ and password_file=PATH"},
		{"tls key", genWorker(src("idgen@", "password_file="+pw+"&tls_ca="+pw)), 2, "zk:// takes no tls_ keys"},
	}, "s3cret-zk", "not-it")
}

// serverFiles copies the CA and the server's certificate and key to a new
// directory that user (the account a throwaway server runs as) owns, the
// key mode 0600 (PostgreSQL refuses a key others can read), and returns
// the copies' paths. Running as another user (not root), the copies stay
// this process's.
func serverFiles(t *testing.T, cs *certs.Set, user string) (ca, cert, key string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "idgen-server-certs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid := -1, -1
	if u, err := osuser.Lookup(user); err == nil && os.Geteuid() == 0 {
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	var out [3]string
	for i, src := range []string{cs.CA.CertFile, cs.Server.CertFile, cs.Server.KeyFile} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(out[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
		if uid >= 0 {
			if err := os.Chown(out[i], uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out[0], out[1], out[2]
}

// TestStorePostgresTLS leases a worker ID and initialises a segment on a
// throwaway PostgreSQL with ssl=on that admits user idgen over TCP only
// with TLS, a client certificate of the CA (clientcert=verify-full: its
// common name must be the user) and a SCRAM password; the client verifies
// the server (sslmode=verify-full, sslrootcert) and reads its password
// from a passfile. Then each refusal.
func TestStorePostgresTLS(t *testing.T) {
	bin := testenv.PostgresBin(t)
	testenv.OwnTempDir(t)
	cs := certs.New(t)
	ca, cert, key := serverFiles(t, cs, "postgres")
	port := etcdtest.FreePort(t)
	pg, err := throwaway.StartPostgres(context.Background(), throwaway.PostgresConfig{BinDir: bin, SharedBuffers: "16MB",
		Settings: []string{"listen_addresses = '127.0.0.1'", fmt.Sprintf("port = %d", port), "ssl = on",
			"ssl_ca_file = '" + ca + "'", "ssl_cert_file = '" + cert + "'", "ssl_key_file = '" + key + "'"},
		HBA: []string{"hostssl all idgen 127.0.0.1/32 scram-sha-256 clientcert=verify-full", "host all all 127.0.0.1/32 reject"}})
	if err != nil {
		t.Fatalf("throwaway PostgreSQL with ssl=on: %v", err)
	}
	t.Cleanup(func() { pg.Stop() })
	admin, err := pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", pg.Dir(), port))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE ROLE idgen LOGIN PASSWORD 's3cret-pg'", "CREATE DATABASE idgen OWNER idgen"} {
		if _, err := admin.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	admin.Close(context.Background())
	passfile := writeSecret(t, "pgpass", fmt.Sprintf("127.0.0.1:%d:idgen:idgen:s3cret-pg", port))
	wrongPass := writeSecret(t, "pgpass-wrong", fmt.Sprintf("127.0.0.1:%d:idgen:idgen:not-it", port))
	dsn := func(user string, kv ...string) string {
		q := setQuery(url.Values{"sslmode": {"verify-full"}, "sslrootcert": {cs.CA.CertFile}, "sslcert": {cs.Client.CertFile},
			"sslkey": {cs.Client.KeyFile}, "passfile": {passfile}}, kv...)
		return fmt.Sprintf("postgres://%s127.0.0.1:%d/idgen?%s", user, port, q.Encode())
	}
	good := dsn("idgen@")
	worksOnBothPaths(t, "PostgreSQL over verify-full TLS", good)
	cases := bothPaths([]refusal{
		{"no client certificate", []string{dsn("idgen@", "sslcert", "", "sslkey", "")}, 1, "connection requires a valid client certificate"},
		{"server of a wrong CA", []string{dsn("idgen@", "sslrootcert", cs.WrongCA.CertFile)}, 1, "certificate signed by unknown authority"},
		// The server names its CA in the handshake: Go's client sends no
		// certificate of another CA, and the server finds none.
		{"client of a wrong CA", []string{dsn("idgen@", "sslcert", cs.WrongClient.CertFile, "sslkey", cs.WrongClient.KeyFile)}, 1, "connection requires a valid client certificate"},
		{"expired client certificate", []string{dsn("idgen@", "sslcert", cs.Expired.CertFile, "sslkey", cs.Expired.KeyFile)}, 1, "the client certificate expired at"},
		{"wrong password", []string{dsn("idgen@", "passfile", wrongPass)}, 1, `password authentication failed for user "idgen"`},
		{"wrong password in the URL", []string{dsn("idgen:not-it@", "passfile", "")}, 1, `password authentication failed for user "idgen"`},
		{"plaintext", []string{dsn("idgen@", "sslmode", "disable")}, 1, "rejects connection"},
		{"CA file missing", []string{dsn("idgen@", "sslrootcert", "/nonexistent/ca.pem")}, 2, "/nonexistent/ca.pem"},
	})
	checkRefusals(t, cases, "s3cret-pg", "not-it")
}

// TestStoreMariaDBTLS leases a worker ID and initialises a segment on a
// throwaway MariaDB with --ssl-cert, --ssl-ca and
// --require-secure-transport, as a user created REQUIRE X509 with a
// password; the client verifies the server by tls_ca and its name, and
// reads its password from password_file. Then each refusal.
func TestStoreMariaDBTLS(t *testing.T) {
	testenv.OwnTempDir(t)
	cs := certs.New(t)
	ca, cert, key := serverFiles(t, cs, "mysql")
	port := etcdtest.FreePort(t)
	m, err := throwaway.StartMariaDB(context.Background(), throwaway.MariaDBConfig{BufferPool: "8MB",
		Args: []string{"--skip-networking=0", "--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port),
			"--ssl-ca=" + ca, "--ssl-cert=" + cert, "--ssl-key=" + key, "--require-secure-transport=ON"}})
	if err != nil {
		if testenv.CI() {
			t.Fatalf("throwaway MariaDB with --ssl-cert under CI=true: %v", err)
		}
		t.Skipf("throwaway MariaDB: %v", err)
	}
	t.Cleanup(func() { m.Stop() })
	conn, err := mysql.NewConnector(m.Config())
	if err != nil {
		t.Fatal(err)
	}
	admin := sql.OpenDB(conn)
	for _, q := range []string{"CREATE USER 'idgen'@'%' IDENTIFIED BY 's3cret-my' REQUIRE X509",
		"CREATE DATABASE idgen", "GRANT ALL ON idgen.* TO 'idgen'@'%'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	admin.Close()
	pw := writeSecret(t, "mysql-password", "s3cret-my")
	wrong := writeSecret(t, "wrong-password", "not-it")
	dsn := func(user string, kv ...string) string {
		q := setQuery(url.Values{"tls_ca": {cs.CA.CertFile}, "tls_cert": {cs.Client.CertFile}, "tls_key": {cs.Client.KeyFile},
			"password_file": {pw}}, kv...)
		return fmt.Sprintf("mysql://%s127.0.0.1:%d/idgen?%s", user, port, q.Encode())
	}
	good := dsn("idgen@")
	worksOnBothPaths(t, "MariaDB over verified TLS", good)
	checkRefusals(t, bothPaths([]refusal{
		{"no client certificate", []string{dsn("idgen@", "tls_cert", "", "tls_key", "")}, 1, "Access denied for user 'idgen'"},
		{"server of a wrong CA", []string{dsn("idgen@", "tls_ca", cs.WrongCA.CertFile)}, 1, "certificate signed by unknown authority"},
		{"server name not the certificate's", []string{dsn("idgen@", "tls_server_name", "db.example.com")}, 1, "not db.example.com"},
		{"client of a wrong CA", []string{dsn("idgen@", "tls_cert", cs.WrongClient.CertFile, "tls_key", cs.WrongClient.KeyFile)}, 1, "is it signed by a CA the server trusts?"},
		{"expired client certificate", []string{dsn("idgen@", "tls_cert", cs.Expired.CertFile, "tls_key", cs.Expired.KeyFile)}, 1, "the client certificate expired at"},
		{"wrong password", []string{dsn("idgen@", "password_file", wrong)}, 1, "Access denied for user 'idgen'"},
		{"wrong password in the URL", []string{dsn("idgen:not-it@", "password_file", "")}, 1, "Access denied for user 'idgen'"},
		{"plaintext", []string{dsn("idgen@", "tls_ca", "", "tls_cert", "", "tls_key", "")}, 1, "Access denied for user 'idgen'"},
		{"tls= beside tls_ca", []string{dsn("idgen@", "tls", "true")}, 2, "tls= and tls_ca/tls_cert/tls_server_name both set TLS"},
		{"CA file missing", []string{dsn("idgen@", "tls_ca", "/nonexistent/ca.pem")}, 2, "tls_ca: tls: unusable certificate files: open /nonexistent/ca.pem"},
		{"password in URL and file", []string{dsn("idgen:s3cret-my@")}, 2, "give one"},
	}), "s3cret-my", "not-it")
}

// worksOnBothPaths leases a worker ID from the store at u (a URL with a
// query) and initialises segment tag "tls" in it.
func worksOnBothPaths(t *testing.T, what, u string) {
	t.Helper()
	if out, errs, code := run(genWorker(u + "&ttl=5s")...); code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("worker source on %s: exit %d, %q, %s", what, code, out, errs)
	}
	if _, errs, code := run("segment", "init", "--dsn", u, "--tag", "tls"); code != 0 {
		t.Fatalf("segment init on %s: exit %d, %s", what, code, errs)
	}
}

// bothPaths makes of each case, whose args are one store URL, two: the
// URL as a worker source (gen --worker-source) and as a segment store
// (segment init --dsn).
func bothPaths(in []refusal) []refusal {
	var out []refusal
	for _, src := range []struct {
		what string
		args func(string) []string
	}{
		{"worker source", func(u string) []string { return genWorker(u) }},
		{"segment", func(u string) []string { return []string{"segment", "init", "--dsn", u, "--tag", "tls2"} }},
	} {
		for _, c := range in {
			c.name = src.what + ": " + c.name
			c.args = src.args(c.args[0])
			out = append(out, c)
		}
	}
	return out
}

// setQuery sets q's key=value pairs of kv ("" deletes the key) and
// returns q.
func setQuery(q url.Values, kv ...string) url.Values {
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			q.Del(kv[i])
		} else {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}
