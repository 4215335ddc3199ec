package public

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/big"
	"sync"
)

// ff1Rounds is FF1's fixed number of Feistel rounds (SP 800-38G, §6.2).
const ff1Rounds = 10

// An FF1 is the FF1 cipher of NIST SP 800-38G over AES with the empty
// tweak and radix 2, for bit strings of 64 or 128 bits: a keyed
// pseudorandom permutation of the 2^64 (2^128) values. Encrypt and Decrypt
// run 10 rounds of one AES block each (the PRF's first block, which depends
// only on the lengths, is encrypted once by NewFF1). Safe for concurrent
// use.
type FF1 struct {
	block cipher.Block
	p64   [16]byte // CIPH_K(P) for n = 64
	p128  [16]byte // CIPH_K(P) for n = 128
}

// NewFF1 returns the FF1 cipher under key, an AES key of 16, 24 or 32
// bytes. Other sizes give an error naming the size.
func NewFF1(key []byte) (*FF1, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("public: FF1 key of %d bytes: want 16, 24 or 32", len(key))
	}
	f := &FF1{block: block}
	p64, p128 := ff1P(2, 64, 0), ff1P(2, 128, 0)
	block.Encrypt(f.p64[:], p64[:])
	block.Encrypt(f.p128[:], p128[:])
	return f, nil
}

// blocks holds the 16-byte scratch blocks the rounds encrypt in place: a
// block passed to cipher.Block escapes, and one per round would allocate.
var blocks = sync.Pool{New: func() any { return new([16]byte) }}

