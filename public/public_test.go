package public_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capitalone/fpe/ff1"
	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/snowflake"
)

const (
	hexKey0 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hexKey1 = "f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff"
)

// counter issues 1, 2, 3, ... as IDs of its scheme.
type counter struct {
	s *idgen.Scheme
	n atomic.Uint64
}

func (c *counter) Scheme() *idgen.Scheme { return c.s }
func (c *counter) Next(context.Context) (idgen.ID, error) {
	v := c.n.Add(1)
	if c.s.Size == 8 {
		return c.s.FromUint64(v), nil
	}
	return c.s.FromWords(v>>8, v<<56|v, 0), nil
}

var uuid128 = &idgen.Scheme{Name: "u128", Size: 16, Column: idgen.ColumnUUID, Codec: enc128{}}

type enc128 struct{ idgen.Uint64Codec }

func (enc128) AppendText(dst, b []byte) []byte { return idgen.AppendUUIDText(dst, b) }
func (enc128) ParseText(b, t []byte) error     { return idgen.ParseUUIDText(b, t) }
func (enc128) Decompose(b []byte) []idgen.Field {
	return []idgen.Field{{Name: "bits", Value: uint64(b[15]), Bits: 128}}
}

func keys(t testing.TB, text string) []public.Key {
	t.Helper()
	k, err := public.ParseKeys("IDGEN_PUBLIC_KEY", text)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestPublicRoundTrip issues 64- and 128-bit public IDs in each fixed-width
// encoding and checks their width, uniqueness, that their order is not the
// issue order, and that each decodes to the inner ID.
func TestPublicRoundTrip(t *testing.T) {
	for _, inner := range []*idgen.Scheme{idgen.Int64Scheme(), uuid128} {
		for _, encName := range []string{"crockford", "crockford-check", "base58", "base62", "base36", "hex"} {
			t.Run(inner.Name+"/"+encName, func(t *testing.T) {
				src := &counter{s: inner}
				g, err := public.New(src, public.Config{Keys: keys(t, hexKey0), Encoding: enc(t, encName)})
				if err != nil {
					t.Fatal(err)
				}
				dst := make([]idgen.ID, 2000)
				if n, err := idgen.NextN(context.Background(), g, dst); n != len(dst) || err != nil {
					t.Fatalf("NextN = %d, %v", n, err)
				}
				width := 1 + enc(t, encName).Width(inner.Size)
				texts := make([]string, len(dst))
				seen := map[string]bool{}
				for i, id := range dst {
					text := id.String()
					texts[i] = text
					if len(text) != width || seen[text] || text[0] != '0' {
						t.Fatalf("ID %d = %q: want %d chars starting with key ID 0, unique", i, text, width)
					}
					seen[text] = true
					back, err := g.Scheme().Parse(text)
					if err != nil || back != id {
						t.Fatalf("Parse(%q) = %v, %v; want %v", text, back, err, id)
					}
					in, ok := public.Inner(back)
					if want := src.s.FromUint64(uint64(i + 1)); inner.Size == 8 && (!ok || in != want) {
						t.Fatalf("Inner(%q) = %v, %v; want %v", text, in, ok, want)
					}
					if f := g.Scheme().Decompose(back); f[0].Name != "key_id" || f[0].Value != 0 || len(f) < 2 {
						t.Fatalf("Decompose(%q) = %v; want key_id 0 then the inner fields", text, f)
					}
				}
				if slices.IsSorted(texts) {
					t.Errorf("public IDs sort in issue order: %q...", texts[:3])
				}
				rises := 0
				for i := 1; i < len(texts); i++ {
					if texts[i] > texts[i-1] {
						rises++
					}
				}
				if rises < len(texts)*4/10 || rises > len(texts)*6/10 {
					t.Errorf("%d of %d consecutive public IDs rise; want about half (issue order hidden)", rises, len(texts)-1)
				}
			})
		}
	}
}

// TestPublicKeyRotation checks that IDs issued under an old key still
// decode once a new key issues, and that an unknown key ID is refused.
func TestPublicKeyRotation(t *testing.T) {
	src := &counter{s: idgen.Int64Scheme()}
	old, err := public.New(src, public.Config{Keys: keys(t, "0:"+hexKey0)})
	if err != nil {
		t.Fatal(err)
	}
	oldID, _ := old.Next(context.Background())
	rotated, err := public.New(src, public.Config{Keys: keys(t, "1:"+hexKey1+", 0:"+hexKey0)})
	if err != nil {
		t.Fatal(err)
	}
	newID, _ := rotated.Next(context.Background())
	if s := newID.String(); s[0] != '1' {
		t.Errorf("rotated ID %q: want key ID 1 first", s)
	}
	for _, id := range []idgen.ID{oldID, newID} {
		back, err := rotated.Scheme().Parse(id.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %v", id, err)
		}
		in, _ := public.Inner(back)
		if v, _ := in.Uint64(); v == 0 {
			t.Errorf("Inner(%q) = %v; want the inner ID", id, in)
		}
	}
	if _, err := old.Scheme().Parse(newID.String()); !errors.Is(err, idgen.ErrSyntax) || !strings.Contains(err.Error(), "key ID 1") {
		t.Errorf("Parse(%q) with key 0 only = %v; want ErrSyntax naming key ID 1", newID, err)
	}
	if _, err := public.New(src, public.Config{Keys: keys(t, "1:"+hexKey1+",1:"+hexKey0)}); !errors.Is(err, public.ErrKey) {
		t.Errorf("New with key ID 1 twice = %v; want ErrKey", err)
	}
}

// TestPublicTweak checks that the same inner IDs under two tweaks give
// unrelated public IDs, that nil and the empty tweak are the same (the one
// IDs issued before tweaks existed use), that an ID read under another
// tweak decrypts to another inner ID, and that a tweak longer than
// MaxTweakSize is refused.
func TestPublicTweak(t *testing.T) {
	issue := func(tweak []byte) (*idgen.Scheme, []string) {
		g, err := public.New(&counter{s: idgen.Int64Scheme()}, public.Config{Keys: keys(t, hexKey0), Tweak: tweak})
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for range 100 {
			id, err := g.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, id.String())
		}
		return g.Scheme(), texts
	}
	_, none := issue(nil)
	_, empty := issue([]byte{})
	userScheme, user := issue([]byte("user"))
	_, order := issue([]byte("order"))
	if !slices.Equal(none, empty) {
		t.Errorf("nil tweak gives %q...; the empty tweak %q...; want the same", none[:2], empty[:2])
	}
	for i := range user {
		if user[i] == none[i] || user[i] == order[i] {
			t.Fatalf("inner ID %d: tweak user %q, order %q, none %q; want three different public IDs", i+1, user[i], order[i], none[i])
		}
		for _, tt := range []struct {
			text string
			same bool
		}{{user[i], true}, {order[i], false}, {none[i], false}} {
			id, err := userScheme.Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tt.text, err)
			}
			in, ok := public.Inner(id)
			if v, _ := in.Uint64(); !ok || (v == uint64(i+1)) != tt.same {
				t.Fatalf("Inner(%q) under tweak user = %d, %v; want inner ID %d: %v", tt.text, v, ok, i+1, tt.same)
			}
		}
	}
	long := []byte(strings.Repeat("t", public.MaxTweakSize+1))
	if _, err := public.NewScheme(idgen.Int64Scheme(), public.Config{Keys: keys(t, hexKey0), Tweak: long}); !errors.Is(err, public.ErrTweak) || !strings.Contains(err.Error(), "65 bytes: want at most 64") {
		t.Errorf("NewScheme(tweak of %d bytes) = %v; want ErrTweak naming 65 bytes and 64", len(long), err)
	}
	if _, err := public.NewScheme(idgen.Int64Scheme(), public.Config{Keys: keys(t, hexKey0), Tweak: long[:public.MaxTweakSize]}); err != nil {
		t.Errorf("NewScheme(tweak of %d bytes) = %v; want nil", public.MaxTweakSize, err)
	}
}

