package public

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
)

// ErrEncoding reports an encoding name that is not one of Encodings, or an
// encoding that does not apply to an ID's size.
var ErrEncoding = errclass.Invalid("public: invalid encoding")

// Alphabets of the encodings.
const (
	CrockfordAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	// CrockfordCheckSymbols are the mod-37 check symbols: the 32 digits,
	// then the values 32-36.
	CrockfordCheckSymbols = CrockfordAlphabet + "*~$=U"
	Base58Alphabet        = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz" // Bitcoin's
	Base62Alphabet        = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	Base36Alphabet        = "0123456789abcdefghijklmnopqrstuvwxyz"
	HexAlphabet           = "0123456789abcdef"
	// bwmarrin/snowflake's Base32 (z-base-32) and Base58 alphabets.
	SnowflakeBase32Alphabet = "ybndrfg8ejkmcpqxot1uwisza345h769"
	SnowflakeBase58Alphabet = "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
)

// An Encoding writes an ID's raw bytes (big-endian, read as one unsigned
// number) as text and reads them back. The fixed-width encodings write
// every ID of a size with the same number of characters (leading zero
// digits kept): 13 Crockford characters for 64 bits, 26 for 128. The
// bwmarrin-* encodings reproduce bwmarrin/snowflake's ID methods (Base2,
// Base32, Base36, Base58, Base64), without leading zeros, for 8-byte IDs
// only. An Encoding implements idgen.Codec's AppendText and ParseText.
type Encoding struct {
	Name string
	Doc  string // one line
	// Sizes lists the ID sizes, in bytes, it applies to; nil: any.
	Sizes []int

	alphabet  string
	decode    [256]int8 // symbol -> digit, -1 if not one
	fixed     bool      // pads to Width
	check     bool      // appends Crockford's mod-37 check symbol
	b64       bool      // bwmarrin's Base64: std base64 of the decimal text
	hyphens   bool      // parse skips '-'
	crockford bool      // the Crockford alphabet, fixed width: crockford, crockford-check
	shift     uint      // bits a digit when the alphabet's size is 2^shift, else 0
}

// Encodings returns the encodings, in the order of the docs, in a new slice.
// Its elements are the encodings LookupEncoding returns, shared by every
// caller (a spec's encoded scheme is kept per encoding): do not modify them.
func Encodings() []*Encoding { return slices.Clone(encodings) }

var encodings = []*Encoding{
	newEncoding("crockford", "Crockford base32, uppercase, fixed width (13 chars for 64 bits, 26 for 128); reads either case, I and L as 1, O as 0, ignores hyphens", CrockfordAlphabet, true, false),
	newEncoding("crockford-check", "crockford plus its mod-37 check symbol (0-9A-Z*~$=U), one more char: catches any single wrong char and any swap of two adjacent ones", CrockfordAlphabet, true, true),
	newEncoding("base58", "the Bitcoin base58 alphabet, fixed width (11 chars for 64 bits, 22 for 128)", Base58Alphabet, true, false),
	newEncoding("base62", "0-9A-Za-z, fixed width (11 chars for 64 bits, 22 for 128)", Base62Alphabet, true, false),
	newEncoding("base36", "0-9a-z, fixed width (13 chars for 64 bits, 25 for 128); reads either case", Base36Alphabet, true, false),
	newEncoding("hex", "lowercase hex, 2 chars a byte; reads either case", HexAlphabet, true, false),
	snowflakeEncoding("bwmarrin-base2", "bwmarrin/snowflake ID.Base2: binary digits, no leading zeros", "01"),
	snowflakeEncoding("bwmarrin-base32", "bwmarrin/snowflake ID.Base32: z-base-32 "+SnowflakeBase32Alphabet, SnowflakeBase32Alphabet),
	snowflakeEncoding("bwmarrin-base36", "bwmarrin/snowflake ID.Base36: 0-9a-z, no leading zeros", Base36Alphabet),
	snowflakeEncoding("bwmarrin-base58", "bwmarrin/snowflake ID.Base58: "+SnowflakeBase58Alphabet, SnowflakeBase58Alphabet),
	snowflakeEncoding("bwmarrin-base64", "bwmarrin/snowflake ID.Base64: standard base64 of the decimal text", ""),
}

