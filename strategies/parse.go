package strategies

import (
	"fmt"
	"strconv"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
)

// Parse detects the scheme of text from its form and decodes it:
//
//	36-char UUID (8-4-4-4-12 hex)   by its version nibble: 4 uuidv4, 7 uuidv7,
//	                                any other uuid (a ULID in uuid form, v1, v6, v8)
//	32 hex digits                   flake128 when its top 17 bits are zero (a
//	                                time before 6429), else a UUID written
//	                                without dashes when its version (1-8) and
//	                                variant bits are a UUID's, else flake128
//	26-char Crockford base32        ulid
//	27-char base62                  ksuid
//	20-char base32hex (0-9a-v)      xid
//	decimal, up to 20 digits        the default Snowflake layout (ParseWith names another)
//
// Errors wrap idgen.ErrSyntax or idgen.ErrOutOfRange and name the text and
// the forms Parse knows.
func Parse(text string) (idgen.ID, error) {
	return ParseWith(text, "")
}

// ParseWith decodes text as an ID of the scheme that spec's generator
// issues, whatever its form; an empty spec detects the scheme as Parse does.
// Decimal IDs of a layout other than the default need the spec that made
// them ("snowflake?preset=twitter", "sonyflake?bits_sequence=12").
func ParseWith(text, spec string) (idgen.ID, error) { return Options{}.ParseWith(text, spec) }

// ParseWith is the package's ParseWith, the spec's scheme found with o (a
// public spec needs o.LookupKey).
func (o Options) ParseWith(text, spec string) (idgen.ID, error) {
	if spec == "" {
		return detect(text)
	}
	s, err := o.SchemeOf(spec)
	if err != nil {
		return idgen.ID{}, err
	}
	id, err := s.Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as %s)", err, spec)
	}
	return id, nil
}

// detect is Parse.
func detect(text string) (idgen.ID, error) {
	var s *idgen.Scheme
	digits := allDigits(text)
	switch n := len(text); {
	case digits && n <= 20:
		id, err := ParseWith(text, "snowflake")
		if err == nil || n != 20 {
			return id, err
		}
		if x, xerr := XIDScheme.Parse(text); xerr == nil {
			return x, nil // an all-digit xid above 2^64-1
		}
		return idgen.ID{}, err
	case n == 36:
		s = UUIDScheme
		if text[14] == '4' {
			s = UUIDv4Scheme
		} else if text[14] == '7' {
			s = UUIDv7Scheme
		}
	case n == 32:
		return detect32(text)
	case n == 26:
		s = ULIDScheme
	case n == 27:
		s = KSUIDScheme
	case n == 20:
		s = XIDScheme
	case digits:
		return ParseWith(text, "snowflake")
	default:
		return idgen.ID{}, fmt.Errorf("%w: cannot tell the scheme of %s (%d chars): want a 36-char UUID, "+
			"32 hex digits (flake128), 26-char ULID, 27-char KSUID, 20-char xid or a decimal 64-bit ID",
			idgen.ErrSyntax, quote(text), n)
	}
	id, err := s.Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as %s)", err, s.Name)
	}
	return id, nil
}

// detect32 decodes 32 hex digits: as flake128 when the top 17 bits are zero
// (a flake128 ID's 47 bits of Unix ms, to the year 6429), else as a UUID
// written without dashes when its version (1-8) and variant (10) bits are a
// UUID's, else as flake128.
func detect32(text string) (idgen.ID, error) {
	id, err := Flake128Scheme.Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as flake128)", err)
	}
	b := id.Bytes()
	version, variant := b[6]>>4, b[8]>>6
	if b[0] == 0 && b[1] == 0 && b[2]&0x80 == 0 || version < 1 || version > 8 || variant != 0b10 {
		return id, nil
	}
	s := UUIDScheme
	switch version {
	case 4:
		s = UUIDv4Scheme
	case 7:
		s = UUIDv7Scheme
	}
	return s.FromBytes(b)
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// quote quotes s for an error message, cut to about 64 bytes.
func quote(s string) string { return strconv.Quote(echo.Cut(s)) }
