package cli_test

import (
	"strings"
	"testing"
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
