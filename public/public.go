package public

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/errclass"
)

// ErrKey reports a missing or malformed key. Its messages name where the
// key came from, never the key.
var ErrKey = errclass.Invalid("public: invalid key")

// ErrTweak reports a tweak longer than MaxTweakSize.
var ErrTweak = errclass.Invalid("public: invalid tweak")

// KeySize is the size of a key in bytes: an AES-256 key.
const KeySize = 32

// A Key is one encryption key and the ID that public IDs carry to name it.
type Key struct {
	// ID is the key ID, 0-31, written as the first character of every
	// public ID as one Crockford base32 digit (0-9, A-Z without I, L, O, U).
	ID byte
	// Secret is the AES-256 key, KeySize bytes.
	Secret []byte
}

// ParseKeys reads keys from text: either 64 hex digits (one 32-byte key,
// key ID 0) or a list of ID:HEX entries, each ID one Crockford digit
// ("1:<64 hex>,0:<64 hex>"), separated by commas or newlines (a key
// file's lines; a line starting with # is a comment). The first key
// issues; all decode. from names the text's source (an environment
// variable, a file) in errors, which wrap ErrKey and never contain the
// text.
func ParseKeys(from, text string) ([]Key, error) {
	var entries []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			entries = append(entries, strings.Split(line, ",")...)
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: %s is not set or holds no key: want 64 hex digits (a %d-byte key), or ID:HEX,ID:HEX for several", ErrKey, from, KeySize)
	}
	var keys []Key
	for i, entry := range entries {
		id, secret := "0", strings.TrimSpace(entry)
		if k, s, ok := strings.Cut(secret, ":"); ok {
			id, secret = strings.TrimSpace(k), strings.TrimSpace(s)
		}
		if len(id) != 1 || crockfordDigit(id[0]) < 0 {
			return nil, fmt.Errorf("%w: %s: key %d: its key ID must be one Crockford base32 digit (0-9, A-Z but I, L, O, U)", ErrKey, from, i+1)
		}
		b, err := hex.DecodeString(secret)
		if err != nil || len(b) != KeySize {
			return nil, fmt.Errorf("%w: %s: key %d: want %d hex digits (a %d-byte key), got %d chars", ErrKey, from, i+1, 2*KeySize, KeySize, len(secret))
		}
		keys = append(keys, Key{ID: byte(crockfordDigit(id[0])), Secret: b})
	}
	return keys, nil
}

// A Config configures public IDs.
type Config struct {
	// Keys are the keys, the first one issuing; decoding picks the key by
	// the ID's key ID. At least one; key IDs must differ.
	Keys []Key
	// Encoding writes the encrypted bits; nil means crockford.
	Encoding *Encoding
	// Tweak is FF1's tweak (NIST SP 800-38G), at most MaxTweakSize bytes,
	// the same for every key: a public value, not a secret, that
	// separates domains. The same inner ID under two tweaks gives
	// unrelated public IDs, and a public ID read under another tweak
	// decrypts to an unrelated inner ID (no error: FF1 cannot tell). Nil
	// or empty means the empty tweak, which public IDs issued before
	// tweaks existed use. Changing it, like losing the key, loses the way
	// back to the inner IDs of the IDs issued under the old one.
	Tweak []byte
}

// MaxTweakSize is the longest Config.Tweak, in bytes.
const MaxTweakSize = 64

// ff1Radix is the radix of the public IDs' FF1: an ID of n bytes is 2n hex
// digits, so the cipher permutes exactly its 2^(8n) values.
const ff1Radix = 16

