package public

// FF1 is the package's FF1 cipher, for its external tests.
type FF1 = ff1Cipher

// NewFF1 is newFF1.
func NewFF1(key, tweak []byte, radix, n int) (*FF1, error) { return newFF1(key, tweak, radix, n) }

// Encrypt is encrypt.
func (c *ff1Cipher) Encrypt(buf *[16]byte, hi, lo uint64) (uint64, uint64, error) {
	return c.encrypt(buf, hi, lo)
}

// Decrypt is decrypt.
func (c *ff1Cipher) Decrypt(buf *[16]byte, hi, lo uint64) (uint64, uint64, error) {
	return c.decrypt(buf, hi, lo)
}

// ErrFF1Domain is errFF1Domain.
var ErrFF1Domain = errFF1Domain

// HasAESNI is hasAESNI.
var HasAESNI = hasAESNI

// AESNI reports whether c's rounds run in AES-NI assembly.
func (c *ff1Cipher) AESNI() bool { return c.aesni }

// WithoutAESNI returns a copy of c whose rounds run in Go, through
// crypto/aes.
func (c *ff1Cipher) WithoutAESNI() *ff1Cipher {
	d := *c
	d.aesni = false
	return &d
}

// NewAESNIBlocks returns a function that encrypts p n times in place with
// AES under key, by aesBlocksAESNI and aesKeySchedule.
func NewAESNIBlocks(key []byte) func(n int, p *[16]byte) {
	rk, nr := aesKeySchedule(key)
	return func(n int, p *[16]byte) { aesBlocksAESNI(&rk, nr, n, p) }
}
