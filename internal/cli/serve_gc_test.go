package cli_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// serve runs the collector at Go's default target (GOGC=100), not a larger
// one of its own: a larger heap lengthens the tail (at GOGC=400 serve's p99
// was 2.7x the net/http floor's at 4 connections, 1.05x at 100). The GOGC
// environment variable still sets the target; /metrics shows the one in
// force.
func TestServeGOGC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary")
	}
	bin := buildIdgen(t)
	for _, tc := range []struct{ env, want string }{{"", "go_gc_gogc_percent 100\n"}, {"50", "go_gc_gogc_percent 50\n"}} {
		t.Setenv("GOGC", tc.env) // restored at the end
		if tc.env == "" {
			os.Unsetenv("GOGC")
		}
		p := startServe(t, bin, "-s", "snowflake?worker=7", "--addr", "127.0.0.1:0")
		resp, err := http.Get("http://" + p.addr(t, "addr") + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), tc.want) {
			t.Errorf("GOGC=%q: /metrics has no %q", tc.env, strings.TrimSpace(tc.want))
		}
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}
