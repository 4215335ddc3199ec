package strategies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// TestNewAt checks every time-ordered strategy's NewAt: the ID carries t at
// the scheme's resolution, and repeated times give distinct IDs.
func TestNewAt(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	tests := []struct {
		name, spec string
		res        time.Duration
		increasing bool // IDs for one t increase (sequence or monotonic entropy)
	}{
		{name: "snowflake", spec: "snowflake?worker=4", res: time.Millisecond, increasing: true},
		{name: "sonyflake", spec: "sonyflake?machine=4", res: 10 * time.Millisecond, increasing: true},
		{name: "flake128", spec: "flake128?worker=4", res: time.Millisecond, increasing: true},
		{name: "uuidv7", spec: "uuidv7", res: time.Millisecond},
		{name: "uuidv1", spec: "uuidv1", res: 100 * time.Nanosecond},
		{name: "uuidv6", spec: "uuidv6", res: 100 * time.Nanosecond},
		{name: "ulid", spec: "ulid", res: time.Millisecond, increasing: true},
		{name: "ksuid", spec: "ksuid", res: time.Second},
		{name: "xid", spec: "xid", res: time.Second, increasing: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), tc.spec)
			if err != nil {
				t.Fatalf("New(%q) = %v", tc.spec, err)
			}
			ag, ok := g.(idgen.AtGenerator)
			if !ok {
				t.Fatalf("New(%q) = %T: not an idgen.AtGenerator", tc.spec, g)
			}
			seen := map[idgen.ID]bool{}
			var prev idgen.ID
			for i := range 3000 { // past a Sonyflake tick's 256 sequence numbers
				id, err := ag.NewAt(at)
				if err != nil {
					t.Fatalf("NewAt(%v) #%d = %v", at, i, err)
				}
				if id.Scheme() != g.Scheme() {
					t.Fatalf("NewAt(%v).Scheme() = %s; want %s", at, id.Scheme(), g.Scheme())
				}
				if seen[id] {
					t.Fatalf("NewAt(%v) #%d = %s again", at, i, id)
				}
				seen[id] = true
				if tc.increasing && i > 0 && prev.Compare(id) >= 0 {
					t.Fatalf("NewAt(%v) #%d = %s; not above %s", at, i, id, prev)
				}
				prev = id
				// The first tick's IDs carry t; a sequence used up spills
				// into the following ticks, never earlier.
				if got, want := id.Time(), at.Truncate(tc.res); got.Before(want) || i == 0 && !got.Equal(want) {
					t.Fatalf("NewAt(%v) #%d.Time() = %v; want %v", at, i, got, want)
				}
			}
			idgentestRoundTrip(t, prev)
		})
	}
}

func TestNewAtErrors(t *testing.T) {
	tests := []struct {
		name, spec string
		t          time.Time
		want       error
	}{
		{name: "snowflake before epoch", spec: "snowflake", t: time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), want: idgen.ErrBeforeEpoch},
		{name: "snowflake after end", spec: "snowflake", t: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrLayoutExhausted},
		{name: "snowflake far future", spec: "snowflake", t: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrLayoutExhausted},
		{name: "sonyflake before start", spec: "sonyflake", t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrBeforeEpoch},
		{name: "flake128 before 1970", spec: "flake128", t: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrBeforeEpoch},
		{name: "uuidv7 before 1970", spec: "uuidv7", t: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrBeforeEpoch},
		{name: "uuidv1 before 1582", spec: "uuidv1", t: time.Date(1582, 10, 14, 0, 0, 0, 0, time.UTC), want: idgen.ErrBeforeEpoch},
		{name: "uuidv6 after 5236", spec: "uuidv6", t: time.Date(5237, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrLayoutExhausted},
		{name: "ulid after 10889", spec: "ulid", t: time.Date(10890, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrLayoutExhausted},
		{name: "ksuid before 2014", spec: "ksuid", t: time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrBeforeEpoch},
		{name: "ksuid after 2150", spec: "ksuid", t: time.Date(2151, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrLayoutExhausted},
		{name: "xid after 2106", spec: "xid", t: time.Date(2107, 1, 1, 0, 0, 0, 0, time.UTC), want: idgen.ErrLayoutExhausted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			id, err := g.(idgen.AtGenerator).NewAt(tc.t)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%s NewAt(%v) = %v, %v; want %v", tc.spec, tc.t, id, err, tc.want)
			}
		})
	}
}

// TestNewAtBackwards checks that a sequence-based NewAt refuses a time
// behind the last one: the same tick could be issued twice.
func TestNewAtBackwards(t *testing.T) {
	for _, spec := range []string{"snowflake", "sonyflake", "flake128"} {
		t.Run(spec, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			ag := g.(idgen.AtGenerator)
			t1 := time.Date(2026, 5, 1, 0, 0, 1, 0, time.UTC)
			if _, err := ag.NewAt(t1); err != nil {
				t.Fatalf("NewAt(%v) = %v", t1, err)
			}
			_, err = ag.NewAt(t1.Add(-time.Second))
			var rb *idgen.ClockRollbackError
			if !errors.As(err, &rb) || rb.Drift != time.Second {
				t.Fatalf("NewAt(%v) after %v = %v; want *ClockRollbackError with Drift 1s", t1.Add(-time.Second), t1, err)
			}
			if _, err := ag.NewAt(t1); err != nil {
				t.Fatalf("NewAt(%v) again = %v; want nil", t1, err)
			}
		})
	}
}

// TestUUIDv7NewAtSubMillisecondOrder: NewAt keeps the order of times within
// one millisecond (rand_a holds the sub-millisecond fraction).
func TestUUIDv7NewAtSubMillisecondOrder(t *testing.T) {
	g, err := strategies.NewText(context.Background(), "uuidv7")
	if err != nil {
		t.Fatal(err)
	}
	at := g.(idgen.AtGenerator)
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var prev idgen.ID
	for _, ns := range []int{0, 1000, 65535, 65536, 100000, 400000, 999999} {
		id, err := at.NewAt(base.Add(time.Duration(ns)))
		if err != nil {
			t.Fatal(err)
		}
		if prev.Scheme() != nil && id.Compare(prev) <= 0 {
			t.Fatalf("NewAt(+%dns) = %s, not above %s", ns, id, prev)
		}
		prev = id
	}
}
