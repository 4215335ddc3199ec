package snowflake_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

type snowflakeField = idgen.Field

func nodeField(name string, v uint64) idgen.Field { return idgen.Field{Name: name, Value: v} }

var t0 = time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC)

func twitter(t testing.TB) snowflake.Layout {
	l, err := snowflake.Preset("twitter")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustNew(t testing.TB, cfg snowflake.Config) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New(%+v) error: %v", cfg, err)
	}
	return g
}

func next(t testing.TB, g *snowflake.Generator) idgen.ID {
	t.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatalf("Next() error: %v", err)
	}
	return id
}

func TestConformance(t *testing.T) {
	for _, preset := range []string{"default", "twitter", "sonyflake", "region"} {
		t.Run(preset, func(t *testing.T) {
			l, _ := snowflake.Preset(preset)
			o := idgentest.Options{}
			if preset == "sonyflake" {
				o.PerGoroutine = 2_000 // 25,600 IDs/s per machine
			}
			idgentest.Run(t, func(t *testing.T) idgen.Generator { return mustNew(t, snowflake.Config{Layout: l}) }, o)
		})
	}
	t.Run("simpleflake", func(t *testing.T) {
		l, _ := snowflake.Preset("simpleflake")
		idgentest.Run(t, func(t *testing.T) idgen.Generator { return mustNew(t, snowflake.Config{Layout: l}) }, idgentest.Options{Probabilistic: true, Unordered: true, PerGoroutine: 1000})
	})
}

func TestNodeFieldsDecoded(t *testing.T) {
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Nodes: map[string]int64{"datacenter": 4, "worker": 18}, Clock: idgentest.NewClock(t0)})
	for i := range 10 {
		id := next(t, g)
		p, err := g.Decompose(id)
		if err != nil {
			t.Fatal(err)
		}
		dc, _ := p.Node("datacenter")
		w, _ := p.Node("worker")
		if dc != 4 || w != 18 || p.Sequence != uint64(i) || !p.Time.Equal(t0) {
			t.Fatalf("Decompose(%s) = dc %d worker %d seq %d time %v; want 4, 18, %d, %v", id, dc, w, p.Sequence, p.Time, i, t0)
		}
		if !id.Time().Equal(t0) {
			t.Fatalf("Time() = %v; want %v", id.Time(), t0)
		}
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  snowflake.Config
		want string
		is   error
	}{
		{"worker too big", snowflake.Config{Layout: twitter(t), Nodes: map[string]int64{"worker": 32}}, "worker 32 outside [0, 31] (5 bits)", idgen.ErrOutOfRange},
		{"negative datacenter", snowflake.Config{Layout: twitter(t), Nodes: map[string]int64{"datacenter": -1}}, "datacenter -1 outside [0, 31]", idgen.ErrOutOfRange},
		{"field not in layout", snowflake.Config{Layout: twitter(t), Nodes: map[string]int64{"shard": 1}}, `no node field "shard"; it has datacenter, worker`, nil},
		{"65 bits", snowflake.Config{Layout: snowflake.Layout{Fields: []snowflake.LayoutField{{Name: "time", Bits: 60}, {Name: "sequence", Bits: 5}}, Unsigned: true}}, "65 bits exceed 64", snowflake.ErrInvalidLayout},
		{"negative max wait", snowflake.Config{MaxWait: -time.Millisecond}, "max wait -1ms must not be negative", nil},
		{"unknown policy", snowflake.Config{Rollback: 9}, "unknown rollback policy 9", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := snowflake.New(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("New() = %v, %v; want error containing %q (is %v)", g, err, tt.want, tt.is)
			}
		})
	}
}

