package public

import (
	"fmt"
	"strings"

	"github.com/idgenkit/idgen"
)

// typeIDAlphabet is TypeID's base32 alphabet: Crockford's, lowercase.
const typeIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// MaxTypeIDPrefix is the longest TypeID prefix, in characters.
const MaxTypeIDPrefix = 63

// ValidTypeIDPrefix checks a TypeID type prefix (spec 0.3.0): empty, or at
// most 63 of [a-z_], starting and ending with [a-z]. The error wraps
// idgen.ErrSyntax and names the prefix and the rule.
func ValidTypeIDPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	bad := len(prefix) > MaxTypeIDPrefix || prefix[0] == '_' || prefix[len(prefix)-1] == '_'
	for i := 0; i < len(prefix) && !bad; i++ {
		c := prefix[i]
		bad = (c < 'a' || c > 'z') && c != '_'
	}
	if bad {
		return fmt.Errorf("%w: TypeID prefix %s: want at most %d of a-z and _, starting and ending with a-z", idgen.ErrSyntax, quote(prefix), MaxTypeIDPrefix)
	}
	return nil
}

// AppendTypeID appends the TypeID of prefix and the 16 bytes u (a UUID):
// prefix, '_' (left out when prefix is empty) and u as 26 lowercase
// Crockford base32 characters. prefix must be valid (ValidTypeIDPrefix).
func AppendTypeID(dst []byte, prefix string, u []byte) []byte {
	if prefix != "" {
		dst = append(append(dst, prefix...), '_')
	}
	start := len(dst)
	dst = encodings[0].AppendText(dst, u[:16])
	for i := start; i < len(dst); i++ {
		dst[i] |= 0x20 // lowercase: digits are unchanged
	}
	return dst
}

// ParseTypeID decodes a TypeID per spec 0.3.0 into its prefix and the 16
// bytes of its UUID (u). The suffix is strict: exactly 26 characters of the
// lowercase alphabet 0-9a-hjkmnp-tv-z, the first at most 7. Errors wrap
// idgen.ErrSyntax or idgen.ErrOutOfRange and name the text.
func ParseTypeID(u []byte, text string) (prefix string, err error) {
	suffix := text
	if i := strings.LastIndexByte(text, '_'); i >= 0 {
		prefix, suffix = text[:i], text[i+1:]
		if prefix == "" {
			return "", fmt.Errorf("%w: TypeID %s: an empty prefix takes no '_'", idgen.ErrSyntax, quote(text))
		}
		if err := ValidTypeIDPrefix(prefix); err != nil {
			return "", err
		}
	}
	if len(suffix) != 26 {
		return "", fmt.Errorf("%w: TypeID %s: want a suffix of 26 chars of %s, got %d", idgen.ErrSyntax, quote(text), typeIDAlphabet, len(suffix))
	}
	for i := range len(suffix) {
		c := suffix[i]
		if c >= 'A' && c <= 'Z' || encodings[0].decode[c] < 0 || c == 'i' || c == 'l' || c == 'o' || c == 'u' {
			return "", fmt.Errorf("%w: TypeID %s: the suffix takes only %s", idgen.ErrSyntax, quote(text), typeIDAlphabet)
		}
	}
	if suffix[0] > '7' {
		return "", fmt.Errorf("%w: TypeID %s exceeds 128 bits (the suffix's first char must be 0-7)", idgen.ErrOutOfRange, quote(text))
	}
	if err := encodings[0].ParseText(u[:16], []byte(suffix)); err != nil {
		return "", err
	}
	return prefix, nil
}
