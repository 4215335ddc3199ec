package public

import (
	"errors"
	"fmt"
	"sync"

	"github.com/capitalone/fpe/ff1"
)

// ff1Radix is the radix the FF1 ciphers work in: an ID of n bytes is 2n
// hex digits, so the permutation is over exactly its 2^(8n) values (16
// digits = 2^64, 32 digits = 2^128; FF1 needs radix^minlen >= 1,000,000).
const ff1Radix = 16

// errCipher reports that the FF1 library refused our own input: it cannot
// happen with the hex strings ff1Cipher makes.
var errCipher = errors.New("public: FF1 cipher failed")

// An ff1Cipher is NIST SP 800-38G FF1 over AES with the empty tweak, from
// github.com/capitalone/fpe/ff1, in radix 16 over the bytes of an ID. The
// library's Cipher keeps one CBC encrypter whose IV it changes, so it is
// not safe for concurrent use: each call takes a Cipher of its own from a
// pool (built from the key once per goroutine that needs one, not per ID).
// Safe for concurrent use.
type ff1Cipher struct {
	pool sync.Pool // of *ff1.Cipher
}

// newFF1 returns the FF1 cipher under key, an AES key of 16, 24 or 32
// bytes. Other sizes give an error naming the size, never the key.
func newFF1(key []byte) (*ff1Cipher, error) {
	c, err := ff1.NewCipher(ff1Radix, 0, key, nil)
	if err != nil {
		return nil, fmt.Errorf("public: FF1 key of %d bytes: want 16, 24 or 32", len(key))
	}
	key = append([]byte(nil), key...)
	f := &ff1Cipher{pool: sync.Pool{New: func() any {
		c, err := ff1.NewCipher(ff1Radix, 0, key, nil)
		if err != nil {
			return nil // the key was accepted above; not reached
		}
		return &c
	}}}
	f.pool.Put(&c)
	return f, nil
}

const hexDigits = "0123456789abcdef"

// crypt writes to dst the FF1 encryption (decrypt: decryption) of src, a
// 64- or 128-bit string, most significant byte first; dst and src have the
// same length, at most 16 bytes, and may be the same slice.
func (f *ff1Cipher) crypt(dst, src []byte, decrypt bool) error {
	var buf [32]byte
	digits := buf[:2*len(src)]
	for i, b := range src {
		digits[2*i], digits[2*i+1] = hexDigits[b>>4], hexDigits[b&15]
	}
	c, _ := f.pool.Get().(*ff1.Cipher)
	if c == nil {
		return errCipher
	}
	var out string
	var err error
	if decrypt {
		out, err = c.Decrypt(string(digits))
	} else {
		out, err = c.Encrypt(string(digits))
	}
	f.pool.Put(c)
	if err != nil || len(out) != len(digits) {
		return errCipher
	}
	for i := range dst {
		hi, lo := unhex(out[2*i]), unhex(out[2*i+1])
		if hi < 0 || lo < 0 {
			return errCipher
		}
		dst[i] = byte(hi<<4 | lo)
	}
	return nil
}

// unhex returns the value of the hex digit c (the library writes lowercase),
// or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	}
	return -1
}
