package strategies_test

import (
	"context"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/strategies"
)

// The adapters that put a time in their IDs read it from their Clock.
func TestAdaptersReadTheirClock(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.UTC)
	tests := []struct {
		name string
		unit time.Duration // the resolution of the ID's time
		gen  func(idgen.Clock) idgen.Generator
	}{
		{"ulid", time.Millisecond, func(c idgen.Clock) idgen.Generator { g := strategies.NewULID(); g.Clock = c; return g }},
		{"ksuid", time.Second, func(c idgen.Clock) idgen.Generator { g := strategies.NewKSUID(true); g.Clock = c; return g }},
		{"ksuid-random", time.Second, func(c idgen.Clock) idgen.Generator { g := strategies.NewKSUID(false); g.Clock = c; return g }},
		{"xid", time.Second, func(c idgen.Clock) idgen.Generator { g := strategies.NewXID(-1); g.Clock = c; return g }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := idgentest.NewClock(t0)
			g := tt.gen(clk)
			for _, step := range []time.Duration{0, time.Hour, 24 * time.Hour} {
				clk.Add(step)
				id, err := g.Next(context.Background())
				if err != nil {
					t.Fatalf("Next() = %v", err)
				}
				if got, want := id.Time(), clk.Now().Truncate(tt.unit); !got.Equal(want) {
					t.Fatalf("Next() at %v: Time() = %v; want %v", clk.Now(), got, want)
				}
			}
		})
	}
}