func newEncoding(name, doc, alphabet string, fixed, check bool) *Encoding {
	e := &Encoding{Name: name, Doc: doc, alphabet: alphabet, fixed: fixed, check: check}
	for i := range e.decode {
		e.decode[i] = -1
	}
	for i := range len(alphabet) {
		e.decode[alphabet[i]] = int8(i)
	}
	if n := len(alphabet); n > 1 && n&(n-1) == 0 {
		e.shift = uint(bits.TrailingZeros(uint(n)))
	}
	switch alphabet {
	case CrockfordAlphabet:
		for i := range len(alphabet) {
			e.decode[alphabet[i]|0x20] = int8(i) // lowercase letters; digits unchanged
		}
		for _, c := range "Ii" + "Ll" {
			e.decode[c] = 1
		}
		e.decode['O'], e.decode['o'] = 0, 0
		e.hyphens = true
		e.crockford = fixed
	case Base36Alphabet, HexAlphabet:
		for i := 10; i < len(alphabet); i++ {
			e.decode[alphabet[i]-0x20] = int8(i) // uppercase
		}
	}
	return e
}

func snowflakeEncoding(name, doc, alphabet string) *Encoding {
	e := newEncoding(name, doc, alphabet, false, false)
	e.Sizes = []int{8}
	e.b64 = alphabet == ""
	return e
}

// EncodingNames returns the names of the Encodings.
func EncodingNames() []string {
	names := make([]string, len(encodings))
	for i, e := range encodings {
		names[i] = e.Name
	}
	return names
}