// TestParseKeysNeverShowsTheKey checks the refusals of bad keys: each
// names the variable and the form wanted, and none contains the key text.
func TestParseKeysNeverShowsTheKey(t *testing.T) {
	for _, tt := range []struct{ name, text, want string }{
		{"missing", "", "IDGEN_PUBLIC_KEY is not set"},
		{"short", hexKey0[:40], "want 64 hex digits"},
		{"long", hexKey0 + "00", "want 64 hex digits"},
		{"not hex", strings.Repeat("zq", 32), "want 64 hex digits"},
		{"bad key ID", "U:" + hexKey0, "one Crockford base32 digit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := public.ParseKeys("IDGEN_PUBLIC_KEY", tt.text)
			if !errors.Is(err, public.ErrKey) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "IDGEN_PUBLIC_KEY") {
				t.Fatalf("ParseKeys(%q) = %v; want ErrKey naming IDGEN_PUBLIC_KEY and %q", tt.name, err, tt.want)
			}
			if tt.text != "" && strings.Contains(err.Error(), tt.text[min(2, len(tt.text)):min(20, len(tt.text))]) {
				t.Fatalf("ParseKeys error %q shows the key", err)
			}
		})
	}
}

func TestPublicRefusesOtherWidths(t *testing.T) {
	s := &idgen.Scheme{Name: "xid", Size: 12, Column: idgen.ColumnBytea, Codec: idgen.Uint64Codec{}}
	if _, err := public.NewScheme(s, public.Config{Keys: keys(t, hexKey0)}); !errors.Is(err, public.ErrEncoding) || !strings.Contains(err.Error(), "96 bits") {
		t.Errorf("NewScheme(96-bit xid) = %v; want ErrEncoding naming 96 bits", err)
	}
}

