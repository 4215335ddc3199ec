package public_test

import (
	"bytes"
	"crypto/aes"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/idgenkit/idgen/public"
)

// TestAESNIKeySchedule checks the AES-NI path's own key expansion and
// block loop against crypto/aes: random AES-128, -192 and -256 keys, one
// block and three chained ones.
func TestAESNIKeySchedule(t *testing.T) {
	if !public.HasAESNI {
		t.Skip("no AES-NI on this machine (or a purego build): the FF1 rounds run through crypto/aes")
	}
	rng := rand.New(rand.NewPCG(31, 1))
	for _, size := range []int{16, 24, 32} {
		for range 200 {
			key := make([]byte, size)
			fillRand(rng, key)
			block, err := aes.NewCipher(key)
			if err != nil {
				t.Fatal(err)
			}
			blocks := public.NewAESNIBlocks(key)
			for _, n := range []int{1, 3} {
				var p [16]byte
				fillRand(rng, p[:])
				want := p
				for range n {
					block.Encrypt(want[:], want[:])
				}
				blocks(n, &p)
				if !bytes.Equal(p[:], want[:]) {
					t.Fatalf("AES-%d key %x, %d blocks: AES-NI gives %x; crypto/aes %x", 8*size, key, n, p, want)
				}
			}
		}
	}
}

// TestFF1AESNIMatchesGo checks, in every domain whose rounds run in AES-NI
// (radix 2^k, halves of at most 64 bits), that the assembly and the Go
// rounds through crypto/aes give the same values both ways over random
// keys, tweaks and inputs. TestFF1Differential holds the one this machine
// runs to the oracle; this one holds the other to it.
func TestFF1AESNIMatchesGo(t *testing.T) {
	if !public.HasAESNI {
		t.Skip("no AES-NI on this machine (or a purego build): only the Go rounds run")
	}
	narrow := 0
	for i, d := range ff1Domains {
		rng := rand.New(rand.NewPCG(32, uint64(i)))
		key, tweak := make([]byte, d.keyLen), make([]byte, d.tweakLen)
		fillRand(rng, key)
		fillRand(rng, tweak)
		asm, err := public.NewFF1(key, tweak, d.radix, d.n)
		if err != nil {
			t.Fatal(err)
		}
		if !asm.AESNI() {
			continue
		}
		narrow++
		gor := asm.WithoutAESNI()
		size := domainSize(d)
		var b [16]byte
		var buf [16]byte
		for range 2000 {
			fillRand(rng, b[:])
			hi, lo := words(new(big.Int).Mod(new(big.Int).SetBytes(b[:]), size))
			for _, decrypt := range []bool{false, true} {
				f, g := asm.Encrypt, gor.Encrypt
				if decrypt {
					f, g = asm.Decrypt, gor.Decrypt
				}
				a0, a1, aerr := f(&buf, hi, lo)
				g0, g1, gerr := g(&buf, hi, lo)
				if a0 != g0 || a1 != g1 || aerr != nil || gerr != nil {
					t.Fatalf("%s: decrypt %v of %x %x: AES-NI gives %x %x, %v; Go %x %x, %v", d.name, decrypt, hi, lo, a0, a1, aerr, g0, g1, gerr)
				}
			}
		}
	}
	if narrow != 12 {
		t.Errorf("%d domains run in AES-NI; want the 12 of radix 2^k with halves of at most 64 bits", narrow)
	}
}
