package cli_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/testenv"
)

// TestServeAddrTakenTwice: a listener flag that takes another's port is
// named, with the flag whose port it takes, before anything listens
// (before, the second to listen failed and named its own flag: --addr for
// a --grpc-addr on --addr's port).
func TestServeAddrTakenTwice(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "127.0.0.1:24001", "--grpc-addr", "localhost:24001"},
			`idgen: serve: --grpc-addr "localhost:24001" takes the port of --addr "127.0.0.1:24001": give each listener its own port` + "\n"},
		{[]string{"--addr", "127.0.0.1:24001", "--metrics-addr", "127.0.0.1:24001"},
			`idgen: serve: --metrics-addr "127.0.0.1:24001" takes the port of --addr "127.0.0.1:24001": give each listener its own port` + "\n"},
		{[]string{"--addr", "127.0.0.1:24001", "--grpc-addr", "127.0.0.1:24002", "--metrics-addr", "[::1]:24002"},
			`idgen: serve: --metrics-addr "[::1]:24002" takes the port of --grpc-addr "127.0.0.1:24002": give each listener its own port` + "\n"},
		{[]string{"--addr", "0.0.0.0:24001", "--insecure", "--grpc-addr", "127.0.0.1:24001"},
			`idgen: serve: --grpc-addr "127.0.0.1:24001" takes the port of --addr "0.0.0.0:24001": give each listener its own port` + "\n"},
	} {
		args := append([]string{"serve", "-s", "uuidv7"}, tt.args...)
		if _, errs, code := run(args...); code != 2 || errs != tt.want {
			t.Errorf("idgen %v = exit %d, %q; want exit 2, %q", args, code, errs, tt.want)
		}
	}
}

// TestLongBizTagCut: an over-long biz tag is quoted cut to 64 bytes, with
// its length (before, a 300-byte tag was echoed whole).
func TestLongBizTagCut(t *testing.T) {
	tag := strings.Repeat("t", 300)
	_, errs, code := run("gen", "-s", "segment?dsn=redis%3A%2F%2F127.0.0.1%3A1%2F0&tag="+tag)
	want := `idgen: segment: invalid config: biz tag "` + tag[:64] + `…" (300 bytes): want 1 to 128 bytes` + "\n"
	if code != 2 || errs != want {
		t.Errorf("gen -s segment?tag=<300 bytes> = exit %d, %q; want exit 2, %q", code, errs, want)
	}
}

// TestWorkerSourceBadKey: a worker source given a key it does not take
// names the key and the keys of its kind alone, in under 300 bytes, 330
// for a 5,000-byte key, quoted in the URL and alone (before, env?x=1 was an
// unknown source, listing every kind, and etcd's and zk's unknown keys
// named no allowed key).
func TestWorkerSourceBadKey(t *testing.T) {
	const pre = `idgen: strategies: invalid spec: workerid: invalid configuration: worker_source `
	long := strings.Repeat("k", 5000)
	for _, tt := range []struct{ source, want string }{
		{"etcd://127.0.0.1:1?tls_cax=ca.pem", `"etcd://127.0.0.1:1?tls_cax=ca.pem": unknown key "tls_cax": etcd:// takes namespace, ttl, workers, worker_id, state_file, password_file, tls, tls_ca, tls_cert, tls_key, tls_server_name`},
		{"zk://127.0.0.1:1?nod=a:1", `"zk://127.0.0.1:1?nod=a:1": unknown key "nod": zk:// takes node, namespace, ttl, workers, worker_id, state_file, password_file`},
		{"env?ttl=30s", `"env?ttl=30s": unknown key "ttl": env takes no keys`},
		{"static:1?worker_id=1", `"static:1?worker_id=1": unknown key "worker_id": static:N takes no keys`},
		{"ordinal:2?x", `"ordinal:2?x": unknown key "x": ordinal[:offset] takes no keys`},
		{"ip:10?x=1", `"ip:10?x=1": unknown key "x": ip[:bits] takes no keys`},
		{"hostname-hash?accept=true", `"hostname-hash?accept=true": unknown key "accept": hostname-hash takes accept_collisions=true`},
		{"etcd://127.0.0.1:1?" + long + "=1", `"etcd://127.0.0.1:1?` + long[:45] + `…": unknown key "` + long[:32] + `…": etcd:// takes namespace, ttl, workers, worker_id, state_file, password_file, tls, tls_ca, tls_cert, tls_key, tls_server_name`},
	} {
		_, errs, code := run("gen", "--worker-source", tt.source)
		limit := 300
		if len(tt.source) > 1000 {
			limit = 330
		}
		if want := pre + tt.want + "\n"; code != 2 || errs != want || len(errs) >= limit {
			t.Errorf("gen --worker-source %s = exit %d, %q (%d bytes); want exit 2, %q, under %d bytes", echoCut(tt.source), code, errs, len(errs), want, limit)
		}
	}
}