// TestRollback steps the clock back under every policy. No ID is ever
// issued twice; fail fails at once, wait always waits, and wait-then-fail
// waits up to MaxWait (10 ms) and fails beyond.
func TestRollback(t *testing.T) {
	steps := []time.Duration{time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond, 10 * time.Second}
	for _, policy := range []snowflake.Policy{snowflake.Fail, snowflake.Wait, snowflake.WaitThenFail} {
		for _, step := range steps {
			t.Run(fmt.Sprintf("%s/%v", policy, step), func(t *testing.T) {
				clk := idgentest.NewClock(t0)
				g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: policy})
				seen := map[idgen.ID]bool{}
				var last idgen.ID
				take := func() error {
					id, err := g.Next(context.Background())
					if err != nil {
						return err
					}
					if seen[id] {
						t.Fatalf("duplicate ID %s after a %v step back", id, step)
					}
					if last.Scheme() != nil && id.Compare(last) <= 0 {
						t.Fatalf("ID %s not above the last %s", id, last)
					}
					seen[id], last = true, id
					return nil
				}
				for range 100 {
					if err := take(); err != nil {
						t.Fatal(err)
					}
				}
				clk.Add(step)
				for range 100 {
					if err := take(); err != nil {
						t.Fatal(err)
					}
				}
				clk.Add(-step)
				err := take()
				shouldWait := policy == snowflake.Wait || (policy == snowflake.WaitThenFail && step <= snowflake.DefaultMaxWait)
				if shouldWait {
					if err != nil {
						t.Fatalf("Next() after a %v step back under %s: %v; want a wait, then an ID", step, policy, err)
					}
					if got := clk.Slept(); got != step {
						t.Errorf("slept %v; want %v", got, step)
					}
					if got := g.ClockRollbackWaits(); got != 1 {
						t.Errorf("ClockRollbackWaits() = %d; want 1", got)
					}
					return
				}
				if got := g.ClockRollbackFailures(); got != 1 {
					t.Errorf("ClockRollbackFailures() = %d; want 1", got)
				}
				var rb *idgen.ClockRollbackError
				if !errors.As(err, &rb) || !errors.Is(err, idgen.ErrClockRollback) {
					t.Fatalf("Next() error = %v; want *idgen.ClockRollbackError", err)
				}
				if rb.Drift != step {
					t.Errorf("Drift = %v; want %v", rb.Drift, step)
				}
				if clk.Slept() != 0 {
					t.Errorf("slept %v before failing; want no wait", clk.Slept())
				}
				// Once the clock catches up, IDs flow again, above the old ones.
				clk.Add(step)
				if err := take(); err != nil {
					t.Fatalf("Next() after the clock caught up: %v", err)
				}
			})
		}
	}
}

// TestRollbackWaitHonoursContext: under wait, a canceled context ends the wait.
func TestRollbackWaitHonoursContext(t *testing.T) {
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: snowflake.Wait})
	next(t, g)
	clk.Add(-time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Next(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, idgen.ErrClockRollback) {
		t.Fatalf("Next(canceled) error = %v; want context.Canceled and ErrClockRollback", err)
	}
}

// TestRollbackRealClock waits out a rollback in real time when the clock is
// not a Sleeper.
func TestRollbackRealClock(t *testing.T) {
	clk := &steppedClock{offset: 0}
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: snowflake.WaitThenFail})
	a := next(t, g)
	clk.offset = -3 * time.Millisecond
	b := next(t, g)
	if b.Compare(a) <= 0 {
		t.Fatalf("ID %s after waiting out a 3 ms rollback is not above %s", b, a)
	}
}

type steppedClock struct{ offset time.Duration }

func (c *steppedClock) Now() time.Time { return time.Now().Add(c.offset) }

