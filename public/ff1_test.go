package public_test

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

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

func numerals(s string, radix int) []uint16 {
	out := make([]uint16, len(s))
	for i := range s {
		v, _ := strconv.ParseUint(s[i:i+1], radix, 8)
		out[i] = uint16(v)
	}
	return out
}

func text(x []uint16, radix int) string {
	var b []byte
	for _, v := range x {
		b = strconv.AppendUint(b, uint64(v), radix)
	}
	return string(b)
}

// TestFF1NISTSamples checks the FF1 reference against NIST's nine samples,
// both ways.
func TestFF1NISTSamples(t *testing.T) {
	for _, s := range loadFF1Samples(t) {
		t.Run("sample"+strconv.Itoa(s.Sample), func(t *testing.T) {
			key, _ := hex.DecodeString(s.Key)
			tweak, _ := hex.DecodeString(s.Tweak)
			if got := text(public.FF1Generic(key, tweak, s.Radix, numerals(s.PT, s.Radix), false), s.Radix); got != s.CT {
				t.Errorf("FF1.Encrypt(%q) = %q; want %q", s.PT, got, s.CT)
			}
			if got := text(public.FF1Generic(key, tweak, s.Radix, numerals(s.CT, s.Radix), true), s.Radix); got != s.PT {
				t.Errorf("FF1.Decrypt(%q) = %q; want %q", s.CT, got, s.PT)
			}
		})
	}
}

func bits(hi, lo uint64, n int) []uint16 {
	out := make([]uint16, n)
	for i := range n {
		w, sh := hi, 63-i
		if n == 128 && i >= 64 {
			w, sh = lo, 127-i
		} else if n == 64 {
			w = hi
		}
		out[i] = uint16(w >> sh & 1)
	}
	return out
}

// TestFF1Radix2MatchesReference checks the 64- and 128-bit fast paths
// against the step-by-step reference (NIST's samples have no radix-2 case),
// and that Decrypt reverses Encrypt.
func TestFF1Radix2MatchesReference(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	f, err := public.NewFF1(key)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		x := r.Uint64()
		got := f.Encrypt64(x)
		want := public.FF1Generic(key, nil, 2, bits(x, 0, 64), false)
		if text(bits(got, 0, 64), 2) != text(want, 2) {
			t.Fatalf("Encrypt64(%#x) = %#x; want %s", x, got, text(want, 2))
		}
		if back := f.Decrypt64(got); back != x {
			t.Fatalf("Decrypt64(Encrypt64(%#x)) = %#x; want %#x", x, back, x)
		}
		hi, lo := r.Uint64(), r.Uint64()
		ghi, glo := f.Encrypt128(hi, lo)
		want = public.FF1Generic(key, nil, 2, bits(hi, lo, 128), false)
		if text(bits(ghi, glo, 128), 2) != text(want, 2) {
			t.Fatalf("Encrypt128(%#x, %#x) = %#x, %#x; want %s", hi, lo, ghi, glo, text(want, 2))
		}
		if bhi, blo := f.Decrypt128(ghi, glo); bhi != hi || blo != lo {
			t.Fatalf("Decrypt128(Encrypt128(%#x, %#x)) = %#x, %#x", hi, lo, bhi, blo)
		}
	}
}

func TestNewFF1KeySize(t *testing.T) {
	if _, err := public.NewFF1(make([]byte, 31)); err == nil {
		t.Fatal("NewFF1(31 bytes) = nil error; want an error")
	}
}

func BenchmarkFF1Encrypt64(b *testing.B) {
	f, _ := public.NewFF1(make([]byte, 32))
	var x uint64
	for b.Loop() {
		x = f.Encrypt64(x + 1)
	}
}
