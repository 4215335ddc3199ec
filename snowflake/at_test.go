package snowflake_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// TestNewAtSpill checks that NewAt numbers the IDs of one tick 0, 1, ...
// and, once the tick's sequence is used up, carries on in the next tick.
func TestNewAtSpill(t *testing.T) {
	l, err := snowflake.ParseLayout("time:41,worker:10,sequence:2;tick=1ms;epoch=2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: l, Nodes: map[string]int64{"worker": 5}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 1, 0, 0, 0, 700_000, time.UTC) // inside tick 2678400000
	tick0 := int64(2678400000)
	want := []struct {
		tick int64
		seq  uint64
	}{{tick0, 0}, {tick0, 1}, {tick0, 2}, {tick0, 3}, {tick0 + 1, 0}, {tick0 + 1, 1}}
	for i, w := range want {
		id, err := g.NewAt(at)
		if err != nil {
			t.Fatalf("NewAt #%d = %v", i, err)
		}
		v, _ := id.Uint64()
		p, err := l.Decompose(v)
		if err != nil {
			t.Fatal(err)
		}
		if w2, _ := p.Node("worker"); p.Tick != w.tick || p.Sequence != w.seq || w2 != 5 {
			t.Fatalf("NewAt #%d = tick %d seq %d worker %d; want tick %d seq %d worker 5", i, p.Tick, p.Sequence, w2, w.tick, w.seq)
		}
	}
	// The spilled tick's own time continues its sequence.
	id, err := g.NewAt(at.Add(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := id.Uint64()
	if p, _ := l.Decompose(v); p.Tick != tick0+1 || p.Sequence != 2 {
		t.Fatalf("NewAt(t+1ms) = tick %d seq %d; want tick %d seq 2", p.Tick, p.Sequence, tick0+1)
	}
	// A later tick starts at 0.
	id, _ = g.NewAt(at.Add(time.Hour))
	v, _ = id.Uint64()
	if p, _ := l.Decompose(v); p.Tick != tick0+3_600_000 || p.Sequence != 0 {
		t.Fatalf("NewAt(t+1h) = tick %d seq %d; want tick %d seq 0", p.Tick, p.Sequence, tick0+3_600_000)
	}
	// Going back behind t+1h is refused.
	if _, err := g.NewAt(at); !errors.Is(err, idgen.ErrClockRollback) {
		t.Fatalf("NewAt(t) after t+1h = %v; want ErrClockRollback", err)
	}
}

// TestNewAtRandomLayout checks a layout with a random field and no
// sequence: any number of IDs in one tick.
func TestNewAtRandomLayout(t *testing.T) {
	l, _ := snowflake.Preset("simpleflake")
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: l})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		id, err := g.NewAt(at)
		if err != nil || !id.Time().Equal(at) {
			t.Fatalf("NewAt #%d = %v (time %v), %v; want time %v", i, id, id.Time(), err, at)
		}
	}
}

// TestNewAtPerGenerator checks that each generator keeps its own NewAt
// sequence, and that a dropped generator's does not linger in the way of a
// new one.
func TestNewAtPerGenerator(t *testing.T) {
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		g, err := snowflake.New(context.Background(), snowflake.Config{})
		if err != nil {
			t.Fatal(err)
		}
		id, err := g.NewAt(at)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := id.Uint64()
		if v&0xfff != 0 {
			t.Fatalf("generator %d: first NewAt sequence = %d; want 0", i, v&0xfff)
		}
		runtime.GC()
	}
}