// NewScheme returns the scheme of public IDs over inner, a scheme of 8 or
// 16 bytes (the Snowflake family, segment and ticket; UUIDs and ULID). A
// public ID's raw bytes are its key ID (1 byte) and the inner ID encrypted
// with FF1 under that key (inner.Size bytes). Its text is the key ID as one
// Crockford digit followed by the encrypted bits in cfg.Encoding: 14
// characters over a 64-bit ID in crockford, 27 over a 128-bit one. Its Time
// and Decompose decrypt: the inner ID's time, and key_id followed by the
// inner ID's fields. Each call makes a new scheme, and IDs of two schemes
// compare unequal: compare their text. Errors wrap ErrKey, ErrEncoding or
// ErrTweak.
//
// The encryption is FF1 (NIST SP 800-38G) over AES-256 with cfg.Tweak, in
// radix 16 over the inner ID's hex digits: 16 digits (2^64 values) for a
// 64-bit ID, 32 (2^128) for a 128-bit one, so that it permutes exactly the
// inner IDs' values.
func NewScheme(inner *idgen.Scheme, cfg Config) (*idgen.Scheme, error) {
	if inner.Size != 8 && inner.Size != 16 {
		return nil, fmt.Errorf("%w: public IDs wrap 64- or 128-bit IDs; %s IDs are %d bits", ErrEncoding, inner.Name, inner.Size*8)
	}
	enc := cfg.Encoding
	if enc == nil {
		enc = encodings[0]
	}
	if err := enc.Fits(inner.Size); err != nil {
		return nil, err
	}
	if len(cfg.Keys) == 0 {
		return nil, fmt.Errorf("%w: no key", ErrKey)
	}
	if len(cfg.Tweak) > MaxTweakSize {
		return nil, fmt.Errorf("%w: %s is %d bytes: want at most %d", ErrTweak, quote(string(cfg.Tweak)), len(cfg.Tweak), MaxTweakSize)
	}
	c := &codec{inner: inner, enc: enc, width: 1 + enc.Width(inner.Size)}
	if c.width == 1 {
		c.width = 1 + 64 // bwmarrin-base2, the widest of the varying ones
	}
	for i, k := range cfg.Keys {
		if k.ID > 31 {
			return nil, fmt.Errorf("%w: key %d: key ID %d: want 0-31", ErrKey, i+1, k.ID)
		}
		if c.ciphers[k.ID] != nil {
			return nil, fmt.Errorf("%w: key %d: key ID %c given twice", ErrKey, i+1, CrockfordAlphabet[k.ID])
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("%w: key %d: want %d bytes, got %d", ErrKey, i+1, KeySize, len(k.Secret))
		}
		f, err := newFF1(k.Secret, cfg.Tweak, ff1Radix, 2*inner.Size)
		if err != nil {
			return nil, err // not reached: the sizes are checked above
		}
		c.ciphers[k.ID] = f
	}
	c.issuer = cfg.Keys[0].ID
	return &idgen.Scheme{Name: "public", Size: inner.Size + 1, Column: idgen.ColumnText, Codec: c}, nil
}

// codec is the Codec of a public scheme.
type codec struct {
	inner   *idgen.Scheme
	enc     *Encoding
	ciphers [32]*ff1Cipher // by key ID, radix 16 over 2*inner.Size digits
	issuer  byte
	width   int // of the text, in bytes (at most)
}

func (c *codec) AppendText(dst, b []byte) []byte {
	start := len(dst)
	dst = append(dst, CrockfordAlphabet[b[0]&31])
	if !c.enc.check {
		return c.enc.AppendText(dst, b[1:])
	}
	// The check symbol covers the key ID too: encode without it, then
	// append the check over the whole text.
	dst = encodings[0].AppendText(dst, b[1:])
	return append(dst, CrockfordCheckSymbols[checkValue(dst[start:])])
}

func (c *codec) ParseText(b, text []byte) error {
	if len(text) == 0 {
		return fmt.Errorf("%w: empty public ID", idgen.ErrSyntax)
	}
	kid := crockfordDigit(text[0])
	if kid < 0 {
		return fmt.Errorf("%w: %s: a public ID starts with its key ID, one Crockford digit (0-9, A-Z but I, L, O, U)", idgen.ErrSyntax, quote(string(text)))
	}
	if c.ciphers[kid] == nil {
		return fmt.Errorf("%w: public ID %s names key ID %c, which no configured key has", idgen.ErrSyntax, quote(string(text)), CrockfordAlphabet[kid])
	}
	b[0] = byte(kid)
	if !c.enc.check {
		return inPublicID(c.enc.ParseText(b[1:], text[1:]), text)
	}
	// The check symbol covers the key ID too.
	src, err := c.enc.strip(text)
	if err != nil {
		return err
	}
	if len(src) == 0 {
		return fmt.Errorf("%w: %s is too short for a public ID (key ID, digits, check symbol)", idgen.ErrSyntax, quote(string(text)))
	}
	return inPublicID(encodings[0].ParseText(b[1:], src[1:]), text)
}

