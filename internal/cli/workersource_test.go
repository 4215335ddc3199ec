package cli_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/snowflake"
)

func TestGenWorkerSource(t *testing.T) {
	t.Setenv("IDGEN_WORKER_ID", "")
	out, errs, code := run("gen", "-s", "snowflake?preset=twitter&datacenter=1", "--worker-source", "static:5", "-n", "3")
	if code != 0 {
		t.Fatalf("gen --worker-source static:5 exit %d: %s", code, errs)
	}
	l, _ := snowflake.Preset("twitter")
	for _, line := range strings.Fields(out) {
		v, err := strconv.ParseUint(line, 10, 64)
		if err != nil {
			t.Fatalf("gen printed %q: %v", line, err)
		}
		p, _ := l.Decompose(v)
		w, _ := p.Node("worker")
		dc, _ := p.Node("datacenter")
		if w != 5 || dc != 1 {
			t.Fatalf("ID %d: worker %d datacenter %d; want 5, 1", v, w, dc)
		}
	}
	t.Setenv("IDGEN_WORKER_ID", "7")
	out, errs, code = run("gen", "-s", "snowflake?preset=twitter", "--worker-source", "env")
	if code != 0 {
		t.Fatalf("gen --worker-source env exit %d: %s", code, errs)
	}
	v, _ := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	p, _ := l.Decompose(v)
	if w, _ := p.Node("worker"); w != 7 {
		t.Fatalf("gen --worker-source env with IDGEN_WORKER_ID=7: worker %d; want 7", w)
	}
}

func TestWorkerSourceBadInput(t *testing.T) {
	t.Setenv("IDGEN_WORKER_ID", "")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"out of range", []string{"gen", "-s", "snowflake?preset=twitter", "--worker-source", "static:32"}, 2, "worker ID 32, outside [0, 31]"},
		{"unknown source", []string{"gen", "--worker-source", "zk://x"}, 2, `unknown source`},
		{"env unset", []string{"gen", "--worker-source", "env"}, 2, "IDGEN_WORKER_ID is not set"},
		{"twice", []string{"gen", "-s", "snowflake?worker_source=static:1", "--worker-source", "static:2"}, 2, "already sets worker_source"},
		{"not leasable", []string{"gen", "-s", "uuidv7", "--worker-source", "static:2"}, 2, `unknown key "worker_source"`},
		{"unreachable", []string{"gen", "--worker-source", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable"}, 2, "ID store unavailable"},
		{"serve config", []string{"serve", "--config", filepath.Join(t.TempDir(), "x.yaml"), "--worker-source", "static:1"}, 2, "--worker-source applies to -s"},
		{"serve out of range", []string{"serve", "-s", "snowflake?preset=twitter", "--worker-source", "static:99"}, 2, "outside [0, 31]"},
		{"serve unreachable", []string{"serve", "-s", "snowflake", "--worker-source", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable"}, 1, "ID store unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run(tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) || out != "" {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit %d, nothing issued, stderr containing %q", tt.args, code, out, errs, tt.code, tt.want)
			}
		})
	}
}