// LookupEncoding returns the named encoding. An unknown name wraps
// ErrEncoding and lists the names there are.
func LookupEncoding(name string) (*Encoding, error) {
	for _, e := range encodings {
		if e.Name == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w: %s; want one of %s", ErrEncoding, quote(name), strings.Join(EncodingNames(), ", "))
}

// Fits reports whether e applies to IDs of size bytes; when not, the error
// wraps ErrEncoding and names the sizes it takes.
func (e *Encoding) Fits(size int) error {
	if e.Sizes == nil || slices.Contains(e.Sizes, size) {
		return nil
	}
	return fmt.Errorf("%w: %s applies to 64-bit IDs only, not to %d-bit ones", ErrEncoding, e.Name, size*8)
}

// Width returns the number of characters e writes for an ID of size bytes
// (its check symbol included), or 0 when the width varies.
func (e *Encoding) Width(size int) int {
	if !e.fixed {
		return 0
	}
	w := digits(size, len(e.alphabet))
	if e.check {
		w++
	}
	return w
}

// digits returns the smallest w with base^w >= 2^(8*size).
func digits(size, base int) int {
	nbits := 8 * size
	if base&(base-1) == 0 { // a power of 2
		per := bits.TrailingZeros(uint(base))
		return (nbits + per - 1) / per
	}
	w := 0
	var x [idgen.MaxSize + 1]byte // 2^bits needs bits+1 bits
	x[len(x)-1] = 1               // x = 1
	top := len(x) - 1 - size      // x >= 2^bits once a byte at or before top is set
	for {
		w++
		mulAdd(x[:], byte(base), 0)
		if slices.ContainsFunc(x[:top+1], func(c byte) bool { return c != 0 }) {
			return w
		}
	}
}

// AppendText appends the text of the raw bytes b to dst.
func (e *Encoding) AppendText(dst, b []byte) []byte {
	if e.b64 {
		var buf [20]byte
		dec := strconv.AppendUint(buf[:0], binary.BigEndian.Uint64(b), 10)
		return base64.StdEncoding.AppendEncode(dst, dec)
	}
	if !e.fixed {
		var buf [64]byte
		i := len(buf)
		base := uint64(len(e.alphabet))
		v := binary.BigEndian.Uint64(b)
		for v >= base {
			i--
			buf[i] = e.alphabet[v%base]
			v /= base
		}
		i--
		buf[i] = e.alphabet[v]
		return append(dst, buf[i:]...)
	}
	start := len(dst)
	w := digits(len(b), len(e.alphabet))
	dst = slices.Grow(dst, w+1)[:start+w]
	out := dst[start:]
	base := uint64(len(e.alphabet))
	switch {
	case e.shift != 0 && (len(b) == 8 || len(b) == 16):
		// A digit is shift bits: take them from the low end, no division.
		hi, lo := words(b)
		for i := w - 1; i >= 0; i-- {
			out[i] = e.alphabet[lo&(base-1)]
			hi, lo = shr128(hi, lo, e.shift)
		}
	case len(b) == 8:
		v := binary.BigEndian.Uint64(b)
		for i := w - 1; i >= 0; i-- {
			out[i] = e.alphabet[v%base]
			v /= base
		}
	default:
		var x [idgen.MaxSize]byte
		n := copy(x[:], b)
		for i := w - 1; i >= 0; i-- {
			out[i] = e.alphabet[divMod(x[:n], byte(base))]
		}
	}
	if e.check {
		dst = append(dst, CrockfordCheckSymbols[checkValue(out)])
	}
	return dst
}

// checkValue returns the base-32 number text (Crockford digits) mod 37.
func checkValue(text []byte) int {
	r := 0
	for _, c := range text {
		r = (r*32 + int(crockfordDigit(c))) % 37
	}
	return r
}

func crockfordDigit(c byte) int8 { return encodings[0].decode[c] }

// ParseText decodes text into the raw bytes b (len(b) is the ID's size).
// Errors wrap idgen.ErrSyntax (a character outside the alphabet, a wrong
// length, a check symbol that does not match) or idgen.ErrOutOfRange (a
// value above the size's maximum) and name the text and the encoding.
func (e *Encoding) ParseText(b, text []byte) error {
	if err := e.Fits(len(b)); err != nil {
		return err
	}
	if e.b64 {
		dec, err := base64.StdEncoding.DecodeString(string(text))
		if err != nil {
			return fmt.Errorf("%w: %s is not %s (standard base64 of a decimal ID)", idgen.ErrSyntax, quote(string(text)), e.Name)
		}
		v, err := idgen.ParseUint64(dec)
		if err != nil {
			return fmt.Errorf("%w (in %s %s)", err, e.Name, quote(string(text)))
		}
		binary.BigEndian.PutUint64(b, v)
		return nil
	}
	src, err := e.strip(text)
	if err != nil {
		return err
	}
	if w := digits(len(b), len(e.alphabet)); e.fixed && len(src) != w {
		return e.syntax(text, fmt.Sprintf("want %d chars for a %d-bit ID, got %d", w, 8*len(b), len(src)))
	}
	if len(src) == 0 {
		return e.syntax(text, "")
	}
	clear(b)
	for _, c := range src {
		d := e.decode[c]
		if d < 0 {
			return e.syntax(text, "")
		}
		if mulAdd(b, byte(len(e.alphabet)), byte(d)) != 0 {
			return fmt.Errorf("%w: %s %s exceeds %d bits", idgen.ErrOutOfRange, e.Name, quote(string(text)), 8*len(b))
		}
	}
	return nil
}

// strip returns text without hyphens (where e ignores them) and without
// its check symbol, once the symbol is checked against the digits before it.
func (e *Encoding) strip(text []byte) ([]byte, error) {
	src := text
	if e.hyphens && slices.Contains(text, '-') {
		src = make([]byte, 0, len(text))
		for _, c := range text {
			if c != '-' {
				src = append(src, c)
			}
		}
	}
	if !e.check {
		return src, nil
	}
	if len(src) == 0 {
		return nil, e.syntax(text, "")
	}
	sym := src[len(src)-1]
	src = src[:len(src)-1]
	want := -1
	if i := strings.IndexByte(CrockfordCheckSymbols, sym&^0x20); sym >= 'a' && sym <= 'z' && i >= 0 {
		want = i
	} else if i := strings.IndexByte(CrockfordCheckSymbols, sym); i >= 0 {
		want = i
	} else if d := crockfordDigit(sym); d >= 0 {
		want = int(d)
	}
	if want < 0 {
		return nil, e.syntax(text, "its last char must be a check symbol (0-9A-Z*~$=U)")
	}
	for _, c := range src {
		if e.decode[c] < 0 {
			return nil, e.syntax(text, "")
		}
	}
	if checkValue(src) != want {
		return nil, fmt.Errorf("%w: %s %s: check symbol %q does not match (a mistyped or swapped char)", idgen.ErrSyntax, e.Name, quote(string(text)), sym)
	}
	return src, nil
}

func (e *Encoding) syntax(text []byte, why string) error {
	if why == "" {
		why = "want chars of " + e.alphabet
	}
	return fmt.Errorf("%w: %s is not %s: %s", idgen.ErrSyntax, quote(string(text)), e.Name, why)
}

// mulAdd sets x = x*m + a (x big-endian) and returns the carry out.
func mulAdd(x []byte, m, a byte) byte {
	carry := uint(a)
	for i := len(x) - 1; i >= 0; i-- {
		v := uint(x[i])*uint(m) + carry
		x[i], carry = byte(v), v>>8
	}
	return byte(carry)
}

// divMod sets x = x / d (x big-endian) and returns the remainder.
func divMod(x []byte, d byte) byte {
	var r uint
	for i := range x {
		v := r<<8 | uint(x[i])
		x[i], r = byte(v/uint(d)), v%uint(d)
	}
	return byte(r)
}

// quote quotes s for an error message, cut to about 64 bytes (echo.Quote).
func quote(s string) string { return echo.Quote(s) }
