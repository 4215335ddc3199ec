package public_test

import (
	"crypto/aes"
	"encoding/binary"
	"math/big"
)

// refFF1 is FF1 (NIST SP 800-38G, Algorithms 7 and 8) written the way the
// standard reads: math/big numbers and a whole CBC-MAC over P || Q in
// every round, S grown block by block to d bytes. It is the second oracle,
// for the radices above capitalone/fpe's 62, and is itself held to the
// NIST samples and to capitalone/fpe.
func refFF1(key, tweak []byte, radix, n int, x *big.Int, decrypt bool) *big.Int {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	u, v := n/2, n-n/2
	r := big.NewInt(int64(radix))
	pow := func(e int) *big.Int { return new(big.Int).Exp(r, big.NewInt(int64(e)), nil) }
	modU, modV := pow(u), pow(v)
	A, B := new(big.Int).DivMod(x, modV, new(big.Int))
	b := (new(big.Int).Sub(modV, big.NewInt(1)).BitLen() + 7) / 8 // ceil(ceil(v*log2(radix))/8)
	d := 4*((b+3)/4) + 4
	t := len(tweak)
	var p [16]byte
	p[0], p[1], p[2] = 1, 2, 1
	p[3], p[4], p[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	p[6], p[7] = 10, byte(u)
	binary.BigEndian.PutUint32(p[8:], uint32(n))
	binary.BigEndian.PutUint32(p[12:], uint32(t))
	pad := ((-t-b-1)%16 + 16) % 16
	y := func(i int, num *big.Int) *big.Int {
		q := make([]byte, t+pad+1+b)
		copy(q, tweak)
		q[t+pad] = byte(i)
		num.FillBytes(q[t+pad+1:])
		pq := append(p[:], q...)
		var mac [16]byte // CBC-MAC, zero IV
		for len(pq) > 0 {
			for j := range mac {
				mac[j] ^= pq[j]
			}
			block.Encrypt(mac[:], mac[:])
			pq = pq[16:]
		}
		s := append([]byte(nil), mac[:]...)
		for j := uint64(1); len(s) < d; j++ {
			var blk [16]byte
			binary.BigEndian.PutUint64(blk[8:], j)
			for k := range blk {
				blk[k] ^= mac[k]
			}
			block.Encrypt(blk[:], blk[:])
			s = append(s, blk[:]...)
		}
		return new(big.Int).SetBytes(s[:d])
	}
	mod := func(i int) *big.Int {
		if i%2 == 0 {
			return modU
		}
		return modV
	}
	if !decrypt {
		for i := range 10 {
			c := new(big.Int).Add(A, y(i, B))
			A, B = B, c.Mod(c, mod(i))
		}
	} else {
		for i := 9; i >= 0; i-- {
			c := new(big.Int).Sub(B, y(i, A))
			A, B = c.Mod(c, mod(i)), A
		}
	}
	return A.Add(A.Mul(A, modV), B)
}
