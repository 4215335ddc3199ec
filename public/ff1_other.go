//go:build !amd64 || purego

package public

// hasAESNI is false: the narrow FF1 rounds run in Go (encrypt64) through
// crypto/aes.
const hasAESNI = false

func ff1Encrypt64AESNI(*[15][16]byte, int, *[ff1Rounds][16]byte, *[2][16]byte, uint64, uint64, uint64, uint64) (uint64, uint64) {
	panic("public: no AES-NI")
}

func ff1Decrypt64AESNI(*[15][16]byte, int, *[ff1Rounds][16]byte, *[2][16]byte, uint64, uint64, uint64, uint64) (uint64, uint64) {
	panic("public: no AES-NI")
}

func aesBlocksAESNI(*[15][16]byte, int, int, *[16]byte) { panic("public: no AES-NI") }

func aesKeySchedule([]byte) (rk [15][16]byte, nr int) { return rk, 0 }
