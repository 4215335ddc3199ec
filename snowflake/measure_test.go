package snowflake_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// memSeqMark is an in-memory ClockSeqStore.
type memSeqMark struct {
	mu   sync.Mutex
	mark time.Time
	cs   uint64
}

func (m *memSeqMark) Load(ctx context.Context) (time.Time, error) {
	t, _, err := m.LoadClockSeq(ctx)
	return t, err
}

func (m *memSeqMark) Store(ctx context.Context, t time.Time) error {
	return m.StoreClockSeq(ctx, t, 0)
}

func (m *memSeqMark) LoadClockSeq(context.Context) (time.Time, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark, m.cs, nil
}

func (m *memSeqMark) StoreClockSeq(_ context.Context, t time.Time, cs uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark, m.cs = t, cs
	return nil
}

// availability is one policy's result over the simulated minute.
type availability struct {
	calls, ok, dups int
	bumps           uint64
	maxAhead        time.Duration
	slept           time.Duration
}

// simulate runs 60 simulated seconds on an injected clock: one Next call
// per millisecond, 20 back-steps of 1 ms to 5 s (log-uniform, at random
// times) and two restarts (at 20 s and 40 s, each behind the clock by
// another such step), with a high-water mark (in memory). The same seed gives every
// policy the same faults.
func simulate(t *testing.T, policy snowflake.Policy) availability {
	t.Helper()
	l, err := snowflake.ParseLayout("time:41,clockseq:4,worker:6,sequence:12")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, 60))
	step := func() time.Duration { // 1 ms to 5 s, log-uniform
		return time.Duration(math.Exp(math.Log(1e6) + rng.Float64()*(math.Log(5e9)-math.Log(1e6))))
	}
	backAt := map[int]time.Duration{}
	for len(backAt) < 20 {
		backAt[1+rng.IntN(59_999)] = step()
	}
	restartAt := map[int]time.Duration{20_000: step(), 40_000: step()}

	hw := &memSeqMark{}
	clk := idgentest.NewClock(t0)
	cfg := snowflake.Config{Layout: l, Clock: clk, Rollback: policy, HighWater: hw}
	g := mustNew(t, cfg)
	var r availability
	seen := map[idgen.ID]bool{}
	for ms := range 60_000 {
		if d, ok := restartAt[ms]; ok {
			r.bumps += g.Stats().Bumps
			clk.Add(-d)
			g = mustNew(t, cfg)
		}
		if d, ok := backAt[ms]; ok {
			clk.Add(-d)
		}
		r.calls++
		if id, err := g.Next(context.Background()); err == nil {
			r.ok++
			if seen[id] {
				r.dups++
			}
			seen[id] = true
			r.maxAhead = max(r.maxAhead, g.ClockAhead())
		}
		clk.Add(time.Millisecond)
	}
	r.bumps += g.Stats().Bumps
	r.slept = clk.Slept()
	return r
}

// TestRollbackAvailability measures, per policy, the share of Next calls
// that succeed through clock back-steps and restarts behind the mark, and
// the duplicates (none under any policy). The README's table is its log.
func TestRollbackAvailability(t *testing.T) {
	if testing.Short() {
		t.Skip("60 simulated seconds per policy")
	}
	var table strings.Builder
	table.WriteString("| policy | Next calls that succeed | duplicates | clock waited | most ahead of the clock | bumps |\n")
	for _, policy := range []snowflake.Policy{snowflake.Fail, snowflake.WaitThenFail, snowflake.Wait, snowflake.Hold, snowflake.Bump} {
		r := simulate(t, policy)
		if r.dups != 0 {
			t.Errorf("%s: %d duplicate IDs; want 0", policy, r.dups)
		}
		fmt.Fprintf(&table, "| `%s` | %.2f %% | %d | %v | %v | %d |\n", policy, 100*float64(r.ok)/float64(r.calls), r.dups, r.slept.Round(time.Millisecond), r.maxAhead.Round(time.Millisecond), r.bumps)
		if (policy == snowflake.Hold || policy == snowflake.Bump || policy == snowflake.Wait) && r.ok != r.calls {
			t.Errorf("%s: %d of %d Next calls succeeded; want all", policy, r.ok, r.calls)
		}
	}
	t.Logf("60,000 Next calls per policy:\n%s", table.String())
}
