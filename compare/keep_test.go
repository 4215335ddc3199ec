package compare_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/jackc/pgx/v5"
)

// TestRunKeepStartHint runs with Keep on a throwaway cluster, then starts
// the kept cluster with the command its note gives, as this process's
// user: as root, a plain pg_ctl refuses to run.
func TestRunKeepStartHint(t *testing.T) {
	t.Parallel() // a throwaway cluster of its own
	needBinaries(t)
	needStrategies(t, "uuidv4")
	ctx := context.Background()
	// One round and 20 reads of each kind: the note and the kept cluster
	// do not depend on either count; 3 rounds of the default 1,000 reads
	// took 7 s more.
	rep, err := compare.Run(ctx, compare.Config{Rows: 1000, Writers: 1, Batch: 500, Runs: 1, ReadOps: 20, SharedBuffers: "16MB", Strategies: []string{"uuidv4"}, Keep: true})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var dir, cmd string
	for _, n := range rep.Notes {
		if d, rest, ok := strings.Cut(strings.TrimPrefix(n, "cluster kept in "), "; start it with: "); ok && d != n {
			dir = d
			cmd, _, _ = strings.Cut(rest, "; ")
		}
	}
	if dir == "" {
		t.Fatalf("notes %q; want \"cluster kept in DIR; start it with: COMMAND\"", rep.Notes)
	}
	defer os.RemoveAll(dir)
	root := os.Geteuid() == 0
	if !strings.Contains(cmd, "pg_ctl -D "+dir+"/data -l "+dir+"/postgres.log start") ||
		root != (strings.HasPrefix(cmd, "runuser -u postgres -- ") || strings.HasPrefix(cmd, "su postgres -c ")) {
		t.Errorf("start command %q; want pg_ctl -D %s/data -l %s/postgres.log start, run as postgres only when root (root %v)", cmd, dir, dir, root)
	}
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q = %v: %s", cmd, err, out)
	}
	defer exec.Command("sh", "-c", strings.Replace(cmd, " start", " -m immediate -w stop", 1)).Run()
	conn, err := pgx.Connect(ctx, "host="+dir+" user=postgres dbname=postgres sslmode=disable")
	if err != nil {
		t.Fatalf("connect after %q: %v", cmd, err)
	}
	conn.Close(ctx)
}
