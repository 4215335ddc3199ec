package snowflake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen/snowflake"
)

// frozenClock never advances, and does not sleep.
type frozenClock struct{ t time.Time }

func (c frozenClock) Now() time.Time { return c.t }

// TestClockStall: a clock that stays on one reading for StallTicks ticks
// while IDs are asked for counts one stall; a clock that advances counts
// none.
func TestClockStall(t *testing.T) {
	tests := []struct {
		name  string
		clock snowflake.Clock
		want  uint64
	}{
		{"frozen", frozenClock{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}, 1},
		{"system", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustNew(t, snowflake.Config{Layout: twitter(t), Clock: tt.clock})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			for ctx.Err() == nil {
				if _, err := g.Next(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Next() = %v", err)
				}
			}
			if got := g.Stats().ClockStalls; got != tt.want {
				t.Fatalf("Stats().ClockStalls after 300ms of Next = %d; want %d", got, tt.want)
			}
		})
	}
}
