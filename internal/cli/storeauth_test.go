package cli_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/testenv/certs"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
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