func echoCut(s string) string { return s[:min(len(s), 64)] }

// TestServeConfigFileErrors: serve's config-file errors say "config file
// PATH[:LINE]" (before: "--config: strategies: reading config: open PATH:
// ..." and "--config: PATH: strategies: invalid spec: yaml: line 2: ..."),
// and two generators without a default key name the file and the key to
// add (before: httpapi's default generator "default" is not among a, b).
func TestServeConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ file, text, want string }{
		{"syntax.yaml", "generators:\n  a: [uuidv7\n", `:1: invalid YAML: did not find expected ',' or ']'`}, // the line yaml.v3 gives
		{"two.yaml", "generators:\n  a: uuidv7\n  b: ulid\n",
			`: 2 generators (a, b) and no default key; add one naming the generator to use when none is named, e.g. default: a`},
		{"alias.yaml", "generators:\n  a: &s uuidv7\n  b: *s\n", `:3: YAML alias *s: aliases and anchors are not supported; write the value out`},
		{"none.yaml", "", `: cannot read it: no such file or directory`},
	} {
		path := filepath.Join(dir, tt.file)
		if tt.text != "" {
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, errs, code := run("serve", "--config", path, "--addr", "127.0.0.1:0")
		if want := "idgen: serve: config file " + path + tt.want + "\n"; code != 2 || errs != want {
			t.Errorf("serve --config %s = exit %d, %q; want exit 2, %q", tt.file, code, errs, want)
		}
	}
}

// TestTicketLabel: ticket errors say "ticket:", not "segment:" (before:
// "segment: invalid config: ticket name ...", "segment: invalid DSN",
// "segment: no ticket server can issue").
func TestTicketLabel(t *testing.T) {
	const down1, down2 = "redis://127.0.0.1:1/0", "redis://127.0.0.1:2/0"
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ticket", "init", "--dsn", down1, "--name", "bad name!"}, 2,
			`idgen: ticket: invalid config: name "bad name!": want letters, digits and _, starting with a letter, at most 63`},
		{[]string{"ticket", "init", "--dsn", "foo://x"}, 2,
			`idgen: ticket: invalid DSN: "foo://x": scheme "foo" is not one of postgres, postgresql, mysql, redis, rediss`},
		{[]string{"ticket", "init", "--dsn", down1 + "," + down1}, 2,
			`idgen: ticket: invalid config: server "redis://127.0.0.1:1/0" is listed twice (#1 and #2): list each server once`},
		{[]string{"ticket", "init", "--dsn", down1 + "," + down2}, 1,
			"idgen: ticket: cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused; cannot connect to Redis at 127.0.0.1:2 (database 0): connection refused; every server must answer to be set up"},
		{[]string{"gen", "-s", "ticket?dsn=" + down1 + "," + down2}, 1,
			"idgen: ticket: no server can issue: cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused; cannot connect to Redis at 127.0.0.1:2 (database 0): connection refused"},
	} {
		if _, errs, code := run(tt.args...); code != tt.code || errs != tt.want+"\n" {
			t.Errorf("idgen %v = exit %d, %q; want exit %d, %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
}

// TestTicketNewNameServerDown: a ticket name no server has a class for,
// with one server down, names the server that is down and says the class
// comes once every server answers (before, it told to run ticket init
// --reset, which needs every server up too).
func TestTicketNewNameServerDown(t *testing.T) {
	up := testenv.RedisURL(t)
	name := fmt.Sprintf("msgs_new_%d", time.Now().UnixNano())
	_, errs, code := run("gen", "-s", "ticket?dsn="+url.QueryEscape(up)+",redis://127.0.0.1:1/0&name="+name)
	want := "idgen: ticket: no server can issue: cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused; " +
		redact.Spec(up) + " gets its ticket class once every listed server answers\n"
	if code != 1 || errs != want || strings.Contains(errs, "--reset") {
		t.Errorf("gen -s ticket (new name, one server down) = exit %d, %q; want exit 1, %q", code, errs, want)
	}
}
