package migrate_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/migrate"
)

// lineWriter calls f with each line written to it.
type lineWriter func(string)

func (f lineWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f(l)
	}
	return len(b), nil
}

// latency is one application insert: when it started, how long it took.
type latency struct {
	at   time.Time
	took time.Duration
}

func p99(ls []latency, from, to time.Time) (time.Duration, int) {
	var d []time.Duration
	for _, l := range ls {
		if !l.at.Before(from) && l.at.Before(to) {
			d = append(d, l.took)
		}
	}
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)*99/100], len(d)
}

// TestMeasure migrates a table of IDGEN_MIGRATE_MEASURE rows (e.g.
// 1000000) with a child of a fifth as many, 5 times (run, revert,
// finish), while an application inserts a parent and a child every 10 ms
// throughout. It reports lost rows, foreign-key violations, the insert p99
// before and during the backfill, and the swap transaction's time. Opt-in:
// it takes minutes.
func TestMeasure(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("IDGEN_MIGRATE_MEASURE"))
	if rows <= 0 {
		t.Skip("set IDGEN_MIGRATE_MEASURE=1000000 to measure")
	}
	conn, name := schema(t)
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	exec(t, conn,
		"CREATE TABLE parent (id bigserial PRIMARY KEY, name text, created_at timestamptz NOT NULL DEFAULT clock_timestamp())",
		fmt.Sprintf("INSERT INTO parent (name, created_at) SELECT 'p' || i, now() - interval '1 day' + i * interval '1 ms' FROM generate_series(1, %d) i", rows),
		"CREATE TABLE child (id bigserial PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent (id))",
		"CREATE INDEX ON child (parent_id)",
		"INSERT INTO child (parent_id) SELECT id FROM parent WHERE id % 5 = 0",
		"ANALYZE parent, child")
	children := count(t, conn, "SELECT count(*) FROM child")

	app := connect(t, dsn, name)
	var (
		mu      sync.Mutex
		lats    []latency
		ok      int64
		appErrs []error
	)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			start := time.Now()
			err := pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, "WITH p AS (INSERT INTO parent (name) VALUES ('live') RETURNING id) INSERT INTO child (parent_id) SELECT id FROM p")
				return err
			})
			mu.Lock()
			if err != nil {
				appErrs = append(appErrs, err)
			} else {
				ok++
				lats = append(lats, latency{start, time.Since(start)})
			}
			mu.Unlock()
		}
	}()
	time.Sleep(5 * time.Second)

	swapRE := regexp.MustCompile(`swapped .* in (\S+)$`)
	var swaps, reverts []time.Duration
	var worst float64
	first := time.Now() // inserts before it: the baseline
	for run := 1; run <= 5; run++ {
		start := time.Now()
		var backfillEnd time.Time
		log := lineWriter(func(l string) {
			if strings.HasPrefix(l, "phase index") {
				backfillEnd = time.Now()
			}
			if m := swapRE.FindStringSubmatch(l); m != nil {
				d, _ := time.ParseDuration(m[1])
				swaps = append(swaps, d)
			}
		})
		runConn := connect(t, dsn, name)
		if _, err := migrate.Run(ctx, runConn, migrate.Options{Table: "parent", To: "snowflake", TimeColumn: "created_at", Log: msgLog(log)}); err != nil {
			t.Fatalf("run %d: Run = %v", run, err)
		}
		r, err := migrate.Verify(ctx, conn, "parent")
		if err != nil || !r.OK() {
			t.Fatalf("run %d: Verify = %+v, %v", run, r, err)
		}
		mu.Lock()
		before, nb := p99(lats, time.Time{}, first)
		during, nd := p99(lats, start, backfillEnd)
		mu.Unlock()
		if before > 0 {
			worst = max(worst, float64(during)/float64(before))
		}
		t.Logf("run %d: backfill %v; insert p99 before %v (%d inserts), during the backfill %v (%d inserts); swap %v",
			run, backfillEnd.Sub(start).Round(time.Millisecond), before, nb, during, nd, swaps[len(swaps)-1])
		took, err := migrate.Revert(ctx, runConn, "parent")
		if err != nil {
			t.Fatalf("run %d: Revert = %v", run, err)
		}
		reverts = append(reverts, took)
		if err := migrate.Discard(ctx, runConn, "parent"); err != nil {
			t.Fatalf("run %d: Discard after Revert = %v", run, err)
		}
	}
	close(stop)
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	if len(appErrs) > 0 {
		t.Errorf("%d application inserts failed, the first: %v", len(appErrs), appErrs[0])
	}
	lost := int64(rows) + ok - count(t, conn, "SELECT count(*) FROM parent")
	lostChildren := children + ok - count(t, conn, "SELECT count(*) FROM child")
	orphans := count(t, conn, "SELECT count(*) FROM child c LEFT JOIN parent p ON p.id = c.parent_id WHERE p.id IS NULL")
	slices.Sort(swaps)
	slices.Sort(reverts)
	t.Logf("%d rows, %d application inserts: lost parents %d, lost children %d, orphans %d; worst insert p99 during/before %.2fx; swap %v; revert %v",
		rows, ok, lost, lostChildren, orphans, worst, swaps, reverts)
	if lost != 0 || lostChildren != 0 || orphans != 0 {
		t.Errorf("lost %d parents, %d children, %d orphans; want 0", lost, lostChildren, orphans)
	}
	if worst > 2 {
		t.Errorf("insert p99 during the backfill is %.2fx that before; want at most 2x", worst)
	}
	if swaps[len(swaps)-1] > 200*time.Millisecond {
		t.Errorf("slowest swap %v; want at most 200ms", swaps[len(swaps)-1])
	}
}

// msgLog returns a Logger writing each record's message, one per line,
// to w: the lines Options.Log gives the idgen command.
func msgLog(w io.Writer) *slog.Logger { return slog.New(msgHandler{w}) }

type msgHandler struct{ w io.Writer }

func (h msgHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h msgHandler) Handle(_ context.Context, r slog.Record) error {
	_, err := io.WriteString(h.w, r.Message+"\n")
	return err
}
func (h msgHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h msgHandler) WithGroup(string) slog.Handler      { return h }
