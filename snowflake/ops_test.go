package snowflake_test

import (
	"context"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// TestBehindHighWater: BehindHighWater reads the mark of the identity the
// generator took (a worker ID taken over from a node whose clock ran 3 s
// ahead), falls as the clock nears it and is 0 once passed; MaxAhead is
// the policy's bound, 0 for policies that never issue ahead; LayoutEnd is
// the layout's end.
func TestBehindHighWater(t *testing.T) {
	lease := &idgentest.Lease{}
	lease.Set(&idgen.Identity{WorkerID: 1, Generation: 1})
	clk := idgentest.NewClock(t0)
	hw := &memMark{}
	g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: clk, Lease: lease, HighWater: hw, Rollback: snowflake.Hold})
	if behind, mark := g.BehindHighWater(); behind != 0 || !mark.IsZero() {
		t.Errorf("BehindHighWater() with no mark = %v, %v; want 0 and none", behind, mark)
	}
	mark := t0.Add(3 * time.Second)
	hw.Store(context.Background(), mark)
	lease.Set(&idgen.Identity{WorkerID: 2, Generation: 2})
	if err := g.SyncLease(context.Background()); err != nil {
		t.Fatal(err)
	}
	if behind, m := g.BehindHighWater(); behind != 3*time.Second || !m.Equal(mark) {
		t.Errorf("BehindHighWater() under a mark 3s ahead = %v, %v; want 3s, %v", behind, m, mark)
	}
	clk.Add(2 * time.Second)
	if behind, _ := g.BehindHighWater(); behind != time.Second {
		t.Errorf("BehindHighWater() 2s later = %v; want 1s", behind)
	}
	clk.Add(2 * time.Second)
	if behind, m := g.BehindHighWater(); behind != 0 || !m.Equal(mark) {
		t.Errorf("BehindHighWater() past the mark = %v, %v; want 0, %v", behind, m, mark)
	}
	if got := g.MaxAhead(); got != snowflake.DefaultMaxAhead {
		t.Errorf("MaxAhead() under hold = %v; want %v", got, snowflake.DefaultMaxAhead)
	}
	if got := mustNew(t, snowflake.Config{Layout: twitter(t)}).MaxAhead(); got != 0 {
		t.Errorf("MaxAhead() under wait-then-fail = %v; want 0", got)
	}
	if got, want := g.LayoutEnd(), twitter(t).End(); !got.Equal(want) {
		t.Errorf("LayoutEnd() = %v; want %v", got, want)
	}
}