// TestPublicParseNamesTheInput checks that an error about the digits after
// the key ID quotes the whole public ID the caller gave, as well as the
// part at fault.
func TestPublicParseNamesTheInput(t *testing.T) {
	tests := []struct{ encoding, text, want string }{
		{"crockford", "0", `idgen: invalid ID syntax: "" is not crockford: want 13 chars for a 64-bit ID, got 0 (in public ID "0", after its key ID)`},
		{"crockford", "07GD848WQJXPV", `idgen: invalid ID syntax: "7GD848WQJXPV" is not crockford: want 13 chars for a 64-bit ID, got 12 (in public ID "07GD848WQJXPV", after its key ID)`},
		{"crockford-check", "00", `idgen: invalid ID syntax: "" is not crockford: want 13 chars for a 64-bit ID, got 0 (in public ID "00", after its key ID)`},
		{"base58", "0!", `idgen: invalid ID syntax: "!" is not base58: want 11 chars for a 64-bit ID, got 1 (in public ID "0!", after its key ID)`},
	}
	for _, tt := range tests {
		s, err := public.NewScheme(idgen.Int64Scheme(), public.Config{Keys: keys(t, hexKey0), Encoding: enc(t, tt.encoding)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Parse(tt.text); err == nil || err.Error() != tt.want || !errors.Is(err, idgen.ErrSyntax) {
			t.Errorf("%s: Parse(%q) = %v; want ErrSyntax %s", tt.encoding, tt.text, err, tt.want)
		}
	}
}

func FuzzPublicParse(f *testing.F) {
	s, err := public.NewScheme(idgen.Int64Scheme(), public.Config{Keys: keys(f, hexKey0), Encoding: enc(f, "crockford-check")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("00000000000000U")
	f.Add("0FZZZZZZZZZZZZ1")
	f.Fuzz(func(t *testing.T, text string) {
		id, err := s.Parse(text)
		if err != nil {
			if !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) {
				t.Fatalf("Parse(%q) = %v; want ErrSyntax or ErrOutOfRange", text, err)
			}
			return
		}
		if back, err := s.Parse(id.String()); err != nil || back != id {
			t.Fatalf("Parse(%q) = %v; Parse(%q) = %v, %v", text, id, id.String(), back, err)
		}
	})
}

// BenchmarkPublic measures the cost per ID of issuing a public ID over a
// 64-bit Snowflake and writing its crockford text (14 chars), in one run
// beside its references:
//
//   - aes-10-blocks, aesni-10-blocks: ten dependent AES-256 blocks,
//     through crypto/aes and in one call of the AES-NI loop our FF1 runs
//     on amd64 (see BenchmarkPublicFF1);
//   - inner: the Snowflake alone, writing its decimal text; inner-next:
//     its Next alone;
//   - capitalone: the same public ID the way idgen made it before its own
//     FF1 (github.com/capitalone/fpe/ff1 on the hex digits, then crockford);
//   - ff1-append: Generator.AppendNext into a reused buffer, the
//     allocation-free path. It also reports x-capitalone, capitalone's
//     ns/op over its own (how many times faster), and x-floor, its ns/op
//     over the floor's: aesni-10-blocks (aes-10-blocks without AES-NI)
//     plus inner-next, all of this run; x-capitalone-cpu and x-floor-cpu
//     are the same ratios of cpu-ns/op, which a busy machine moves less;
//   - ff1-next: Generator.Next, then ID.AppendText;
//   - ff1-parse: reading the text back and decrypting it (Parse, Inner);
//   - capitalone-128, ff1-append-128: the same over a 128-bit inner ID.
//
// Compare the figures of one run only: the machine's load moves them all.
// Each also reports cpu-ns/op, the process's CPU time (user and system)
// per ID: on a machine shared with other work, wall time (ns/op) includes
// the waits for a core, CPU time does not.
func BenchmarkPublic(b *testing.B) {
	ctx := context.Background()
	key, _ := hex.DecodeString(hexKey0)
	lib, err := ff1.NewCipher(16, 0, key, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := public.Config{Keys: keys(b, hexKey0)}
	var aes10, inner, capitalone [2]float64 // ns/op and cpu-ns/op of this run
	nsOp := func(b *testing.B, to *[2]float64) {
		if b.N > 0 {
			*to = [2]float64{float64(b.Elapsed().Nanoseconds()) / float64(b.N), lastCPU}
		}
	}
	b.Run("aes-10-blocks", func(b *testing.B) {
		benchAES10(b, key)
		nsOp(b, &aes10)
	})
	b.Run("aesni-10-blocks", func(b *testing.B) {
		benchAESNI10(b, key)
		nsOp(b, &aes10)
	})
	b.Run("inner", func(b *testing.B) {
		g := newSnowflake(b)
		var buf []byte
		defer reportCPU(b)()
		for b.Loop() {
			id, _ := g.Next(ctx)
			buf, _ = id.AppendText(buf[:0])
		}
	})
	b.Run("inner-next", func(b *testing.B) {
		g := newSnowflake(b)
		stop := reportCPU(b)
		for b.Loop() {
			_, _ = g.Next(ctx)
		}
		stop()
		nsOp(b, &inner)
	})
	b.Run("capitalone", func(b *testing.B) {
		g := newSnowflake(b)
		var buf []byte
		stop := reportCPU(b)
		for b.Loop() {
			id, _ := g.Next(ctx)
			v, _ := id.Uint64()
			buf = capitalonePublic(b, lib, buf[:0], binary.BigEndian.AppendUint64(nil, v))
		}
		stop()
		nsOp(b, &capitalone)
	})
	b.Run("ff1-append", func(b *testing.B) {
		g := newPublic(b, newSnowflake(b), cfg)
		var buf []byte
		stop := reportCPU(b)
		for b.Loop() {
			buf, _ = g.AppendNext(ctx, buf[:0])
		}
		stop()
		var ours [2]float64
		if nsOp(b, &ours); ours[0] > 0 && ours[1] > 0 {
			b.ReportMetric(capitalone[0]/ours[0], "x-capitalone")
			b.ReportMetric(ours[0]/(aes10[0]+inner[0]), "x-floor")
			b.ReportMetric(capitalone[1]/ours[1], "x-capitalone-cpu")
			b.ReportMetric(ours[1]/(aes10[1]+inner[1]), "x-floor-cpu")
		}
	})
	b.Run("ff1-next", func(b *testing.B) {
		g := newPublic(b, newSnowflake(b), cfg)
		var buf []byte
		defer reportCPU(b)()
		for b.Loop() {
			id, _ := g.Next(ctx)
			buf, _ = id.AppendText(buf[:0])
		}
	})
	b.Run("ff1-parse", func(b *testing.B) {
		g := newPublic(b, newSnowflake(b), cfg)
		id, _ := g.Next(ctx)
		text := id.String()
		defer reportCPU(b)()
		for b.Loop() {
			back, _ := g.Scheme().Parse(text)
			if in, ok := public.Inner(back); !ok || in.IsZero() {
				b.Fatalf("Inner(Parse(%q)) = %v, %v", text, in, ok)
			}
		}
	})
	lib128, err := ff1.NewCipher(16, 0, key, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("capitalone-128", func(b *testing.B) {
		g := &counter{s: uuid128}
		var buf []byte
		defer reportCPU(b)()
		for b.Loop() {
			id, _ := g.Next(ctx)
			buf = capitalonePublic(b, lib128, buf[:0], id.Bytes())
		}
	})
	b.Run("ff1-append-128", func(b *testing.B) {
		g := newPublic(b, &counter{s: uuid128}, cfg)
		var buf []byte
		defer reportCPU(b)()
		for b.Loop() {
			buf, _ = g.AppendNext(ctx, buf[:0])
		}
	})
}

// lastCPU is the cpu-ns/op the last reportCPU reported (benchmarks run
// one at a time).
var lastCPU float64

// reportCPU starts measuring the CPU time of b's loop; the function it
// returns reports it per op as cpu-ns/op.
func reportCPU(b *testing.B) func() {
	start, ok := cpuTime()
	return func() {
		end, _ := cpuTime()
		lastCPU = 0
		if ok && b.N > 0 {
			lastCPU = float64(end-start) / float64(b.N)
			b.ReportMetric(lastCPU, "cpu-ns/op")
		}
	}
}

// capitalonePublic appends the crockford text of the public ID of the inner
// ID's bytes raw under key ID 0 the way idgen made it before its own FF1:
// FF1 from capitalone/fpe over the hex digits, decoded back to bytes.
func capitalonePublic(b *testing.B, c ff1.Cipher, dst, raw []byte) []byte {
	ct, err := c.Encrypt(hex.EncodeToString(raw))
	if err != nil {
		b.Fatal(err)
	}
	e, err := hex.DecodeString(ct)
	if err != nil {
		b.Fatal(err)
	}
	return public.Encodings()[0].AppendText(append(dst, '0'), e)
}

func newPublic(b *testing.B, inner idgen.Generator, cfg public.Config) *public.Generator {
	g, err := public.New(inner, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// newSnowflake returns a Snowflake generator on the system clock whose
// 21-bit sequence (2,097,152 IDs a ms) keeps it from waiting for the next
// millisecond at any rate a benchmark reaches.
func newSnowflake(b *testing.B) *snowflake.Generator {
	layout, err := snowflake.ParseLayout("time:41,worker:1,sequence:21")
	if err != nil {
		b.Fatal(err)
	}
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout, Nodes: map[string]int64{"worker": 1}})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// TestPublicAppendNextEveryEncoding checks that AppendNext writes the text
// Next's ID.String() gives, in every encoding, over 64- and 128-bit inner
// IDs, with issuing key IDs 0 and Z (the first and last digit): AppendNext
// writes crockford and crockford-check straight from the cipher's words.
func TestPublicAppendNextEveryEncoding(t *testing.T) {
	for _, e := range public.Encodings() {
		for _, inner := range []*idgen.Scheme{idgen.Int64Scheme(), uuid128} {
			if e.Fits(inner.Size) != nil {
				continue
			}
			for _, kid := range []string{"0", "Z"} {
				cfg := public.Config{Keys: keys(t, kid+":"+hexKey0), Encoding: e}
				var gens [2]*public.Generator // the same IDs: one for Next, one for AppendNext
				for i := range gens {
					var err error
					if gens[i], err = public.New(&counter{s: inner}, cfg); err != nil {
						t.Fatal(err)
					}
				}
				g, twin := gens[0], gens[1]
				buf := []byte("kept")
				for range 200 {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if buf, err = twin.AppendNext(context.Background(), buf[:4]); err != nil || string(buf) != "kept"+id.String() {
						t.Fatalf("%s, %d-bit, key %s: AppendNext = %q, %v; want %q", e.Name, 8*inner.Size, kid, buf, err, "kept"+id.String())
					}
				}
			}
		}
	}
}

// TestUnwrap: a public Generator unwraps to its inner generator, so that
// idgen.StatsOf and idgen.ReadyOf read the Snowflake generator's counters
// and readiness through it; over a generator with neither, both say so.
func TestUnwrap(t *testing.T) {
	layout, _ := snowflake.Preset("twitter")
	clk := idgentest.NewClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)) // no drift to read
	sf, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout, Nodes: map[string]int64{"worker": 1}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	g, err := public.New(sf, public.Config{Keys: keys(t, hexKey0)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Unwrap() != idgen.Generator(sf) {
		t.Errorf("Unwrap() = %v; want the inner generator %v", g.Unwrap(), sf)
	}
	if st, ok := idgen.StatsOf(g); !ok || st != sf.Stats() {
		t.Errorf("StatsOf(public over snowflake) = %+v, %v; want the snowflake's %+v, true", st, ok, sf.Stats())
	}
	if r, ok := idgen.ReadyOf(g); !ok || r != idgen.Readier(sf) {
		t.Errorf("ReadyOf(public over snowflake) = %v, %v; want the snowflake, true", r, ok)
	}
	plain, err := public.New(&counter{s: idgen.Int64Scheme()}, public.Config{Keys: keys(t, hexKey0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := idgen.StatsOf(plain); ok {
		t.Error("StatsOf(public over a counter) ok = true; want false")
	}
	if _, ok := idgen.ReadyOf(plain); ok {
		t.Error("ReadyOf(public over a counter) ok = true; want false")
	}
}
