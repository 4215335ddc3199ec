// Package idgentest is a conformance suite that any idgen.Generator can be
// run through, in the manner of testing/slogtest: Run takes a constructor
// and builds a fresh generator for each subtest, so that no check depends
// on what another left behind.
//
//	func TestConformance(t *testing.T) {
//		idgentest.Run(t, func(t *testing.T) idgen.Generator {
//			g, err := mypkg.New(...)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return g
//		}, idgentest.Options{})
//	}
//
// # The contract it checks
//
// Concurrency: Next and NextN are safe for concurrent use. IDs are unique
// across 8 goroutines × 100,000 IDs (Options.Goroutines, PerGoroutine;
// Options.Probabilistic for schemes unique only in probability), and
// strictly increasing within each goroutine for a time-ordered scheme
// (Options.Unordered for one only k-sorted). NextN fills dst in increasing
// order and returns n < len(dst) only with an error.
//
// Round trips: Parse(String()), MarshalText/UnmarshalText, JSON and
// FromBytes(Bytes()) give back an ID == to the one issued.
//
// Context: a generator that can block (a full sequence, a clock rollback
// under a waiting policy, a store round trip) honours ctx while it does.
// One whose Next never blocks may ignore ctx: under a cancelled ctx, Next
// and NextN either issue as usual or fail with an error wrapping
// context.Canceled, NextN having written fewer IDs than asked; either way
// what was issued is whole and unique, and the generator issues again
// under a live ctx.
//
// Close: a generator that holds anything (a store, a goroutine, a worker
// ID lease) is an io.Closer, and every generator strategies.New returns is
// one. Close returns nil; after it, Next and NextN return an error
// wrapping idgen.ErrClosed (NextN writing nothing); a second Close returns
// nil, or the error Options.CloseAgain names. For a generator that is not
// an io.Closer the Close subtest is skipped, saying so.
package idgentest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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
	// CloseAgain is the documented error that a second Close of a generator
	// that is an io.Closer returns, matched with errors.Is. Nil means Close
	// is idempotent: the second call returns nil too.
	CloseAgain error
	// NextN is how many IDs the NextN subtest takes in one call. Zero
	// means 10,000; a generator that pays a store round trip per ID (a
	// Flickr ticket server on MySQL: one commit each) takes fewer.
	NextN int
}

// Run runs the suite as subtests of t. newGenerator builds a fresh
// generator for each subtest, as slogtest.Run's newHandler does: it is
// given the subtest's t, fails it (t.Fatal) when it cannot build, and
// registers there the cleanup of what it opened besides the generator. Run
// closes each generator that is an io.Closer at the end of its subtest
// (and checks that Close returns nil).
//
// The subtests: Concurrent (uniqueness and per-goroutine order), NextN
// (idgen.NextN: one step on a Batcher, Next calls otherwise), RoundTrip,
// Cancelled and Close.
func Run(t *testing.T, newGenerator func(t *testing.T) idgen.Generator, o Options) {
	t.Helper()
	if o.Goroutines == 0 {
		o.Goroutines = 8
	}
	if o.PerGoroutine == 0 {
		o.PerGoroutine = 100_000
	}
	t.Run("Concurrent", func(t *testing.T) {
		g, ordered := build(t, newGenerator, o, true)
		ids := issue(t, g, o.Goroutines, o.PerGoroutine, ordered)
		if !o.Probabilistic {
			unique(t, ids)
		}
	})
	t.Run("NextN", func(t *testing.T) {
		g, ordered := build(t, newGenerator, o, true)
		size := o.NextN
		if size == 0 {
			size = 10_000
		}
		dst := make([]idgen.ID, size)
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
	t.Run("RoundTrip", func(t *testing.T) {
		g, _ := build(t, newGenerator, o, true)
		for range 100 {
			id, err := g.Next(context.Background())
			if err != nil {
				t.Fatalf("Next() error: %v", err)
			}
			RoundTrip(t, id)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		g, _ := build(t, newGenerator, o, true)
		cancelled(t, g, o)
	})
	t.Run("Close", func(t *testing.T) {
		g, _ := build(t, newGenerator, o, false)
		c, ok := g.(io.Closer)
		if !ok {
			t.Skipf("%T is not an io.Closer: nothing to close (every generator strategies.New returns is one)", g)
		}
		if _, err := g.Next(context.Background()); err != nil {
			t.Fatalf("Next() before Close: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close() = %v; want nil", err)
		}
		err := c.Close()
		switch {
		case o.CloseAgain == nil && err != nil:
			t.Fatalf("second Close() = %v; want nil (Close idempotent)", err)
		case o.CloseAgain != nil && !errors.Is(err, o.CloseAgain):
			t.Fatalf("second Close() = %v; want %v", err, o.CloseAgain)
		}
		closed(t, g)
	})
}

// closed checks that Next and NextN of a closed generator return
// idgen.ErrClosed and issue nothing.
func closed(t *testing.T, g idgen.Generator) {
	t.Helper()
	if id, err := g.Next(context.Background()); !errors.Is(err, idgen.ErrClosed) {
		t.Fatalf("Next() after Close = %v, %v; want an error wrapping idgen.ErrClosed", id, err)
	}
	dst := make([]idgen.ID, 10)
	if n, err := idgen.NextN(context.Background(), g, dst); n != 0 || !errors.Is(err, idgen.ErrClosed) {
		t.Fatalf("NextN(%d) after Close = %d, %v; want 0 and an error wrapping idgen.ErrClosed", len(dst), n, err)
	}
}

// build makes a generator, checks its Scheme and, with closeAtEnd, closes
// it (if an io.Closer) when t ends. It reports whether the subtest checks
// order.
func build(t *testing.T, newGenerator func(t *testing.T) idgen.Generator, o Options, closeAtEnd bool) (idgen.Generator, bool) {
	t.Helper()
	g := newGenerator(t)
	if g == nil {
		t.Fatalf("newGenerator returned nil")
	}
	if c, ok := g.(io.Closer); ok && closeAtEnd {
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close() = %v; want nil", err)
			}
		})
	}
	s := g.Scheme()
	if s == nil || s.Size < 1 || s.Size > idgen.MaxSize || s.Codec == nil || s.Name == "" || s.Column == "" {
		t.Fatalf("Scheme() = %+v: want a name, size 1-%d, a column and a codec", s, idgen.MaxSize)
	}
	return g, s.TimeOrdered && !o.Unordered
}

