package cli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/testenv/etcdtest"
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

func TestGenWorkerSourceEnv(t *testing.T) {
	t.Setenv("IDGEN_WORKER_ID", "")
	t.Setenv("IDGEN_WORKER_SOURCE", "static:9")
	l, _ := snowflake.Preset("twitter")
	worker := func(args ...string) uint64 {
		t.Helper()
		out, errs, code := run(args...)
		if code != 0 {
			t.Fatalf("%v exit %d: %s", args, code, errs)
		}
		v, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
		if err != nil {
			t.Fatalf("%v printed %q: %v", args, out, err)
		}
		p, _ := l.Decompose(v)
		w, _ := p.Node("worker")
		return w
	}
	if w := worker("gen", "-s", "snowflake?preset=twitter"); w != 9 {
		t.Fatalf("IDGEN_WORKER_SOURCE=static:9: worker %d; want 9", w)
	}
	if w := worker("gen", "-s", "snowflake?preset=twitter", "--worker-source", "static:3"); w != 3 {
		t.Fatalf("--worker-source static:3 beside IDGEN_WORKER_SOURCE: worker %d; want 3 (the flag wins)", w)
	}
	if w := worker("gen", "-s", "snowflake?preset=twitter&worker_source=static:4"); w != 4 {
		t.Fatalf("spec worker_source=static:4 beside IDGEN_WORKER_SOURCE: worker %d; want 4 (the spec wins)", w)
	}
	// A strategy without worker IDs ignores the variable.
	if out, errs, code := run("gen", "-s", "uuidv7"); code != 0 || len(strings.TrimSpace(out)) != 36 {
		t.Fatalf("gen -s uuidv7 with IDGEN_WORKER_SOURCE set: exit %d, %q, %s", code, out, errs)
	}
}

