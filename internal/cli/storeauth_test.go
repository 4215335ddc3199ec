package cli_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/testenv/certs"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
	"github.com/idgenkit/idgen/internal/testenv/redistest"
	"github.com/idgenkit/idgen/internal/testenv/zktest"
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
// that no secret of secrets reaches stdout or stderr.
func checkRefusals(t *testing.T, cases []refusal, secrets ...string) {
	t.Helper()
	for _, c := range cases {
		out, errs, code := run(c.args...)
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
	// with returns good() with key=value pairs set ("" deletes the key).
	with := func(kv ...string) url.Values {
		q := good()
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				q.Del(kv[i])
			} else {
				q.Set(kv[i], kv[i+1])
			}
		}
		return q
	}
	out, errs, code := run(genWorker(src("idgen-worker@", "secure", good()))...)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("etcd over mutual TLS as idgen-worker: exit %d, %q, %s", code, out, errs)
	}
	checkRefusals(t, []refusal{
		{"no client certificate", genWorker(src("idgen-worker@", "secure", with("tls_cert", "", "tls_key", ""))), 1, "the server wants a client certificate"},
		{"server of a wrong CA", genWorker(src("idgen-worker@", "secure", with("tls_ca", cs.WrongCA.CertFile))), 1, "certificate signed by unknown authority"},
		{"client of a wrong CA", genWorker(src("idgen-worker@", "secure", with("tls_cert", cs.WrongClient.CertFile, "tls_key", cs.WrongClient.KeyFile))), 1, "the server refused the client certificate: is it signed by a CA"},
		{"expired client certificate", genWorker(src("idgen-worker@", "secure", with("tls_cert", cs.Expired.CertFile, "tls_key", cs.Expired.KeyFile))), 1, "the client certificate expired at"},
		{"wrong password", genWorker(src("idgen-worker@", "secure", with("password_file", wrong))), 1, "authentication failed"},
		{"certificate alone (no such user)", genWorker(src("", "secure", with("password_file", ""))), 1, "permission denied"},
		{"a namespace outside the role", genWorker(src("idgen-worker@", "other", good())), 1, "permission denied"},
		{"plaintext", genWorker(src("idgen-worker@", "secure", url.Values{"password_file": {pw}})), 1, "etcd"},
		{"CA file missing", genWorker(src("idgen-worker@", "secure", with("tls_ca", "/nonexistent/ca.pem"))), 2, "tls_ca: open /nonexistent/ca.pem"},
		{"CA file not PEM", genWorker(src("idgen-worker@", "secure", with("tls_ca", pw))), 2, "no PEM certificate"},
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
		q := url.Values{"tls_ca": {cs.CA.CertFile}, "tls_cert": {cs.Client.CertFile}, "tls_key": {cs.Client.KeyFile},
			"password_file": {pw}}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				q.Del(kv[i])
			} else {
				q.Set(kv[i], kv[i+1])
			}
		}
		return scheme + "://" + user + r.Addr + "/0?" + q.Encode()
	}
	good := mk("rediss", "idgen-app@")
	if out, errs, code := run(genWorker(good + "&ttl=5s")...); code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("worker source over rediss:// as idgen-app: exit %d, %q, %s", code, out, errs)
	}
	if _, errs, code := run("segment", "init", "--dsn", good, "--tag", "tls"); code != 0 {
		t.Fatalf("segment init over rediss://: exit %d, %s", code, errs)
	}
	out, errs, code := run("gen", "-s", "segment?dsn="+url.QueryEscape(good)+"&tag=tls", "-n", "3")
	if code != 0 || strings.Join(strings.Fields(out), " ") != "1 2 3" {
		t.Fatalf("gen -s segment over rediss://: exit %d, %q, %s; want 1 2 3", code, out, errs)
	}
	var cases []refusal
	for _, src := range []struct {
		what string
		args func(string) []string
	}{
		{"worker source", func(u string) []string { return genWorker(u) }},
		{"segment", func(u string) []string { return []string{"segment", "init", "--dsn", u, "--tag", "tls2"} }},
	} {
		for _, c := range []refusal{
			{"no client certificate", []string{mk("rediss", "idgen-app@", "tls_cert", "", "tls_key", "")}, 1, "the server wants a client certificate"},
			{"server of a wrong CA", []string{mk("rediss", "idgen-app@", "tls_ca", cs.WrongCA.CertFile)}, 1, "certificate signed by unknown authority"},
			{"client of a wrong CA", []string{mk("rediss", "idgen-app@", "tls_cert", cs.WrongClient.CertFile, "tls_key", cs.WrongClient.KeyFile)}, 1, "is it signed by a CA the server trusts?"},
			{"expired client certificate", []string{mk("rediss", "idgen-app@", "tls_cert", cs.Expired.CertFile, "tls_key", cs.Expired.KeyFile)}, 1, "the client certificate expired at"},
			{"wrong password", []string{mk("rediss", "idgen-app@", "password_file", wrong)}, 1, "WRONGPASS"},
			{"default user (off)", []string{mk("rediss", "", "password_file", "")}, 1, "NOAUTH"},
			{"plaintext to the TLS port", []string{mk("redis", "idgen-app@", "tls_ca", "", "tls_cert", "", "tls_key", "")}, 1, r.Addr},
			{"tls_ca without rediss://", []string{mk("redis", "idgen-app@")}, 2, "need rediss://"},
			{"CA file missing", []string{mk("rediss", "idgen-app@", "tls_ca", "/nonexistent/ca.pem")}, 2, "tls_ca: open /nonexistent/ca.pem"},
			{"certificate without key", []string{mk("rediss", "idgen-app@", "tls_key", "")}, 2, "tls_cert and tls_key go together"},
			{"password in URL and file", []string{mk("rediss", "idgen-app:"+r.Password+"@")}, 2, "give one"},
		} {
			c.name = src.what + ": " + c.name
			c.args = src.args(c.args[0])
			cases = append(cases, c)
		}
	}
	checkRefusals(t, cases, r.Password, "not-it")
}

// TestWorkerSourceZKDigest leases a worker ID from ZooKeeper as a digest
// user (the ACL itself is TestZKDigestACL's in workerid) and checks the
// refusals of the URL.
func TestWorkerSourceZKDigest(t *testing.T) {
	addr := zktest.StartT(t)
	pw := writeSecret(t, "zk-password", "s3cret-zk")
	wrong := writeSecret(t, "wrong-password", "not-it")
	src := func(user, query string) string { return "zk://" + user + addr + "/idgen-acl?ttl=5s&" + query }
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
