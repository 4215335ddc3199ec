package public_test

import (
	"context"
	"crypto/aes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/capitalone/fpe/ff1"
	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

type ff1Sample struct {
	Sample int    `json:"sample"`
	Key    string `json:"key"`
	Radix  int    `json:"radix"`
	Tweak  string `json:"tweak"`
	PT     string `json:"pt"`
	CT     string `json:"ct"`
}

func loadFF1Samples(t *testing.T) []ff1Sample {
	t.Helper()
	data, err := os.ReadFile("testdata/ff1_samples.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Samples []ff1Sample `json:"samples"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Samples) != 9 {
		t.Fatalf("testdata has %d samples; want NIST's 9", len(f.Samples))
	}
	return f.Samples
}

// words returns x (below 2^128) as hi, lo.
func words(x *big.Int) (hi, lo uint64) {
	var b [16]byte
	x.FillBytes(b[:])
	return binaryBE(b[:8]), binaryBE(b[8:])
}

func binaryBE(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// number returns hi<<64|lo.
func number(hi, lo uint64) *big.Int {
	x := new(big.Int).SetUint64(hi)
	return x.Or(x.Lsh(x, 64), new(big.Int).SetUint64(lo))
}

// numeral returns x as n digits in radix, leading zeros kept: the numeral
// string capitalone/fpe reads and writes (0-9a-zA-Z).
func numeral(x *big.Int, radix, n int) string {
	s := x.Text(radix)
	return strings.Repeat("0", n-len(s)) + s
}

// ours runs our FF1 on the numeral string x, both ways.
func ours(t testing.TB, c *public.FF1, x string, radix int, decrypt bool) string {
	t.Helper()
	v, ok := new(big.Int).SetString(x, radix)
	if !ok {
		t.Fatalf("numeral %q is not radix %d", x, radix)
	}
	hi, lo := words(v)
	crypt := c.Encrypt
	if decrypt {
		crypt = c.Decrypt
	}
	var buf [16]byte
	hi, lo, err := crypt(&buf, hi, lo)
	if err != nil {
		t.Fatalf("FF1(%q, decrypt %v) = %v", x, decrypt, err)
	}
	return numeral(number(hi, lo), radix, len(x))
}

// TestFF1NISTSamples checks our FF1 against NIST's nine FF1 samples (AES-
// 128, -192, -256; radix 10 over 10 digits and radix 36 over 19, with and
// without a tweak), both ways: they run its general path, the one for
// radices that are not a power of 2. It holds the two oracles the other
// tests use, capitalone/fpe and refFF1, to the samples as well.
func TestFF1NISTSamples(t *testing.T) {
	for _, s := range loadFF1Samples(t) {
		t.Run("sample"+strconv.Itoa(s.Sample), func(t *testing.T) {
			key, _ := hex.DecodeString(s.Key)
			tweak, _ := hex.DecodeString(s.Tweak)
			c, err := public.NewFF1(key, tweak, s.Radix, len(s.PT))
			if err != nil {
				t.Fatalf("NewFF1(%d-byte key, radix %d, %d digits) = %v", len(key), s.Radix, len(s.PT), err)
			}
			if got := ours(t, c, s.PT, s.Radix, false); got != s.CT {
				t.Errorf("Encrypt(%q) = %q; want %q", s.PT, got, s.CT)
			}
			if got := ours(t, c, s.CT, s.Radix, true); got != s.PT {
				t.Errorf("Decrypt(%q) = %q; want %q", s.CT, got, s.PT)
			}
			lib, err := ff1.NewCipher(s.Radix, len(tweak), key, tweak)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := lib.Encrypt(s.PT); got != s.CT || err != nil {
				t.Errorf("capitalone Encrypt(%q) = %q, %v; want %q", s.PT, got, err, s.CT)
			}
			pt, _ := new(big.Int).SetString(s.PT, s.Radix)
			if got := numeral(refFF1(key, tweak, s.Radix, len(s.PT), pt, false), s.Radix, len(s.PT)); got != s.CT {
				t.Errorf("refFF1 encrypt(%q) = %q; want %q", s.PT, got, s.CT)
			}
		})
	}
}

// An ff1Domain is a domain of the differential tests: numeral strings of n
// digits in radix, under a random key of keyLen bytes and a random tweak
// of tweakLen.
type ff1Domain struct {
	name             string
	radix, n         int
	keyLen, tweakLen int
	capitalone       bool // else refFF1 is the oracle (radix above 62)
}

var ff1Domains = []ff1Domain{
	{"radix16x16 public 64-bit", 16, 16, 32, 0, true},
	{"radix16x16 tweak 4 B", 16, 16, 32, 4, true},
	{"radix16x32 public 128-bit", 16, 32, 32, 0, true},
	{"radix16x32 tweak 40 B", 16, 32, 32, 40, true},
	{"radix2x20 smallest 2^k domain", 2, 20, 16, 0, true},
	{"radix2x128", 2, 128, 24, 7, true},
	{"radix4x33", 4, 33, 32, 16, true},
	{"radix8x42", 8, 42, 16, 17, true},
	{"radix32x4", 32, 4, 32, 0, true},
	{"radix32x25 65-bit half", 32, 25, 32, 3, true},
	{"radix10x10", 10, 10, 16, 10, true},
	{"radix10x6 smallest domain", 10, 6, 24, 0, true},
	{"radix36x19", 36, 19, 32, 11, true},
	{"radix62x20", 62, 20, 32, 5, true},
	{"radix64x21", 64, 21, 32, 2, false},
	{"radix256x16", 256, 16, 32, 0, false},
	{"radix1024x11", 1024, 11, 24, 9, false},
	{"radix65536x8", 1 << 16, 8, 32, 1, false},
}

// ff1Inputs is the number of random inputs a differential test checks per
// domain: 1,000, or IDGEN_FF1_INPUTS (1000000 for the full run).
func ff1Inputs(t *testing.T) int {
	n := 1000
	if s := os.Getenv("IDGEN_FF1_INPUTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("IDGEN_FF1_INPUTS=%q: want a positive integer", s)
		}
		n = v
	}
	return n
}

// An oracle is the other implementation of one domain, on numeral strings.
type oracle struct {
	lib *ff1.Cipher
	ref func(x *big.Int, decrypt bool) *big.Int
}

func newOracle(t testing.TB, d ff1Domain, key, tweak []byte) oracle {
	if d.capitalone {
		lib, err := ff1.NewCipher(d.radix, len(tweak), key, tweak)
		if err != nil {
			t.Fatal(err)
		}
		return oracle{lib: &lib}
	}
	return oracle{ref: func(x *big.Int, decrypt bool) *big.Int { return refFF1(key, tweak, d.radix, d.n, x, decrypt) }}
}

func (o oracle) crypt(t testing.TB, d ff1Domain, x *big.Int, decrypt bool) *big.Int {
	if o.ref != nil {
		return o.ref(x, decrypt)
	}
	crypt := o.lib.Encrypt
	if decrypt {
		crypt = o.lib.Decrypt
	}
	s, err := crypt(numeral(x, d.radix, d.n))
	if err != nil {
		t.Fatal(err)
	}
	y, ok := new(big.Int).SetString(s, d.radix)
	if !ok || len(s) != d.n {
		t.Fatalf("capitalone gave %q: not %d digits of radix %d", s, d.n, d.radix)
	}
	return y
}

// checkFF1 checks our FF1 on x against the oracle both ways, and the round
// trip.
func checkFF1(t testing.TB, d ff1Domain, c *public.FF1, o oracle, x *big.Int) {
	t.Helper()
	var buf [16]byte
	hi, lo := words(x)
	e0, e1, err := c.Encrypt(&buf, hi, lo)
	if err != nil {
		t.Fatalf("%s: Encrypt(%v) = %v", d.name, x, err)
	}
	if want := o.crypt(t, d, x, false); number(e0, e1).Cmp(want) != 0 {
		t.Fatalf("%s: Encrypt(%v) = %v; the oracle gives %v", d.name, x, number(e0, e1), want)
	}
	p0, p1, err := c.Decrypt(&buf, hi, lo)
	if err != nil {
		t.Fatalf("%s: Decrypt(%v) = %v", d.name, x, err)
	}
	if want := o.crypt(t, d, x, true); number(p0, p1).Cmp(want) != 0 {
		t.Fatalf("%s: Decrypt(%v) = %v; the oracle gives %v", d.name, x, number(p0, p1), want)
	}
	if b0, b1, err := c.Decrypt(&buf, e0, e1); err != nil || b0 != hi || b1 != lo {
		t.Fatalf("%s: Decrypt(Encrypt(%v)) = %v, %v; want it back", d.name, x, number(b0, b1), err)
	}
}

func domainSize(d ff1Domain) *big.Int {
	return new(big.Int).Exp(big.NewInt(int64(d.radix)), big.NewInt(int64(d.n)), nil)
}

// TestFF1Differential checks our FF1 against a second implementation over
// random keys, tweaks and inputs in every domain: capitalone/fpe up to
// radix 62, refFF1 above. Each domain also runs its edges (0, 1, the
// largest value and the halves' boundaries). Set IDGEN_FF1_INPUTS=1000000
// for the full run (some minutes on 2 cores).
func TestFF1Differential(t *testing.T) {
	inputs := ff1Inputs(t)
	for i, d := range ff1Domains {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(31, uint64(i)))
			key, tweak := make([]byte, d.keyLen), make([]byte, d.tweakLen)
			fillRand(rng, key)
			fillRand(rng, tweak)
			c, err := public.NewFF1(key, tweak, d.radix, d.n)
			if err != nil {
				t.Fatal(err)
			}
			o := newOracle(t, d, key, tweak)
			size := domainSize(d)
			half := new(big.Int).Exp(big.NewInt(int64(d.radix)), big.NewInt(int64(d.n-d.n/2)), nil)
			one := big.NewInt(1)
			for _, x := range []*big.Int{
				big.NewInt(0), one, new(big.Int).Sub(size, one),
				new(big.Int).Sub(half, one), half, new(big.Int).Sub(size, half),
			} {
				checkFF1(t, d, c, o, x)
			}
			var b [16]byte
			for range inputs {
				fillRand(rng, b[:])
				x := new(big.Int).SetBytes(b[:])
				checkFF1(t, d, c, o, x.Mod(x, size))
			}
			if size.BitLen() > 128 {
				return // radix^n = 2^128: every 128-bit value is in the domain
			}
			var buf [16]byte
			hi, lo := words(size)
			if _, _, err := c.Encrypt(&buf, hi, lo); !errors.Is(err, public.ErrFF1Domain) {
				t.Errorf("Encrypt(radix^n = %v) = %v; want ErrFF1Domain", size, err)
			}
			if _, _, err := c.Decrypt(&buf, hi, lo); !errors.Is(err, public.ErrFF1Domain) {
				t.Errorf("Decrypt(radix^n = %v) = %v; want ErrFF1Domain", size, err)
			}
		})
	}
}