// ff1P returns FF1's block P = [1]^1 || [2]^1 || [1]^1 || [radix]^3 ||
// [10]^1 || [u mod 256]^1 || [n]^4 || [t]^4 (SP 800-38G Algorithm 7, step 5).
func ff1P(radix, n, t int) (p [16]byte) {
	p[0], p[1], p[2] = 1, 2, 1
	p[3], p[4], p[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	p[6] = 10
	p[7] = byte(n / 2)
	binary.BigEndian.PutUint32(p[8:12], uint32(n))
	binary.BigEndian.PutUint32(p[12:16], uint32(t))
	return p
}

// round64 returns the round function's y mod 2^32 for round i and the
// 32-bit half b (n = 64: b = 4 bytes, d = 8 bytes, Q = 0^11 || i || b).
func (f *FF1) round64(q *[16]byte, i int, b uint32) uint32 {
	*q = [16]byte{}
	q[11] = byte(i)
	binary.BigEndian.PutUint32(q[12:], b)
	for j := range q {
		q[j] ^= f.p64[j]
	}
	f.block.Encrypt(q[:], q[:])
	return binary.BigEndian.Uint32(q[4:8]) // NUM(S) mod 2^32, S = R[0:8]
}

// Encrypt64 returns the FF1 encryption of the 64-bit string x (its most
// significant bit first).
func (f *FF1) Encrypt64(x uint64) uint64 {
	q := blocks.Get().(*[16]byte)
	defer blocks.Put(q)
	a, b := uint32(x>>32), uint32(x)
	for i := range ff1Rounds {
		a, b = b, a+f.round64(q, i, b)
	}
	return uint64(a)<<32 | uint64(b)
}

// Decrypt64 reverses Encrypt64.
func (f *FF1) Decrypt64(x uint64) uint64 {
	q := blocks.Get().(*[16]byte)
	defer blocks.Put(q)
	a, b := uint32(x>>32), uint32(x)
	for i := ff1Rounds - 1; i >= 0; i-- {
		a, b = b-f.round64(q, i, a), a
	}
	return uint64(a)<<32 | uint64(b)
}

// round128 is round64 for n = 128: b = 8 bytes, d = 12 bytes,
// Q = 0^7 || i || b, y mod 2^64 = R[4:12].
func (f *FF1) round128(q *[16]byte, i int, b uint64) uint64 {
	*q = [16]byte{}
	q[7] = byte(i)
	binary.BigEndian.PutUint64(q[8:], b)
	for j := range q {
		q[j] ^= f.p128[j]
	}
	f.block.Encrypt(q[:], q[:])
	return binary.BigEndian.Uint64(q[4:12])
}

// Encrypt128 returns the FF1 encryption of the 128-bit string hi||lo.
func (f *FF1) Encrypt128(hi, lo uint64) (uint64, uint64) {
	q := blocks.Get().(*[16]byte)
	defer blocks.Put(q)
	a, b := hi, lo
	for i := range ff1Rounds {
		a, b = b, a+f.round128(q, i, b)
	}
	return a, b
}

// Decrypt128 reverses Encrypt128.
func (f *FF1) Decrypt128(hi, lo uint64) (uint64, uint64) {
	q := blocks.Get().(*[16]byte)
	defer blocks.Put(q)
	a, b := hi, lo
	for i := ff1Rounds - 1; i >= 0; i-- {
		a, b = b-f.round128(q, i, a), a
	}
	return a, b
}

// ff1Generic is SP 800-38G Algorithms 7 and 8 for any radix in [2, 2^16],
// tweak and numeral string x, written step by step with big integers: the
// reference the fast paths are tested against, and what NIST's sample
// vectors check. decrypt selects Algorithm 8.
func ff1Generic(key, tweak []byte, radix int, x []uint16, decrypt bool) []uint16 {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	n, t := len(x), len(tweak)
	u, v := n/2, n-n/2
	a, b := append([]uint16(nil), x[:u]...), append([]uint16(nil), x[u:]...)
	r := big.NewInt(int64(radix))
	// b = ceil(ceil(v * log2(radix)) / 8): the bytes of radix^v - 1.
	rv := new(big.Int).Exp(r, big.NewInt(int64(v)), nil)
	bb := (new(big.Int).Sub(rv, big.NewInt(1)).BitLen() + 7) / 8
	d := 4*((bb+3)/4) + 4
	p := ff1P(radix, n, t)
	p[7] = byte(u)
	for step := range ff1Rounds {
		i := step
		if decrypt {
			i = ff1Rounds - 1 - step
		}
		src := b
		if decrypt {
			src = a
		}
		q := append([]byte(nil), tweak...)
		q = append(q, make([]byte, ((-t-bb-1)%16+16)%16)...)
		q = append(q, byte(i))
		q = append(q, pad(num(src, r).Bytes(), bb)...)
		// R = PRF(P || Q): CBC-MAC with the zero IV.
		y := make([]byte, 16)
		msg := append(p[:], q...)
		for j := 0; j < len(msg); j += 16 {
			for k := range 16 {
				y[k] ^= msg[j+k]
			}
			block.Encrypt(y, y)
		}
		s := append([]byte(nil), y...)
		for j := 1; len(s) < d; j++ {
			var c [16]byte
			binary.BigEndian.PutUint64(c[8:], uint64(j))
			for k := range 16 {
				c[k] ^= y[k]
			}
			block.Encrypt(c[:], c[:])
			s = append(s, c[:]...)
		}
		yy := new(big.Int).SetBytes(s[:d])
		m := u
		if i%2 == 1 {
			m = v
		}
		mod := new(big.Int).Exp(r, big.NewInt(int64(m)), nil)
		if decrypt {
			c := new(big.Int).Sub(num(b, r), yy)
			c.Mod(c, mod)
			a, b = str(c, r, m), a
		} else {
			c := new(big.Int).Add(num(a, r), yy)
			c.Mod(c, mod)
			a, b = b, str(c, r, m)
		}
	}
	return append(a, b...)
}

// num is NUM_radix(x): x's numerals read as a number, most significant first.
func num(x []uint16, r *big.Int) *big.Int {
	z := new(big.Int)
	for _, c := range x {
		z.Mul(z, r).Add(z, big.NewInt(int64(c)))
	}
	return z
}

// str is STR^m_radix(z): z as m numerals, most significant first.
func str(z, r *big.Int, m int) []uint16 {
	out := make([]uint16, m)
	z = new(big.Int).Set(z)
	mod := new(big.Int)
	for i := m - 1; i >= 0; i-- {
		z.DivMod(z, r, mod)
		out[i] = uint16(mod.Int64())
	}
	return out
}

// pad left-pads b with zero bytes to n bytes.
func pad(b []byte, n int) []byte {
	return append(make([]byte, n-len(b)), b...)
}