// TestRestartBehindHighWater restarts a generator whose clock stepped back
// behind the persisted mark: it applies its policy, never reissues.
func TestRestartBehindHighWater(t *testing.T) {
	for _, policy := range []snowflake.Policy{snowflake.Fail, snowflake.Wait, snowflake.WaitThenFail} {
		for _, step := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond, 10 * time.Second} {
			t.Run(fmt.Sprintf("%s/%v", policy, step), func(t *testing.T) {
				hw := snowflake.FileHighWater{Path: filepath.Join(t.TempDir(), "hw")}
				clk := idgentest.NewClock(t0)
				cfg := snowflake.Config{Layout: twitter(t), Clock: clk, Rollback: policy, HighWater: hw, HighWaterAhead: 20 * time.Millisecond}
				g := mustNew(t, cfg)
				seen := map[idgen.ID]bool{}
				var last idgen.ID
				for range 30 {
					for range 50 {
						id := next(t, g)
						seen[id], last = true, id
					}
					clk.Add(time.Millisecond)
				}
				mark, err := hw.Load(context.Background())
				if err != nil || !mark.After(last.Time()) {
					t.Fatalf("mark %v, %v; want after the last ID's time %v", mark, err, last.Time())
				}
				// Restart with the clock behind the last ID by step.
				clk2 := idgentest.NewClock(last.Time().Add(-step))
				cfg.Clock = clk2
				g2 := mustNew(t, cfg)
				id, err := g2.Next(context.Background())
				drift := mark.Sub(clk2.Now())
				shouldWait := policy == snowflake.Wait || (policy == snowflake.WaitThenFail && drift <= snowflake.DefaultMaxWait)
				if !shouldWait {
					if !errors.Is(err, idgen.ErrClockRollback) {
						t.Fatalf("Next() after restart %v behind = %v, %v; want ErrClockRollback", step, id, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Next() after restart %v behind: %v; want a wait", step, err)
				}
				if seen[id] || id.Compare(last) <= 0 {
					t.Fatalf("ID %s after restart is not above the last before it, %s", id, last)
				}
			})
		}
	}
}

func TestSequenceExhaustionWaitsForNextTick(t *testing.T) {
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk})
	for i := range 4096 {
		p, _ := g.Decompose(next(t, g))
		if p.Sequence != uint64(i) || !p.Time.Equal(t0) {
			t.Fatalf("ID %d: sequence %d at %v; want %d at %v", i, p.Sequence, p.Time, i, t0)
		}
	}
	p, _ := g.Decompose(next(t, g))
	if p.Sequence != 0 || !p.Time.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("4097th ID: sequence %d at %v; want 0 at %v", p.Sequence, p.Time, t0.Add(time.Millisecond))
	}
	if clk.Slept() != time.Millisecond {
		t.Errorf("slept %v; want 1ms (to the next tick)", clk.Slept())
	}
	if g.SequenceWaits() != 1 {
		t.Errorf("SequenceWaits() = %d; want 1", g.SequenceWaits())
	}
}

func TestLayoutExhausted(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := snowflake.Layout{Fields: []snowflake.LayoutField{{Name: "time", Bits: 10}, {Name: "sequence", Bits: 12}}, Epoch: epoch}
	clk := idgentest.NewClock(epoch.Add(1023 * time.Millisecond))
	g := mustNew(t, snowflake.Config{Layout: l, Clock: clk})
	id := next(t, g)
	if v, _ := id.Uint64(); v != 1023<<12 {
		t.Fatalf("last tick's ID = %d; want %d", v, 1023<<12)
	}
	clk.Add(time.Millisecond)
	if id, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrLayoutExhausted) {
		t.Fatalf("Next() past the lifetime = %v, %v; want ErrLayoutExhausted", id, err)
	}
	b, _ := snowflake.Preset("baidu")
	gb := mustNew(t, snowflake.Config{Layout: b, Clock: idgentest.NewClock(t0)})
	if _, err := gb.Next(context.Background()); !errors.Is(err, idgen.ErrLayoutExhausted) || !strings.Contains(err.Error(), "2024-11-20T21:24:16Z") {
		t.Fatalf("baidu Next() in 2026 error = %v; want ErrLayoutExhausted ended 2024-11-20T21:24:16Z", err)
	}
}

func TestBeforeEpoch(t *testing.T) {
	g := mustNew(t, snowflake.Config{Clock: idgentest.NewClock(snowflake.DefaultEpoch().Add(-time.Second))})
	if _, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrBeforeEpoch) {
		t.Fatalf("Next() before the epoch error = %v; want ErrBeforeEpoch", err)
	}
}

func TestRandomSequenceStart(t *testing.T) {
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, RandomSequenceStart: true})
	starts := map[uint64]bool{}
	odd := 0
	for range 1000 {
		id := next(t, g)
		p, _ := g.Decompose(id)
		if p.Sequence >= 512 {
			t.Fatalf("random start %d; want < 512 (an eighth of 4096)", p.Sequence)
		}
		starts[p.Sequence] = true
		if v, _ := id.Uint64(); v%2 == 1 {
			odd++
		}
		clk.Add(time.Millisecond)
	}
	if len(starts) < 300 {
		t.Errorf("%d distinct starts in 1000 ticks; want many", len(starts))
	}
	if odd < 400 || odd > 600 {
		t.Errorf("%d odd IDs of 1000 at one ID per tick; want about half", odd)
	}
	plain := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: idgentest.NewClock(t0)})
	if v, _ := next(t, plain).Uint64(); v%2 != 0 {
		t.Errorf("without random start the first ID of a tick is odd")
	}
}

