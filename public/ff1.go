package public

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// ff1Rounds is FF1's number of Feistel rounds (NIST SP 800-38G, 6.2).
const ff1Rounds = 10

// ff1MinDomain is the smallest domain FF1 takes: radix^n >= 1,000,000
// (NIST SP 800-38G Rev. 1, 5.2).
const ff1MinDomain = 1_000_000

// errFF1Domain reports a number that is not below radix^n: not the value
// of any numeral string of the cipher's domain. The public codec never
// gives one (its domains are all 2^64 or 2^128 values).
var errFF1Domain = errors.New("public: FF1 input outside its domain")

// An ff1Cipher is FF1 (NIST SP 800-38G, Algorithms 7 and 8) over AES-128,
// -192 or -256 under one key and one tweak, for one domain: numeral strings
// of n digits in a radix, held as their value NUM_radix(X) (the first
// digit most significant), a number below radix^n, in a uint64 pair
// hi<<64 | lo. Two kinds of domain fit:
//
//   - radix 2^k (k = 1..16) over n digits with k*n <= 128 bits: the public
//     IDs' radix 16 over 16 digits (64 bits) and 32 digits (128 bits).
//     The halves A and B are at most 72 bits, reduced by a mask.
//   - any radix 2..65536 whose halves fit one word, radix^ceil(n/2) < 2^64
//     (the NIST samples' radix 10 over 10 digits and radix 36 over 19),
//     reduced with one 128-by-64-bit remainder a round.
//
// Each round costs one AES block. The PRF is CBC-MAC over P || Q; P (step
// 5: radix, n, u and the tweak's length) and the blocks of Q that hold
// only tweak bytes are the same in every round, so newFF1 encrypts them
// once. What is left of Q (the tweak's last bytes, padding, the round
// number i and NUM(B) in b <= 9 bytes) is one block, and d <= 16, so S is
// R itself.
//
// The narrow domains (radix 2^k, halves of at most 64 bits) run their
// rounds on one word a half: in AES-NI assembly, all ten in one call, on
// amd64 (ff1_amd64.s), in Go through crypto/aes elsewhere.
//
// An ff1Cipher is read-only once built and safe for concurrent use; the
// AES block passes through a 16-byte buffer each call is given (the AES-NI
// rounds keep it in registers instead).
type ff1Cipher struct {
	block   cipher.Block
	n, u, v uint   // digits: n = u + v, u = floor(n/2)
	k       uint   // bits a digit when the radix is 2^k; 0 otherwise
	b       uint   // bytes of NUM(B) in Q (step 3)
	yshift  uint   // 8*(16-d): NUM(S) = R >> yshift (steps 4, 6.iv)
	modU    uint64 // radix^u (radix not a power of 2)
	modV    uint64 // radix^v (radix not a power of 2)
	maskU   [2]uint64
	maskV   [2]uint64 // 2^(k*u)-1, 2^(k*v)-1 as hi, lo (radix 2^k)
	top     [2]uint64 // radix^n as hi, lo; zero when it is 2^128
	// q holds, for each round i, the CBC-MAC state before Q's last block
	// XORed with that block's fixed bytes (tweak tail, padding, [i]^1):
	// the round's AES input is q[i] XOR NUM(B).
	q [ff1Rounds][2]uint64
	// narrow is set when the radix is 2^k and a half is at most 64 bits
	// (k*v <= 64: the public IDs' domains); ys is then 64 - yshift, in
	// 0..32, and the rounds run on one word a half (encrypt64, decrypt64).
	narrow bool
	ys     uint
	// aesni is set when a narrow cipher's rounds run in AES-NI assembly
	// (hasAESNI), all ten in one call: rk holds the AES round keys, nr
	// their number of rounds, qk the rounds' states q as blocks, XORed
	// with round key 0. shuf holds two PSHUFB masks: xshuf puts a half (a
	// little-endian word) in a block's last 8 bytes, big-endian; yshuf
	// takes y mod 2^64 (R >> yshift) from an AES output block R.
	aesni bool
	nr    int
	rk    [15][16]byte
	qk    [ff1Rounds][16]byte
	shuf  [2][16]byte
}