// inPublicID adds to err, about the digits after a public ID's key ID, the
// whole public ID text, so that the error names what the caller gave.
func inPublicID(err error, text []byte) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w (in public ID %s, after its key ID)", err, quote(string(text)))
}

// decrypt returns the inner ID of the public ID b, or the zero ID when no
// configured key has its key ID.
func (c *codec) decrypt(b []byte) idgen.ID {
	f := c.ciphers[b[0]&31]
	if f == nil {
		return idgen.ID{}
	}
	hi, lo := words(b[1 : 1+c.inner.Size])
	buf := ff1Scratch.Get().(*[16]byte)
	hi, lo, err := f.decrypt(buf, hi, lo)
	ff1Scratch.Put(buf)
	if err != nil {
		return idgen.ID{}
	}
	if c.inner.Size == 8 {
		return c.inner.FromUint64(lo)
	}
	return c.inner.FromWords(hi, lo, 0)
}

// words returns the 8 or 16 big-endian bytes b as the number hi<<64|lo.
func words(b []byte) (hi, lo uint64) {
	if len(b) == 8 {
		return 0, binary.BigEndian.Uint64(b)
	}
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:16])
}

func (c *codec) Time(b []byte) time.Time { return c.decrypt(b).Time() }

func (c *codec) Decompose(b []byte) []idgen.Field {
	fields := []idgen.Field{{Name: "key_id", Value: uint64(b[0]), Bits: 8}}
	if id := c.decrypt(b); !id.IsZero() {
		fields = append(fields, c.inner.Decompose(id)...)
	}
	return fields
}

// Inner returns the inner ID a public ID encrypts, decrypted with its key;
// ok is false when id is not of a scheme NewScheme made.
func Inner(id idgen.ID) (inner idgen.ID, ok bool) {
	s := id.Scheme()
	if s == nil {
		return idgen.ID{}, false
	}
	c, ok := s.Codec.(*codec)
	if !ok {
		return idgen.ID{}, false
	}
	inner = c.decrypt(id.Bytes())
	return inner, !inner.IsZero()
}

// innerWords returns the inner ID's bytes as the number hi<<64|lo.
func innerWords(inner idgen.ID) (hi, lo uint64) {
	if v, ok := inner.Uint64(); ok {
		return 0, v
	}
	return words(inner.Bytes())
}

// encrypt returns inner, an ID of the scheme's inner scheme, as a public
// ID of s under the issuing key. Its error wraps errFF1Domain and is not
// expected: the domains are all the values of 64 or 128 bits.
func encrypt(s *idgen.Scheme, c *codec, inner idgen.ID) (idgen.ID, error) {
	hi, lo := innerWords(inner)
	buf := ff1Scratch.Get().(*[16]byte)
	hi, lo, err := c.ciphers[c.issuer].encrypt(buf, hi, lo)
	ff1Scratch.Put(buf)
	if err != nil {
		return idgen.ID{}, err
	}
	kid := uint64(c.issuer) << 56
	if c.inner.Size == 8 {
		return s.FromWords(kid|lo>>8, lo<<56, 0), nil
	}
	return s.FromWords(kid|hi>>8, hi<<56|lo>>8, uint32(lo&0xff)<<24), nil
}

// appendPublic appends the text of inner's public ID under the issuing key
// to dst. Its AES blocks pass through dst's spare capacity (grown when
// short of 16 bytes or the text's width), cleared before the text is
// written: with a buffer of the caller's that has room, it allocates
// nothing. Its error is encrypt's.
func (c *codec) appendPublic(dst []byte, inner idgen.ID) ([]byte, error) {
	dst = slices.Grow(dst, max(16, c.width))
	buf := (*[16]byte)(dst[len(dst) : len(dst)+16])
	hi, lo := innerWords(inner)
	hi, lo, err := c.ciphers[c.issuer].encrypt(buf, hi, lo)
	clear(buf[:])
	if err != nil {
		return dst, err
	}
	if c.enc.crockford {
		return c.appendCrockford(dst, hi, lo), nil
	}
	var raw [17]byte
	raw[0] = c.issuer
	if c.inner.Size == 8 {
		binary.BigEndian.PutUint64(raw[1:9], lo)
	} else {
		binary.BigEndian.PutUint64(raw[1:9], hi)
		binary.BigEndian.PutUint64(raw[9:17], lo)
	}
	return c.AppendText(dst, raw[:1+c.inner.Size]), nil
}

