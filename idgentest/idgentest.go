// Package idgentest is a conformance suite that any idgen.Generator can be
// run through, in the manner of testing/slogtest:
//
//	func TestConformance(t *testing.T) {
//		g, _ := mypkg.New(...)
//		idgentest.Run(t, g, idgentest.Options{})
//	}
//
// It checks uniqueness across 8 goroutines × 100,000 IDs, strictly
// increasing order within each goroutine for time-ordered schemes, the
// Batcher capability when present, and the round trips Parse(String()),
// MarshalText/UnmarshalText, JSON and FromBytes(Bytes()).
package idgentest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/idgenkit/idgen"
)

// Options tune the suite. The zero value runs everything at full size.
type Options struct {
	// Goroutines issuing at once. Zero means 8.
	Goroutines int
	// PerGoroutine is how many IDs each goroutine takes. Zero means 100,000.
	PerGoroutine int
	// Probabilistic skips the uniqueness check, for schemes whose uniqueness
	// is only probable (Simpleflake's 22 random bits).
	Probabilistic bool
	// Unordered skips the order check for a time-ordered scheme that is
	// only k-sorted, not increasing, within one goroutine.
	Unordered bool
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, g idgen.Generator, o Options) {
	t.Helper()
	if o.Goroutines == 0 {
		o.Goroutines = 8
	}
	if o.PerGoroutine == 0 {
		o.PerGoroutine = 100_000
	}
	s := g.Scheme()
	if s == nil || s.Size < 1 || s.Size > idgen.MaxSize || s.Codec == nil || s.Name == "" || s.Column == "" {
		t.Fatalf("Scheme() = %+v: want a name, size 1-%d, a column and a codec", s, idgen.MaxSize)
	}
	ordered := s.TimeOrdered && !o.Unordered
	t.Run("Concurrent", func(t *testing.T) {
		ids := issue(t, g, o.Goroutines, o.PerGoroutine, ordered)
		if !o.Probabilistic {
			unique(t, ids)
		}
	})
	if _, ok := g.(idgen.Batcher); ok {
		t.Run("Batcher", func(t *testing.T) {
			dst := make([]idgen.ID, 10_000)
			n, err := idgen.NextN(context.Background(), g, dst)
			if err != nil || n != len(dst) {
				t.Fatalf("NextN(%d) = %d, %v; want %d, nil", len(dst), n, err, len(dst))
			}
			if ordered {
				for i := 1; i < n; i++ {
					if dst[i-1].Compare(dst[i]) >= 0 {
						t.Fatalf("NextN: ID %d %s not above ID %d %s", i, dst[i], i-1, dst[i-1])
					}
				}
			}
			if !o.Probabilistic {
				unique(t, [][]idgen.ID{dst})
			}
		})
	}
	t.Run("RoundTrip", func(t *testing.T) {
		for range 100 {
			id, err := g.Next(context.Background())
			if err != nil {
				t.Fatalf("Next() error: %v", err)
			}
			RoundTrip(t, id)
		}
	})
}

// issue takes per IDs on each of n goroutines and checks each goroutine's
// IDs increase when ordered.
func issue(t *testing.T, g idgen.Generator, n, per int, ordered bool) [][]idgen.ID {
	t.Helper()
	ids := make([][]idgen.ID, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			out := make([]idgen.ID, per)
			for i := range out {
				id, err := g.Next(context.Background())
				if err != nil {
					errs[w] = err
					return
				}
				out[i] = id
			}
			ids[w] = out
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("goroutine %d: Next() error: %v", w, err)
		}
	}
	if ordered {
		for w, out := range ids {
			for i := 1; i < len(out); i++ {
				if out[i-1].Compare(out[i]) >= 0 {
					t.Fatalf("goroutine %d: ID %d %s not above ID %d %s", w, i, out[i], i-1, out[i-1])
				}
			}
		}
	}
	return ids
}

func unique(t *testing.T, ids [][]idgen.ID) {
	t.Helper()
	total := 0
	for _, out := range ids {
		total += len(out)
	}
	seen := make(map[idgen.ID]struct{}, total)
	for _, out := range ids {
		for _, id := range out {
			if _, dup := seen[id]; dup {
				t.Fatalf("duplicate ID %s among %d", id, total)
			}
			seen[id] = struct{}{}
		}
	}
}

// RoundTrip checks that id survives every encoding exactly: Parse(String()),
// MarshalText/UnmarshalText, MarshalJSON/UnmarshalJSON (a JSON string, or a
// number for 8-byte schemes) and FromBytes(Bytes()).
func RoundTrip(t testing.TB, id idgen.ID) {
	t.Helper()
	s := id.Scheme()
	text := id.String()
	if got, err := s.Parse(text); err != nil || got != id {
		t.Fatalf("Parse(%q) = %v, %v; want %v", text, got, err, id)
	}
	mt, err := id.MarshalText()
	if err != nil || string(mt) != text {
		t.Fatalf("MarshalText() = %q, %v; want %q", mt, err, text)
	}
	back := s.Zero()
	if err := back.UnmarshalText(mt); err != nil || back != id {
		t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", mt, back, err, id)
	}
	js, err := json.Marshal(id)
	if err != nil || string(js) != `"`+text+`"` {
		t.Fatalf("json.Marshal(%v) = %s, %v; want a JSON string", id, js, err)
	}
	back = s.Zero()
	if err := json.Unmarshal(js, &back); err != nil || back != id {
		t.Fatalf("json.Unmarshal(%s) = %v, %v; want %v", js, back, err, id)
	}
	if s.Size == 8 {
		back = s.Zero()
		if err := json.Unmarshal([]byte(text), &back); err != nil || back != id {
			t.Fatalf("json.Unmarshal(%s) as a number = %v, %v; want %v", text, back, err, id)
		}
	}
	if got, err := s.FromBytes(id.Bytes()); err != nil || got != id {
		t.Fatalf("FromBytes(Bytes()) = %v, %v; want %v", got, err, id)
	}
	if len(id.Bytes()) != s.Size {
		t.Fatalf("len(Bytes()) = %d; want %d", len(id.Bytes()), s.Size)
	}
}