func fillRand(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// FuzzFF1 checks our FF1 against capitalone/fpe (and the round trip) on
// any key, tweak, domain of ff1Domains and input.
func FuzzFF1(f *testing.F) {
	f.Add(uint8(0), []byte("0123456789abcdef0123456789abcdef"), []byte{}, uint64(0), uint64(1))
	f.Add(uint8(2), []byte("0123456789abcdef"), []byte("user"), ^uint64(0), ^uint64(0))
	f.Add(uint8(9), []byte("0123456789abcdef01234567"), []byte("a tweak longer than one AES block"), uint64(1)<<60, uint64(7))
	f.Fuzz(func(t *testing.T, di uint8, key, tweak []byte, hi, lo uint64) {
		d := ff1Domains[int(di)%len(ff1Domains)]
		if !d.capitalone {
			d = ff1Domains[0]
		}
		switch {
		case len(key) >= 32:
			key = key[:32]
		case len(key) >= 24:
			key = key[:24]
		case len(key) >= 16:
			key = key[:16]
		default:
			return
		}
		if len(tweak) > public.MaxTweakSize {
			tweak = tweak[:public.MaxTweakSize]
		}
		c, err := public.NewFF1(key, tweak, d.radix, d.n)
		if err != nil {
			t.Fatalf("NewFF1(%s) = %v", d.name, err)
		}
		x := number(hi, lo)
		checkFF1(t, d, c, newOracle(t, d, key, tweak), x.Mod(x, domainSize(d)))
	})
}

// TestNewFF1Refuses checks the keys and domains newFF1 refuses, each with
// an error that names the value at fault and the range allowed, and the
// edges it takes.
func TestNewFF1Refuses(t *testing.T) {
	for _, tt := range []struct {
		name     string
		keyLen   int
		radix, n int
		want     string // "": accepted
	}{
		{"key of 20 bytes", 20, 16, 16, "FF1 key of 20 bytes: want 16, 24 or 32"},
		{"radix 1", 32, 1, 40, "radix 1: want 2 to 65536"},
		{"radix 65537", 32, 65537, 4, "radix 65537: want 2 to 65536"},
		{"1 digit", 32, 1 << 16, 1, "over 1 digits: want 2 to 255"},
		{"129 bits", 32, 2, 129, "is 129 bits: want at most 128"},
		{"2^19 values", 32, 2, 19, "is 524288 values: want at least 1000000"},
		{"10^5 values", 32, 10, 5, "is 100000 values: want at least 1000000"},
		{"radix 10 half of 20 digits", 32, 10, 40, "a half of 20 digits must be below 2^64"},
		{"radix 10 half of 19 digits", 16, 10, 38, ""},
		{"radix 999 over 2 digits", 24, 999, 2, "is 998001 values: want at least 1000000"},
		{"radix 1000 over 2 digits", 24, 1000, 2, ""},
		{"radix 2^16 over 8 digits", 32, 1 << 16, 8, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := public.NewFF1(make([]byte, tt.keyLen), nil, tt.radix, tt.n)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("NewFF1(%d-byte key, radix %d, %d digits) = %v; want %q", tt.keyLen, tt.radix, tt.n, err, tt.want)
			}
		})
	}
}