func TestGenSonyflakeWorkerSource(t *testing.T) {
	t.Setenv("IDGEN_WORKER_ID", "")
	out, errs, code := run("gen", "-s", "sonyflake", "--worker-source", "static:777", "-n", "3")
	lines := strings.Fields(out)
	if code != 0 || len(lines) != 3 {
		t.Fatalf("gen -s sonyflake --worker-source static:777: exit %d, stdout %q, stderr %s; want 3 IDs", code, out, errs)
	}
	for _, line := range lines {
		// Sonyflake's default layout: time 39 | sequence 8 | machine 16.
		if v, err := strconv.ParseUint(line, 10, 64); err != nil || v&0xffff != 777 {
			t.Fatalf("gen -s sonyflake --worker-source static:777 printed %q (%v); want machine 777", line, err)
		}
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
		{"unknown source", []string{"gen", "--worker-source", "consul://x"}, 2, `unknown source`},
		{"zk without a port", []string{"gen", "--worker-source", "zk://x"}, 2, `ZooKeeper server "x": want host:port`},
		{"env unset", []string{"gen", "--worker-source", "env"}, 2, "IDGEN_WORKER_ID is not set"},
		{"twice", []string{"gen", "-s", "snowflake?worker_source=static:1", "--worker-source", "static:2"}, 2, "already sets worker_source"},
		{"not leasable", []string{"gen", "-s", "uuidv7", "--worker-source", "static:2"}, 2, `unknown key "worker_source"`},
		{"unreachable", []string{"gen", "--worker-source", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable"}, 1,
			"idgen: cannot connect to PostgreSQL at 127.0.0.1:1 (user postgres, database postgres): connection refused\n"},
		{"serve config", []string{"serve", "--config", filepath.Join(t.TempDir(), "x.yaml"), "--worker-source", "static:1"}, 2, "--worker-source applies to -s"},
		{"serve out of range", []string{"serve", "-s", "snowflake?preset=twitter", "--worker-source", "static:99"}, 2, "outside [0, 31]"},
		{"serve unreachable", []string{"serve", "-s", "snowflake", "--worker-source", "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable"}, 1,
			"cannot connect to PostgreSQL at 127.0.0.1:1 (user postgres, database postgres): connection refused\n"},
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

// TestWorkerIDConflicts checks that gen and serve refuse a worker ID given
// twice, naming both as the user gave them (spec key, flag, variable), and
// that IDGEN_WORKER_ID overrides the spec's worker key: the precedence the
// README and strategies --help state. Before, the worker source won
// silently.
func TestWorkerIDConflicts(t *testing.T) {
	busy := busyAddr(t)
	tests := []struct {
		name   string
		env    map[string]string // IDGEN_WORKER_ID, IDGEN_WORKER_SOURCE
		args   []string
		code   int
		want   string // in stderr
		worker uint64 // issued, when code is 0
	}{
		{name: "worker= and --worker-source", args: []string{"gen", "-s", "snowflake?worker=3", "--worker-source", "static:5"}, code: 2,
			want: `idgen: -s "snowflake?worker=3": worker=3 and --worker-source static:5 both set the worker ID; give one`},
		{name: "worker= and worker_source=", args: []string{"gen", "-s", "snowflake?worker=3&worker_source=static:5"}, code: 2,
			want: "idgen: strategies: invalid spec: snowflake: worker=3 and worker_source=static:5 both set the worker ID; give one"},
		{name: "worker= and $IDGEN_WORKER_SOURCE", env: map[string]string{"IDGEN_WORKER_SOURCE": "static:5"}, args: []string{"gen", "-s", "snowflake?worker=3"}, code: 2,
			want: `idgen: -s "snowflake?worker=3": worker=3 and $IDGEN_WORKER_SOURCE (static:5) both set the worker ID; give one`},
		{name: "sonyflake machine= and --worker-source", args: []string{"gen", "-s", "sonyflake?machine=3", "--worker-source", "static:5"}, code: 2,
			want: `machine=3 and --worker-source static:5 both set the worker ID; give one`},
		{name: "IDGEN_WORKER_ID and --worker-source", env: map[string]string{"IDGEN_WORKER_ID": "7"}, args: []string{"gen", "-s", "snowflake", "--worker-source", "static:5"}, code: 2,
			want: `idgen: -s "snowflake": IDGEN_WORKER_ID=7 and --worker-source static:5 both set the worker ID; give one (--worker-source env reads IDGEN_WORKER_ID)`},
		{name: "serve worker= and --worker-source", args: []string{"serve", "-s", "snowflake?worker=3", "--worker-source", "static:5", "--addr", busy}, code: 2,
			want: `worker=3 and --worker-source static:5 both set the worker ID; give one`},
		{name: "IDGEN_WORKER_ID over worker=", env: map[string]string{"IDGEN_WORKER_ID": "7"}, args: []string{"gen", "-s", "snowflake?worker=3"}, worker: 7},
		{name: "IDGEN_WORKER_ID through --worker-source env", env: map[string]string{"IDGEN_WORKER_ID": "7"}, args: []string{"gen", "-s", "snowflake", "--worker-source", "env"}, worker: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("IDGEN_WORKER_ID", tt.env["IDGEN_WORKER_ID"])
			t.Setenv("IDGEN_WORKER_SOURCE", tt.env["IDGEN_WORKER_SOURCE"])
			out, errs, code := run(tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) || (code != 0) != (out == "") {
				t.Fatalf("%v (env %v) = exit %d, stdout %q, stderr %q; want exit %d, stderr containing %q", tt.args, tt.env, code, out, errs, tt.code, tt.want)
			}
			if code != 0 {
				return
			}
			v, _ := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
			l, _ := snowflake.Preset("default")
			p, _ := l.Decompose(v)
			if w, _ := p.Node("worker"); w != tt.worker {
				t.Fatalf("%v (env %v) issued %d, worker %d; want worker %d", tt.args, tt.env, v, w, tt.worker)
			}
		})
	}
	// strategies --help states the same precedence.
	out, _, _ := run("strategies", "--help")
	for _, want := range []string{"IDGEN_WORKER_ID in the environment overrides the worker key", "is what worker_source=env reads",
		"is refused beside the worker key, and beside IDGEN_WORKER_ID unless it is env"} {
		if !strings.Contains(out, want) {
			t.Errorf("idgen strategies --help lacks %q:\n%s", want, out)
		}
	}
}

// TestGenRestartInsideHighWaterWindow runs `idgen gen` under a PostgreSQL
// or etcd lease with a state file twice in a row. The first run released
// worker ID 0 with its high-water mark ahead (high_water_ahead=1m keeps the
// window open however slow the machine); the second run takes another free
// ID, whose mark has passed, rather than the state file's, and issues at
// once. With one worker ID in the space the second run fails, naming the
// previous holder's mark, not a clock step.
func TestGenRestartInsideHighWaterWindow(t *testing.T) {
	t.Setenv("IDGEN_WORKER_ID", "")
	t.Setenv("IDGEN_WORKER_SOURCE", "")
	l, _ := snowflake.Preset("twitter")
	spec := "snowflake?preset=twitter&datacenter=1&high_water_ahead=1m"
	// Each backend returns the worker source URL of a namespace, with the
	// extra keys (each "&key=value") appended.
	backends := []struct {
		name  string
		setup func(t *testing.T) func(namespace, keys string) string
	}{
		{"postgres", func(t *testing.T) func(string, string) string {
			dsn := testenv.PostgresDSN(t)
			table := fmt.Sprintf("cli_test_workers_%d", time.Now().UnixNano())
			t.Cleanup(func() {
				ctx := context.Background()
				if c, err := pgx.Connect(ctx, dsn); err == nil {
					c.Exec(ctx, `DROP TABLE IF EXISTS `+table)
					c.Close(ctx)
				}
			})
			return func(ns, keys string) string { return dsn + "&table=" + table + "&namespace=" + ns + keys }
		}},
		{"etcd", func(t *testing.T) func(string, string) string {
			e, host, err := etcdtest.Start(t, t.TempDir())
			if err != nil {
				t.Fatalf("etcd process: %v", err)
			}
			t.Cleanup(e.Close)
			return func(ns, keys string) string { return "etcd://" + host + "/" + ns + "?ttl=30s" + keys }
		}},
	}
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			source := bk.setup(t)
			t.Run("another free ID", func(t *testing.T) {
				src := source("free", "&state_file="+filepath.Join(t.TempDir(), "worker-id"))
				var runs [2][]string
				var workers [2]uint64
				for i := range runs {
					out, errs, code := run("gen", "-s", spec, "--worker-source", src, "-n", "100")
					runs[i] = strings.Fields(out)
					if code != 0 || len(runs[i]) != 100 {
						t.Fatalf("run %d: exit %d, %d IDs, stderr %q; want exit 0, 100 IDs", i+1, code, len(runs[i]), errs)
					}
					for _, line := range runs[i] {
						v, err := strconv.ParseUint(line, 10, 64)
						if err != nil {
							t.Fatalf("run %d printed %q: %v", i+1, line, err)
						}
						p, _ := l.Decompose(v)
						w, _ := p.Node("worker")
						workers[i] = w
					}
				}
				if workers[0] != 0 || workers[1] != 1 {
					t.Fatalf("worker IDs of two runs in a row = %d, %d; want 0, then 1 (0's mark is ahead)", workers[0], workers[1])
				}
				seen := map[string]bool{}
				for _, id := range append(runs[0], runs[1]...) {
					if seen[id] {
						t.Fatalf("ID %s issued twice", id)
					}
					seen[id] = true
				}
			})
			t.Run("every mark ahead", func(t *testing.T) {
				src := source("one", "&workers=1")
				if out, errs, code := run("gen", "-s", spec, "--worker-source", src); code != 0 || out == "" {
					t.Fatalf("first run: exit %d, stdout %q, stderr %q; want an ID", code, out, errs)
				}
				out, errs, code := run("gen", "-s", spec, "--worker-source", src)
				want := "idgen: snowflake: worker ID 0: the previous holder's high-water mark is "
				if code != 1 || out != "" || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "ahead of the clock; no ID is issued under worker ID 0 before ") || strings.Contains(errs, "clock moved backwards") {
					t.Fatalf("second run, one worker ID: exit %d, stdout %q, stderr %q; want exit 1, nothing issued, stderr starting %q", code, out, errs, want)
				}
			})
		})
	}
}