func TestNextNAcrossTicks(t *testing.T) {
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk})
	dst := make([]idgen.ID, 10000)
	n, err := g.NextN(context.Background(), dst)
	if err != nil || n != len(dst) {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	for i := 1; i < n; i++ {
		if dst[i].Compare(dst[i-1]) <= 0 {
			t.Fatalf("NextN: %s not above %s", dst[i], dst[i-1])
		}
	}
	last, _ := g.Decompose(dst[n-1])
	// 10,000 IDs = 4096 + 4096 + 1808: the third tick, sequence 1807.
	if last.Tick != twitterTick(t0)+2 || last.Sequence != 1807 {
		t.Fatalf("last ID tick %d seq %d; want %d, 1807", last.Tick, last.Sequence, twitterTick(t0)+2)
	}
	if id := next(t, g); id.Compare(dst[n-1]) <= 0 {
		t.Fatalf("Next after NextN = %s; want above %s", id, dst[n-1])
	}
}

func twitterTick(t time.Time) int64 {
	return t.Sub(time.UnixMilli(1288834974657)).Milliseconds()
}

func TestCoarseClock(t *testing.T) {
	c := snowflake.NewCoarseClock(nil, time.Millisecond)
	a := c.Now()
	deadline := time.Now().Add(5 * time.Second) // liveness only: a loaded machine may starve the refresher
	for !c.Now().After(a) {
		if time.Now().After(deadline) {
			t.Fatalf("CoarseClock did not advance in 5s from %v", a)
		}
		time.Sleep(time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	idgentest.Run(t, func(t *testing.T) idgen.Generator { return mustNew(t, snowflake.Config{Clock: c}) }, idgentest.Options{Goroutines: 2, PerGoroutine: 5000})
}

// TestUniqueAcrossProcesses runs this test binary as three processes with
// worker IDs 1, 2 and 3, each issuing 20,000 IDs at once.
func TestUniqueAcrossProcesses(t *testing.T) {
	if w := os.Getenv("IDGEN_HELPER_WORKER"); w != "" {
		worker, _ := strconv.ParseInt(w, 10, 64)
		g := mustNew(t, snowflake.Config{Layout: twitter(t), Nodes: map[string]int64{"worker": worker}})
		out := bufio.NewWriter(os.Stdout)
		for range 20000 {
			fmt.Fprintln(out, next(t, g))
		}
		out.Flush()
		return
	}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for w := 1; w <= 3; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUniqueAcrossProcesses$")
		cmd.Env = append(os.Environ(), "IDGEN_HELPER_WORKER="+strconv.Itoa(w))
		var b strings.Builder
		cmd.Stdout = &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &b)
	}
	seen := map[string]bool{}
	l := twitter(t)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i+1, err)
		}
		n := 0
		for line := range strings.Lines(outs[i].String()) {
			line = strings.TrimSpace(line)
			v, err := strconv.ParseUint(line, 10, 64)
			if err != nil {
				continue // the test runner's own lines
			}
			if seen[line] {
				t.Fatalf("duplicate ID %s across processes", line)
			}
			seen[line] = true
			p, _ := l.Decompose(v)
			if w, _ := p.Node("worker"); w != uint64(i+1) {
				t.Fatalf("process %d issued ID %s of worker %d", i+1, line, w)
			}
			n++
		}
		if n != 20000 {
			t.Fatalf("process %d printed %d IDs; want 20000", i+1, n)
		}
	}
}

// TestJS53BelowTwoTo53 issues js53 IDs at the last tick of the layout's
// lifetime, the highest worker and the whole sequence: every one is below
// 2^53, a plain JavaScript number.
func TestJS53BelowTwoTo53(t *testing.T) {
	l, err := snowflake.Preset("js53")
	if err != nil {
		t.Fatal(err)
	}
	last := l.Epoch.Add(time.Duration(1<<41-1) * time.Millisecond)
	g := mustNew(t, snowflake.Config{Layout: l, Nodes: map[string]int64{"worker": 31}, Clock: idgentest.NewClock(last)})
	ids := make([]idgen.ID, 128)
	if n, err := g.NextN(context.Background(), ids); err != nil {
		t.Fatalf("NextN(128) at the last tick = %d, %v", n, err)
	}
	if v, _ := ids[127].Uint64(); v != 1<<53-1 {
		t.Fatalf("last js53 ID = %d; want 2^53-1", v)
	}
	for _, id := range ids {
		if v, _ := id.Uint64(); v >= 1<<53 {
			t.Fatalf("js53 ID %d >= 2^53", v)
		}
	}
	if g.Scheme() != (snowflake.JS53{}).Scheme() {
		t.Fatalf("js53 scheme %p; want snowflake.JS53's", g.Scheme())
	}
}