// appendCrockford appends the crockford (or crockford-check) text of the
// public ID whose encrypted bits are hi<<64|lo under the issuing key to
// dst, which has room for it (appendPublic grows it to the text's width):
// what AppendText writes, straight from the words. The key ID, then 13
// digits of 5 bits for a 64-bit ID (the first one 4 bits) or 26 for a
// 128-bit one (the first one 3 bits).
func (c *codec) appendCrockford(dst []byte, hi, lo uint64) []byte {
	start := len(dst)
	if c.inner.Size == 8 {
		out := (*[14]byte)(dst[start : start+14])
		out[0] = CrockfordAlphabet[c.issuer&31]
		putCrockford(out[1:], lo)
		dst = dst[:start+14]
	} else { // 2 + 12 + 12 digits: 8 bits, then 60 and 60
		out := (*[27]byte)(dst[start : start+27])
		out[0] = CrockfordAlphabet[c.issuer&31]
		putCrockford(out[1:3], hi>>56)
		putCrockford(out[3:15], (hi<<4|lo>>60)&(1<<60-1))
		putCrockford(out[15:], lo&(1<<60-1))
		dst = dst[:start+27]
	}
	if c.enc.check {
		dst = append(dst, CrockfordCheckSymbols[checkValue(dst[start:])])
	}
	return dst
}

// putCrockford writes the low 5*len(out) bits of v (len(out) <= 13) to
// out as Crockford digits, the most significant first.
func putCrockford(out []byte, v uint64) {
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = CrockfordAlphabet[v&31]
		v >>= 5
	}
}

// A Generator issues public IDs: the IDs of an inner generator, encrypted.
// Safe for concurrent use as the inner generator is.
type Generator struct {
	inner  idgen.Generator
	scheme *idgen.Scheme
	c      *codec
}

var (
	_ idgen.Generator = (*Generator)(nil)
	_ idgen.Batcher   = (*Generator)(nil)
)

// New returns a Generator of public IDs over inner; see NewScheme for their
// form and the errors.
func New(inner idgen.Generator, cfg Config) (*Generator, error) {
	s, err := NewScheme(inner.Scheme(), cfg)
	if err != nil {
		return nil, err
	}
	return &Generator{inner: inner, scheme: s, c: s.Codec.(*codec)}, nil
}

// Scheme returns the public scheme.
func (g *Generator) Scheme() *idgen.Scheme { return g.scheme }

// Inner returns the generator whose IDs g encrypts.
func (g *Generator) Inner() idgen.Generator { return g.inner }

// Unwrap returns Inner, so that idgen.StatsOf and idgen.ReadyOf read the
// inner generator's counters and readiness through g (they hold no ID).
func (g *Generator) Unwrap() idgen.Generator { return g.inner }

// Next returns the inner generator's next ID, encrypted. Its errors are the
// inner generator's (or, not expected, one wrapping errFF1Domain's
// "public: FF1 input outside its domain").
func (g *Generator) Next(ctx context.Context) (idgen.ID, error) {
	id, err := g.inner.Next(ctx)
	if err != nil {
		return idgen.ID{}, err
	}
	return encrypt(g.scheme, g.c, id)
}

// AppendNext appends the text of the next public ID to dst and returns the
// extended buffer: the inner generator's next ID, encrypted, in the text
// Next's ID.String() gives (14 bytes over a 64-bit ID in crockford). The
// cipher's AES blocks pass through the room after len(dst) before the text
// overwrites them: with a buffer of the caller's that has room for 16
// bytes and the text (reuse the buffer), it allocates nothing. Its errors
// are Next's; on an error dst comes back unextended.
func (g *Generator) AppendNext(ctx context.Context, dst []byte) ([]byte, error) {
	id, err := g.inner.Next(ctx)
	if err != nil {
		return dst, err
	}
	return g.c.appendPublic(dst, id)
}

// NextN fills dst with the inner generator's next IDs, encrypted: in the
// inner issue order, which their values no longer show.
func (g *Generator) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	n, err := idgen.NextN(ctx, g.inner, dst)
	for i := range dst[:n] {
		id, cerr := encrypt(g.scheme, g.c, dst[i])
		if cerr != nil {
			return i, cerr
		}
		dst[i] = id
	}
	return n, err
}

// Close closes the inner generator when it holds resources (io.Closer).
func (g *Generator) Close() error {
	if c, ok := g.inner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
