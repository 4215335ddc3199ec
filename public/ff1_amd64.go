//go:build !purego

package public

import (
	"encoding/binary"
)

// hasAESNI reports whether the narrow FF1 rounds run in AES-NI assembly
// (ff1_amd64.s): CPUID leaf 1 says AES (ECX bit 25) and SSSE3 (bit 9,
// PSHUFB), as golang.org/x/sys/cpu reads them, without that requirement.
var hasAESNI = cpuid1ECX()&(1<<25|1<<9) == 1<<25|1<<9

// cpuid1ECX returns ECX of CPUID leaf 1 (ff1_amd64.s).
func cpuid1ECX() uint32

// ff1Encrypt64AESNI is encrypt64's ten rounds in one call: rk holds the
// round keys (aesKeySchedule), qk the rounds' states XORed with round key
// 0 and shuf the two byte shuffles (ff1Cipher.qk, shuf). It returns A and
// B.
//
//go:noescape
func ff1Encrypt64AESNI(rk *[15][16]byte, nr int, qk *[ff1Rounds][16]byte, shuf *[2][16]byte, a, b, mu, mv uint64) (uint64, uint64)

// ff1Decrypt64AESNI is decrypt64's ten rounds in one call; its arguments
// are ff1Encrypt64AESNI's.
//
//go:noescape
func ff1Decrypt64AESNI(rk *[15][16]byte, nr int, qk *[ff1Rounds][16]byte, shuf *[2][16]byte, a, b, mu, mv uint64) (uint64, uint64)

// aesBlocksAESNI encrypts the block p n times in place with AES of nr
// rounds under the round keys rk: for tests and the floor benchmark.
//
//go:noescape
func aesBlocksAESNI(rk *[15][16]byte, nr int, n int, p *[16]byte)

// subWordAESNI returns SubWord(w) (FIPS 197, 5.2): the S-box applied to
// each byte, by AESENCLAST, so without a table indexed by key bytes.
func subWordAESNI(w uint32) uint32

// aesKeySchedule returns the round keys of key (16, 24 or 32 bytes), each
// 16 bytes in memory order, and the number of rounds nr (10, 12, 14): the
// key expansion of FIPS 197, 5.2, for AES-NI.
func aesKeySchedule(key []byte) (rk [15][16]byte, nr int) {
	nk := len(key) / 4
	nr = nk + 6
	var w [4 * 15]uint32
	for i := range nk {
		w[i] = binary.BigEndian.Uint32(key[4*i:])
	}
	rcon := uint32(1)
	for i := nk; i < 4*(nr+1); i++ {
		t := w[i-1]
		switch {
		case i%nk == 0:
			t = subWordAESNI(t<<8|t>>24) ^ rcon<<24
			rcon <<= 1
			if rcon&0x100 != 0 {
				rcon ^= 0x11b
			}
		case nk > 6 && i%nk == 4:
			t = subWordAESNI(t)
		}
		w[i] = w[i-nk] ^ t
	}
	for i := range 4 * (nr + 1) {
		binary.BigEndian.PutUint32(rk[i/4][4*(i%4):], w[i])
	}
	return rk, nr
}