// newFF1 returns the FF1 cipher under key (16, 24 or 32 bytes: AES-128,
// -192, -256) and tweak (any length below 2^32 bytes, nil for none) for
// numeral strings of n digits in radix. Errors name the sizes and ranges
// at fault, never the key.
func newFF1(key, tweak []byte, radix, n int) (*ff1Cipher, error) {
	if len(key) != 16 && len(key) != 24 && len(key) != 32 {
		return nil, fmt.Errorf("public: FF1 key of %d bytes: want 16, 24 or 32", len(key))
	}
	if radix < 2 || radix > 1<<16 {
		return nil, fmt.Errorf("public: FF1 radix %d: want 2 to 65536", radix)
	}
	if n < 2 || n > 255 {
		return nil, fmt.Errorf("public: FF1 over %d digits: want 2 to 255", n)
	}
	if uint64(len(tweak)) >= 1<<32 {
		return nil, fmt.Errorf("public: FF1 tweak of %d bytes: want fewer than 2^32", len(tweak))
	}
	c := &ff1Cipher{n: uint(n), u: uint(n / 2), v: uint(n - n/2)}
	if radix&(radix-1) == 0 {
		c.k = uint(bits.TrailingZeros(uint(radix)))
		if c.k*c.n > 128 {
			return nil, fmt.Errorf("public: FF1 radix %d over %d digits is %d bits: want at most 128", radix, n, c.k*c.n)
		}
		if c.k*c.n < 20 { // 2^19 < 1,000,000 <= 2^20
			return nil, fmt.Errorf("public: FF1 radix %d over %d digits is %d values: want at least %d", radix, n, uint64(1)<<(c.k*c.n), ff1MinDomain)
		}
		c.maskU = mask128(c.k * c.u)
		c.maskV = mask128(c.k * c.v)
		if c.k*c.n < 128 {
			c.top[0], c.top[1] = shl128(0, 1, c.k*c.n)
		}
		c.b = (c.k*c.v + 7) / 8
	} else {
		var ok bool
		if c.modV, ok = pow64(uint64(radix), c.v); !ok {
			return nil, fmt.Errorf("public: FF1 radix %d over %d digits: a half of %d digits must be below 2^64 (or the radix a power of 2)", radix, n, c.v)
		}
		c.modU, _ = pow64(uint64(radix), c.u) // u <= v
		c.top[0], c.top[1] = bits.Mul64(c.modU, c.modV)
		if c.top[0] == 0 && c.top[1] < ff1MinDomain {
			return nil, fmt.Errorf("public: FF1 radix %d over %d digits is %d values: want at least %d", radix, n, c.top[1], ff1MinDomain)
		}
		c.b = (uint(bits.Len64(c.modV-1)) + 7) / 8 // ceil(ceil(v*log2(radix))/8)
	}
	d := 4*((c.b+3)/4) + 4
	c.yshift = 8 * (16 - d)
	if c.k != 0 && c.k*c.v <= 64 { // b <= 8 bytes, so d <= 12 and yshift >= 32
		c.narrow, c.ys = true, 64-c.yshift
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("public: FF1 key of %d bytes: %w", len(key), err)
	}
	c.block = block

	// P (step 5), then Q = T || [0]^((-t-b-1) mod 16) || [i]^1 || [NUM(B)]^b
	// (step 6.i) through CBC-MAC with a zero IV, all but Q's last block.
	var s [16]byte
	s[0], s[1], s[2] = 1, 2, 1
	s[3], s[4], s[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	s[6], s[7] = 10, byte(c.u)
	binary.BigEndian.PutUint32(s[8:12], uint32(n))
	binary.BigEndian.PutUint32(s[12:16], uint32(len(tweak)))
	block.Encrypt(s[:], s[:])
	t := uint(len(tweak))
	pad := (16 - (t+c.b+1)%16) % 16
	q := make([]byte, t+pad+1+c.b)
	copy(q, tweak)
	for len(q) > 16 {
		xor16(&s, q[:16])
		block.Encrypt(s[:], s[:])
		q = q[16:]
	}
	xor16(&s, q) // Q's last block, with [i] and NUM(B) still zero
	s0, s1 := binary.BigEndian.Uint64(s[:8]), binary.BigEndian.Uint64(s[8:])
	for i := range c.q {
		ihi, ilo := shl128(0, uint64(i), 8*c.b)
		c.q[i] = [2]uint64{s0 ^ ihi, s1 ^ ilo}
	}
	if c.narrow && hasAESNI {
		c.aesni = true
		c.rk, c.nr = aesKeySchedule(key)
		for i, q := range c.q {
			binary.BigEndian.PutUint64(c.qk[i][:8], q[0])
			binary.BigEndian.PutUint64(c.qk[i][8:], q[1])
			xor16(&c.qk[i], c.rk[0][:])
		}
		for j := range 8 {
			c.shuf[0][j], c.shuf[0][8+j] = 0x80, byte(7-j)                  // zero; byte 7-j of the word
			c.shuf[1][j], c.shuf[1][8+j] = byte(15-int(c.yshift/8)-j), 0x80 // byte 15-yshift/8-j of R; zero
		}
	}
	return c, nil
}

// xor16 XORs the 16 bytes of x into s.
func xor16(s *[16]byte, x []byte) {
	for i := range s {
		s[i] ^= x[i]
	}
}

// encrypt returns FF1.Encrypt (Algorithm 7) of the numeral string whose
// value is hi<<64|lo, as the value of its ciphertext. buf carries the AES
// blocks: with a buffer that lives on the heap already (a caller's), the
// call allocates nothing. A value not below radix^n gives errFF1Domain.
func (c *ff1Cipher) encrypt(buf *[16]byte, hi, lo uint64) (uint64, uint64, error) {
	if !c.contains(hi, lo) {
		return 0, 0, errFF1Domain
	}
	a0, a1, b0, b1 := c.split(hi, lo)
	if c.aesni {
		a1, b1 = ff1Encrypt64AESNI(&c.rk, c.nr, &c.qk, &c.shuf, a1, b1, c.maskU[1], c.maskV[1])
		return c.join(0, a1, 0, b1)
	}
	if c.narrow {
		a1, b1 = c.encrypt64(buf, a1, b1)
		return c.join(0, a1, 0, b1)
	}
	for i := range ff1Rounds {
		y0, y1 := c.prf(buf, i, b0, b1)
		mask, mod := c.modulus(i)
		var c0, c1 uint64
		if c.k != 0 { // (NUM(A) + y) mod 2^(k*m)
			var carry uint64
			c1, carry = bits.Add64(a1, y1, 0)
			c0, _ = bits.Add64(a0, y0, carry)
			c0, c1 = c0&mask[0], c1&mask[1]
		} else { // (NUM(A) + y) mod radix^m, A below radix^m
			s, carry := bits.Add64(a1, bits.Rem64(y0, y1, mod), 0)
			if carry != 0 || s >= mod {
				s -= mod
			}
			c1 = s
		}
		a0, a1, b0, b1 = b0, b1, c0, c1
	}
	return c.join(a0, a1, b0, b1)
}

// decrypt returns FF1.Decrypt (Algorithm 8) of the numeral string whose
// value is hi<<64|lo; buf and the error are encrypt's.
func (c *ff1Cipher) decrypt(buf *[16]byte, hi, lo uint64) (uint64, uint64, error) {
	if !c.contains(hi, lo) {
		return 0, 0, errFF1Domain
	}
	a0, a1, b0, b1 := c.split(hi, lo)
	if c.aesni {
		a1, b1 = ff1Decrypt64AESNI(&c.rk, c.nr, &c.qk, &c.shuf, a1, b1, c.maskU[1], c.maskV[1])
		return c.join(0, a1, 0, b1)
	}
	if c.narrow {
		a1, b1 = c.decrypt64(buf, a1, b1)
		return c.join(0, a1, 0, b1)
	}
	for i := ff1Rounds - 1; i >= 0; i-- {
		y0, y1 := c.prf(buf, i, a0, a1)
		mask, mod := c.modulus(i)
		var c0, c1 uint64
		if c.k != 0 { // (NUM(B) - y) mod 2^(k*m)
			var borrow uint64
			c1, borrow = bits.Sub64(b1, y1, 0)
			c0, _ = bits.Sub64(b0, y0, borrow)
			c0, c1 = c0&mask[0], c1&mask[1]
		} else { // (NUM(B) - y) mod radix^m, B below radix^m
			y := bits.Rem64(y0, y1, mod)
			c1 = b1 - y
			if b1 < y {
				c1 += mod
			}
		}
		a0, a1, b0, b1 = c0, c1, a0, a1
	}
	return c.join(a0, a1, b0, b1)
}

// encrypt64 runs encrypt's ten rounds on the halves A and B of a narrow
// cipher, each one word (its high word zero), and returns them. Each round
// is one AES block and a few word operations: y = NUM(S) (steps 6.i-iv) is
// the AES block of the precomputed state q[i] with NUM(B) in its low word,
// shifted right by yshift (32 to 64 bits), of which the masks keep at most
// 64 bits: (R0<<s | R1>>(64-s)) mod 2^64 with s = 64-yshift, R1's part 0
// when s is 0.
func (c *ff1Cipher) encrypt64(buf *[16]byte, a, b uint64) (uint64, uint64) {
	m, next := c.maskU[1], c.maskV[1] // m = u in even rounds, v in odd ones
	s := c.ys & 63
	for i := range ff1Rounds {
		binary.BigEndian.PutUint64(buf[:8], c.q[i][0])
		binary.BigEndian.PutUint64(buf[8:], c.q[i][1]^b)
		c.block.Encrypt(buf[:], buf[:])
		y := binary.BigEndian.Uint64(buf[:8])<<s | binary.BigEndian.Uint64(buf[8:])>>(63-s)>>1
		a, b = b, (a+y)&m
		m, next = next, m
	}
	return a, b
}

// decrypt64 runs decrypt's ten rounds on the halves of a narrow cipher:
// encrypt64 backwards, y of NUM(A) subtracted from B.
func (c *ff1Cipher) decrypt64(buf *[16]byte, a, b uint64) (uint64, uint64) {
	m, next := c.maskV[1], c.maskU[1] // round 9 is odd
	s := c.ys & 63
	for i := ff1Rounds - 1; i >= 0; i-- {
		binary.BigEndian.PutUint64(buf[:8], c.q[i][0])
		binary.BigEndian.PutUint64(buf[8:], c.q[i][1]^a)
		c.block.Encrypt(buf[:], buf[:])
		y := binary.BigEndian.Uint64(buf[:8])<<s | binary.BigEndian.Uint64(buf[8:])>>(63-s)>>1
		a, b = (b-y)&m, a
		m, next = next, m
	}
	return a, b
}

// modulus returns radix^m of round i (step 6.v: m = u in even rounds, v in
// odd ones): as the mask 2^(k*m)-1 when the radix is 2^k, else as mod.
func (c *ff1Cipher) modulus(i int) (mask [2]uint64, mod uint64) {
	if i&1 == 0 {
		return c.maskU, c.modU
	}
	return c.maskV, c.modV
}

// prf returns y = NUM(S) of round i (steps 6.i-iv) for the half x0<<64|x1:
// one AES block over the precomputed state and NUM(x) in Q's last b bytes.
func (c *ff1Cipher) prf(buf *[16]byte, i int, x0, x1 uint64) (uint64, uint64) {
	binary.BigEndian.PutUint64(buf[:8], c.q[i][0]^x0)
	binary.BigEndian.PutUint64(buf[8:], c.q[i][1]^x1)
	c.block.Encrypt(buf[:], buf[:])
	return shr128(binary.BigEndian.Uint64(buf[:8]), binary.BigEndian.Uint64(buf[8:]), c.yshift)
}

// contains reports whether hi<<64|lo is below radix^n.
func (c *ff1Cipher) contains(hi, lo uint64) bool {
	if c.top == [2]uint64{} {
		return true // radix^n = 2^128
	}
	return hi < c.top[0] || hi == c.top[0] && lo < c.top[1]
}

// split returns NUM(A) and NUM(B) (step 2) of the value hi<<64|lo, each as
// a uint64 pair: A is the first u digits, B the last v.
func (c *ff1Cipher) split(hi, lo uint64) (a0, a1, b0, b1 uint64) {
	if c.k != 0 {
		a0, a1 = shr128(hi, lo, c.k*c.v)
		return a0, a1, hi & c.maskV[0], lo & c.maskV[1]
	}
	a1, b1 = bits.Div64(hi, lo, c.modV) // hi < modV: the value is below radix^n
	return 0, a1, 0, b1
}

// join returns the value of A || B (step 7).
func (c *ff1Cipher) join(a0, a1, b0, b1 uint64) (uint64, uint64, error) {
	if c.k != 0 {
		hi, lo := shl128(a0, a1, c.k*c.v)
		return hi | b0, lo | b1, nil
	}
	hi, lo := bits.Mul64(a1, c.modV)
	lo, carry := bits.Add64(lo, b1, 0)
	return hi + carry, lo, nil
}

// shl128 returns hi<<64|lo shifted left by s < 128 bits.
func shl128(hi, lo uint64, s uint) (uint64, uint64) {
	if s >= 64 {
		return lo << (s - 64), 0
	}
	return hi<<s | lo>>(64-s), lo << s
}

// shr128 returns hi<<64|lo shifted right by s <= 128 bits.
func shr128(hi, lo uint64, s uint) (uint64, uint64) {
	if s >= 64 {
		return 0, hi >> (s - 64)
	}
	return hi >> s, lo>>s | hi<<(64-s)
}

// mask128 returns 2^w - 1 (0 < w <= 128) as hi, lo.
func mask128(w uint) [2]uint64 {
	if w >= 64 {
		return [2]uint64{1<<(w-64) - 1, ^uint64(0)}
	}
	return [2]uint64{0, 1<<w - 1}
}

// pow64 returns x^e; ok is false when it is 2^64 or more.
func pow64(x uint64, e uint) (p uint64, ok bool) {
	p = 1
	for range e {
		hi, lo := bits.Mul64(p, x)
		if hi != 0 {
			return 0, false
		}
		p = lo
	}
	return p, true
}

// ff1Scratch holds 16-byte buffers for the AES blocks of calls that have
// no buffer of their caller's (Next, Parse's decryption), so that they do
// not allocate one each.
var ff1Scratch = sync.Pool{New: func() any { return new([16]byte) }}
