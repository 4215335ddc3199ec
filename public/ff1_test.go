package public_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
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

// TestFF1NISTSamples pins the FF1 library public IDs use
// (github.com/capitalone/fpe/ff1) to NIST's nine samples, both ways.
func TestFF1NISTSamples(t *testing.T) {
	for _, s := range loadFF1Samples(t) {
		t.Run("sample"+strconv.Itoa(s.Sample), func(t *testing.T) {
			key, _ := hex.DecodeString(s.Key)
			tweak, _ := hex.DecodeString(s.Tweak)
			c, err := ff1.NewCipher(s.Radix, len(tweak), key, tweak)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := c.Encrypt(s.PT); got != s.CT || err != nil {
				t.Errorf("FF1.Encrypt(%q) = %q, %v; want %q", s.PT, got, err, s.CT)
			}
			if got, err := c.Decrypt(s.CT); got != s.PT || err != nil {
				t.Errorf("FF1.Decrypt(%q) = %q, %v; want %q", s.CT, got, err, s.PT)
			}
		})
	}
}

// TestPublicIsFF1OfInnerHex checks that a public ID's bits after its key ID
// are FF1 (radix 16, empty tweak) of the inner ID's hex digits under the
// issuing key: 16 digits for a 64-bit ID, 32 for a 128-bit one, so the
// permutation is over exactly the inner width.
func TestPublicIsFF1OfInnerHex(t *testing.T) {
	key, _ := hex.DecodeString(hexKey0)
	c, err := ff1.NewCipher(16, 0, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, inner := range []*idgen.Scheme{idgen.Int64Scheme, uuid128} {
		t.Run(inner.Name, func(t *testing.T) {
			src := &counter{s: inner}
			g, err := public.New(src, public.Config{Keys: keys(t, hexKey0)})
			if err != nil {
				t.Fatal(err)
			}
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
			}
		})
	}
}

// TestPublicConcurrent issues and decodes public IDs from several
// goroutines at once (the library's Cipher is not safe for concurrent use;
// run with -race), and checks every ID decodes to its inner ID.
func TestPublicConcurrent(t *testing.T) {
	src := &counter{s: idgen.Int64Scheme}
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
	for range workers {
		wg.Go(func() {
			for range each {
				id, err := g.Next(context.Background())
				if err != nil {
					errs <- err
					return
				}
				back, err := g.Scheme().Parse(id.String())
				in, ok := public.Inner(back)
				v, _ := in.Uint64()
				if err != nil || !ok || v == 0 || v > workers*each {
					errs <- fmt.Errorf("Parse(%q) = %v, %v; Inner = %d, %v; want an inner ID in 1..%d", id, back, err, v, ok, workers*each)
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