// TestPublicIsFF1OfInnerHex checks that a public ID's bits after its key ID
// are FF1 (radix 16, the scheme's tweak) of the inner ID's hex digits under
// the issuing key, as capitalone/fpe computes it: 16 digits for a 64-bit
// ID, 32 for a 128-bit one, so the permutation is over exactly the inner
// width. Next and AppendNext give the same text.
func TestPublicIsFF1OfInnerHex(t *testing.T) {
	key, _ := hex.DecodeString(hexKey0)
	for _, inner := range []*idgen.Scheme{idgen.Int64Scheme(), uuid128} {
		for _, tweak := range []string{"", "user", "a tweak of more than sixteen bytes"} {
			t.Run(fmt.Sprintf("%s/tweak=%q", inner.Name, tweak), func(t *testing.T) {
				c, err := ff1.NewCipher(16, len(tweak), key, []byte(tweak))
				if err != nil {
					t.Fatal(err)
				}
				cfg := public.Config{Keys: keys(t, hexKey0), Tweak: []byte(tweak)}
				g, err := public.New(&counter{s: inner}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				twin, err := public.New(&counter{s: inner}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				var buf []byte
				for range 20 {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					in, ok := public.Inner(id)
					if !ok {
						t.Fatalf("Inner(%v) not ok", id)
					}
					pt := hex.EncodeToString(in.Bytes())
					want, err := c.Encrypt(pt)
					if err != nil {
						t.Fatal(err)
					}
					if got := hex.EncodeToString(id.Bytes()[1:]); got != want {
						t.Fatalf("public ID of %s = %s; want FF1 %s", pt, got, want)
					}
					if buf, err = twin.AppendNext(context.Background(), buf[:0]); err != nil || string(buf) != id.String() {
						t.Fatalf("AppendNext = %q, %v; want Next's %q", buf, err, id)
					}
				}
			})
		}
	}
}

// TestPublicConcurrent issues and decodes public IDs from several
// goroutines at once (run with -race), and checks every ID decodes to its
// inner ID.
func TestPublicConcurrent(t *testing.T) {
	src := &counter{s: idgen.Int64Scheme()}
	g, err := public.New(src, public.Config{Keys: keys(t, hexKey0)})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 200
	var (
		mu   sync.Mutex
		seen = map[uint64]bool{}
		wg   sync.WaitGroup
	)
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			var (
				buf []byte
				err error
			)
			for range each {
				var text string
				if w%2 == 0 {
					id, err := g.Next(context.Background())
					if err != nil {
						errs <- err
						return
					}
					text = id.String()
				} else {
					if buf, err = g.AppendNext(context.Background(), buf[:0]); err != nil {
						errs <- err
						return
					}
					text = string(buf)
				}
				back, err := g.Scheme().Parse(text)
				in, ok := public.Inner(back)
				v, _ := in.Uint64()
				if err != nil || !ok || v == 0 || v > workers*each {
					errs <- fmt.Errorf("Parse(%q) = %v, %v; Inner = %d, %v; want an inner ID in 1..%d", text, back, err, v, ok, workers*each)
					return
				}
				mu.Lock()
				seen[v] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != workers*each {
		t.Errorf("decoded %d distinct inner IDs; want %d", len(seen), workers*each)
	}
}

// BenchmarkPublicFF1 measures the cipher alone, one 64-bit or 128-bit
// value a op, in one run beside its floor and its reference:
//
//   - aes-10-blocks: ten dependent crypto/aes block encryptions under the
//     same AES-256 key;
//   - aesni-10-blocks: the same ten blocks in one call of the AES-NI loop
//     our FF1 runs on amd64, without crypto/aes's checks a block: what
//     FF1's ten rounds cannot go below (AES's latency, ten blocks in a
//     chain);
//   - ours-64, ours-128: our FF1 in radix 16 over 16 and 32 digits;
//   - capitalone-64: capitalone/fpe over the same 16 hex digits.
func BenchmarkPublicFF1(b *testing.B) {
	key, _ := hex.DecodeString(hexKey0)
	b.Run("aes-10-blocks", func(b *testing.B) { benchAES10(b, key) })
	b.Run("aesni-10-blocks", func(b *testing.B) { benchAESNI10(b, key) })
	for _, n := range []int{16, 32} {
		b.Run(fmt.Sprintf("ours-%d", 4*n), func(b *testing.B) {
			c, err := public.NewFF1(key, nil, 16, n)
			if err != nil {
				b.Fatal(err)
			}
			buf := new([16]byte)
			var hi, lo uint64
			defer reportCPU(b)()
			for b.Loop() {
				lo++
				hi, lo, _ = c.Encrypt(buf, hi&(1<<(4*n-64)-1), lo)
			}
		})
	}
	b.Run("capitalone-64", func(b *testing.B) {
		c, err := ff1.NewCipher(16, 0, key, nil)
		if err != nil {
			b.Fatal(err)
		}
		x := "0000000000000000"
		defer reportCPU(b)()
		for b.Loop() {
			x, _ = c.Encrypt(x)
		}
	})
}

// benchAES10 runs ten dependent crypto/aes block encryptions a op.
func benchAES10(b *testing.B, key []byte) {
	block, err := aes.NewCipher(key)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 16)
	defer reportCPU(b)()
	for b.Loop() {
		for range 10 {
			block.Encrypt(buf, buf)
		}
	}
}

// benchAESNI10 runs ten dependent block encryptions a op in one call of
// the AES-NI loop; it skips without AES-NI.
func benchAESNI10(b *testing.B, key []byte) {
	if !public.HasAESNI {
		b.Skip("no AES-NI")
	}
	blocks := public.NewAESNIBlocks(key)
	buf := new([16]byte)
	defer reportCPU(b)()
	for b.Loop() {
		blocks(10, buf)
	}
}
