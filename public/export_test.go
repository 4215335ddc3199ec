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