// cancelled checks Next and NextN under a cancelled context: each either
// issues as usual (a generator that does not block need not look at ctx)
// or fails with an error wrapping context.Canceled, NextN having written
// fewer IDs than asked; an ID issued is whole (RoundTrip) and unique, and
// the generator issues again under a live context.
func cancelled(t *testing.T, g idgen.Generator, o Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got []idgen.ID
	id, err := g.Next(ctx)
	switch {
	case err == nil:
		RoundTrip(t, id)
		got = append(got, id)
	case !errors.Is(err, context.Canceled):
		t.Fatalf("Next(cancelled ctx) = %v, %v; want an ID, or an error wrapping context.Canceled", id, err)
	}
	dst := make([]idgen.ID, 100)
	n, err := idgen.NextN(ctx, g, dst)
	switch {
	case n < 0 || n > len(dst):
		t.Fatalf("NextN(cancelled ctx, %d) = %d, %v; want 0 to %d", len(dst), n, err, len(dst))
	case err == nil && n != len(dst):
		t.Fatalf("NextN(cancelled ctx, %d) = %d, nil; want %d IDs, or an error", len(dst), n, len(dst))
	case err != nil && (n == len(dst) || !errors.Is(err, context.Canceled)):
		t.Fatalf("NextN(cancelled ctx, %d) = %d, %v; want %d, nil or fewer with an error wrapping context.Canceled", len(dst), n, err, len(dst))
	}
	for _, id := range dst[:n] {
		RoundTrip(t, id)
	}
	got = append(got, dst[:n]...)
	id, err = g.Next(context.Background())
	if err != nil {
		t.Fatalf("Next() after calls under a cancelled ctx: %v", err)
	}
	got = append(got, id)
	if !o.Probabilistic {
		unique(t, [][]idgen.ID{got})
	}
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
// MarshalText/UnmarshalText, MarshalJSON/UnmarshalJSON (a JSON string; for
// 8-byte schemes a bare JSON number too, up to 2^53, and above it the
// idgen.ErrOutOfRange refusal) and FromBytes(Bytes()).
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
	if v, _ := id.Uint64(); s.Size == 8 {
		// A bare JSON number is taken up to 2^53 only: above, a JavaScript
		// client may have rounded it.
		back = s.Zero()
		err := json.Unmarshal([]byte(text), &back)
		switch {
		case v <= idgen.MaxJSONNumber && (err != nil || back != id):
			t.Fatalf("json.Unmarshal(%s) as a number = %v, %v; want %v", text, back, err, id)
		case v > idgen.MaxJSONNumber && (!errors.Is(err, idgen.ErrOutOfRange) || back != s.Zero()):
			t.Fatalf("json.Unmarshal(%s) as a number = %v, %v; want idgen.ErrOutOfRange (above 2^53), the ID unchanged", text, back, err)
		}
	}
	if got, err := s.FromBytes(id.Bytes()); err != nil || got != id {
		t.Fatalf("FromBytes(Bytes()) = %v, %v; want %v", got, err, id)
	}
	if len(id.Bytes()) != s.Size {
		t.Fatalf("len(Bytes()) = %d; want %d", len(id.Bytes()), s.Size)
	}
}
