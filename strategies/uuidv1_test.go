package strategies_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// TestGregorianNewAtOrder issues UUIDv1, UUIDv6 and swapped UUIDv1 keys
// over three hours of simulated time: UUIDv1's bytes jump back at each
// 429.5 s wrap of time_low, while UUIDv6 and the swapped UUIDv1 sort in
// time order.
func TestGregorianNewAtOrder(t *testing.T) {
	start := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	const n, span = 3000, 3 * time.Hour
	v1, v6 := strategies.NewUUIDv1(), strategies.NewUUIDv6()
	var prev1, prev6, prevSw []byte
	drops := 0
	for i := range n {
		at := start.Add(span * time.Duration(i) / n)
		a, err := v1.NewAt(at)
		if err != nil {
			t.Fatalf("uuidv1 NewAt(%v) = %v", at, err)
		}
		b, err := v6.NewAt(at)
		if err != nil {
			t.Fatalf("uuidv6 NewAt(%v) = %v", at, err)
		}
		for _, c := range []struct {
			id      idgen.ID
			version byte
		}{{a, 1}, {b, 6}} {
			if got := c.id.Time(); !got.Equal(at) {
				t.Fatalf("%s NewAt(%v).Time() = %v; want %v", c.id.Scheme(), at, got, at)
			}
			if got := c.id.Bytes()[6] >> 4; got != c.version {
				t.Fatalf("%s NewAt(%v) version = %d; want %d", c.id.Scheme(), at, got, c.version)
			}
			if got := uuid.UUID(c.id.Bytes()).Variant(); got != uuid.RFC4122 {
				t.Fatalf("%s NewAt(%v) variant = %v; want RFC4122", c.id.Scheme(), at, got)
			}
		}
		sw := a.Bytes()
		strategies.SwapUUIDv1(sw)
		if i > 0 {
			if bytes.Compare(prev1, a.Bytes()) > 0 {
				drops++
			}
			if bytes.Compare(prev6, b.Bytes()) >= 0 {
				t.Fatalf("uuidv6 #%d = %s; not above the previous, issued earlier", i, b)
			}
			if bytes.Compare(prevSw, sw) >= 0 {
				t.Fatalf("swapped uuidv1 #%d = %x; not above the previous, issued earlier", i, sw)
			}
		}
		prev1, prev6, prevSw = a.Bytes(), b.Bytes(), sw
	}
	// 3 h / 429.4967296 s: the keys wrap 25 times.
	if want := int(span / (4294967296 * 100 * time.Nanosecond)); drops < want-1 || drops > want+1 {
		t.Errorf("uuidv1 keys fell back %d times over %v; want %d (one per 429.5 s wrap)", drops, span, want)
	}
}

// TestGregorianNext checks the current-time UUIDs against google/uuid's
// own decoding of their timestamps, and their fields.
func TestGregorianNext(t *testing.T) {
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	for _, tc := range []struct {
		spec    string
		version byte
		fields  []string
	}{
		{"uuidv1", 1, []string{"time_low", "time_mid", "ver", "time_high", "var", "clock_seq", "node"}},
		{"uuidv6", 6, []string{"time_high", "time_mid", "ver", "time_low", "var", "clock_seq", "node"}},
	} {
		g, err := strategies.NewText(context.Background(), tc.spec)
		if err != nil {
			t.Fatalf("New(%q) = %v", tc.spec, err)
		}
		seen := map[idgen.ID]bool{}
		var prev idgen.ID
		for i := range 1000 {
			id, err := g.Next(ctx)
			if err != nil {
				t.Fatalf("%s Next = %v", tc.spec, err)
			}
			if seen[id] {
				t.Fatalf("%s Next #%d = %s again", tc.spec, i, id)
			}
			seen[id] = true
			prev = id
		}
		b := prev.Bytes()
		if got := b[6] >> 4; got != tc.version {
			t.Errorf("%s Next version = %d; want %d", tc.spec, got, tc.version)
		}
		if got := prev.Time(); got.Before(before) || got.After(time.Now().Add(time.Second)) {
			t.Errorf("%s Next.Time() = %v; want about now", tc.spec, got)
		}
		if tc.version == 1 {
			sec, nsec := uuid.UUID(b).Time().UnixTime()
			if want := time.Unix(sec, nsec).UTC(); !prev.Time().Equal(want) {
				t.Errorf("uuidv1 Next.Time() = %v; google/uuid decodes %v", prev.Time(), want)
			}
		}
		var names []string
		for _, f := range prev.Scheme().Codec.Decompose(prev.Bytes()) {
			names = append(names, f.Name)
		}
		if got, want := len(names), len(tc.fields); got != want {
			t.Fatalf("%s fields = %q; want %q", tc.spec, names, tc.fields)
		}
		for i := range names {
			if names[i] != tc.fields[i] {
				t.Fatalf("%s fields = %q; want %q", tc.spec, names, tc.fields)
			}
		}
		idgentestRoundTrip(t, prev)
	}
}

// TestSwapUUIDv1 checks the byte order against MySQL's documented
// example: UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db', 1) is
// 0x1026BABA6CCD780C95645B8C656024DB.
func TestSwapUUIDv1(t *testing.T) {
	u := uuid.MustParse("6ccd780c-baba-1026-9564-5b8c656024db")
	b := u[:]
	strategies.SwapUUIDv1(b)
	if got, want := uuid.UUID(b).String(), "1026baba-6ccd-780c-9564-5b8c656024db"; got != want {
		t.Errorf("SwapUUIDv1(6ccd780c-baba-1026-9564-5b8c656024db) = %s; want %s", got, want)
	}
}
