package strategies

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/public"
)

// Parse detects the scheme of text from its form and decodes it:
//
//	36-char UUID (8-4-4-4-12 hex)   by its version nibble: 4 uuidv4, 7 uuidv7,
//	                                any other uuid (a ULID in uuid form, v1, v6, v8)
//	32 hex digits                   flake128 when its top 17 bits are zero (a
//	                                time before 6429), else a UUID written
//	                                without dashes when its version (1-8) and
//	                                variant bits are a UUID's, else flake128
//	prefix_ and 26 chars            typeid, of that prefix (spec 0.3.0: a-z and _)
//	26-char Crockford base32        ulid
//	27-char base62                  ksuid
//	20-char base32hex (0-9a-v)      xid
//	decimal, up to 20 digits        the default Snowflake layout (ParseWith names another)
//
// Spaces, tabs and line ends around text (a CRLF file's \r) are trimmed
// first, and a + before a decimal, as ParseWith does. Errors wrap idgen.ErrSyntax or idgen.ErrOutOfRange and name the text and
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
// public spec needs o.LookupKey). The spec text is parsed once, by
// CheckSpec.
func (o Options) ParseWith(text, spec string) (idgen.ID, error) {
	text = trimID(text)
	if spec == "" {
		return detect(text)
	}
	parsed, err := CheckSpec(spec)
	if err != nil {
		return idgen.ID{}, err
	}
	return o.parseWithSpec(text, parsed)
}

// parseWithSpec is ParseWith of a parsed spec, text trimmed.
func (o Options) parseWithSpec(text string, spec Spec) (idgen.ID, error) {
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

// trimID trims what surrounds an ID pasted from a file or a terminal:
// spaces, tabs and line ends (\r\n), and a + sign before a decimal.
func trimID(text string) string {
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "+"); ok && allDigits(rest) {
		return rest
	}
	return text
}

// detect is Parse.
func detect(text string) (idgen.ID, error) {
	var s *idgen.Scheme
	digits := allDigits(text)
	if i := strings.LastIndexByte(text, '_'); i >= 0 && len(text)-i-1 == typeIDSuffix {
		return detectTypeID(text, text[:i])
	}
	switch n := len(text); {
	case digits && n <= 20:
		id, err := ParseWith(text, "snowflake")
		if err == nil || n != 20 {
			return id, err
		}
		if x, xerr := XIDScheme().Parse(text); xerr == nil {
			return x, nil // an all-digit xid above 2^64-1
		}
		return idgen.ID{}, err
	case n == 36:
		s = UUIDScheme()
		if text[14] == '4' {
			s = UUIDv4Scheme()
		} else if text[14] == '7' {
			s = UUIDv7Scheme()
		}
	case n == 32:
		return detect32(text)
	case n == 26:
		s = ULIDScheme()
	case n == 27:
		s = KSUIDScheme()
	case n == 20:
		s = XIDScheme()
	case digits:
		return ParseWith(text, "snowflake")
	default:
		return idgen.ID{}, fmt.Errorf("%w: cannot tell the scheme of %s (%d chars): want a 36-char UUID, "+
			"32 hex digits (flake128), 26-char ULID, prefix_ and 26 chars (TypeID), 27-char KSUID, 20-char xid or a decimal 64-bit ID",
			idgen.ErrSyntax, quote(text), n)
	}
	id, err := s.Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as %s)", err, s.Name)
	}
	return id, nil
}

// typeIDSuffix is the length of a TypeID's suffix: a UUID in Crockford
// base32.
const typeIDSuffix = 26

// detectTypeID decodes text, prefix_ and 26 chars, as a TypeID of prefix.
func detectTypeID(text, prefix string) (idgen.ID, error) {
	if err := public.ValidTypeIDPrefix(prefix); err != nil || prefix == "" {
		return idgen.ID{}, fmt.Errorf("%w: %s has a TypeID's form (prefix_ and 26 chars), but TypeID prefix %s: "+
			"want at most %d of a-z and _, starting and ending with a-z", idgen.ErrSyntax, quote(text), quote(prefix), public.MaxTypeIDPrefix)
	}
	id, err := TypeIDScheme(prefix).Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as typeid?prefix=%s)", err, prefix)
	}
	return id, nil
}

// detect32 decodes 32 hex digits: as flake128 when the top 17 bits are zero
// (a flake128 ID's 47 bits of Unix ms, to the year 6429), else as a UUID
// written without dashes when its version (1-8) and variant (10) bits are a
// UUID's, else as flake128.
func detect32(text string) (idgen.ID, error) {
	id, err := Flake128Scheme().Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as flake128)", err)
	}
	b := id.Bytes()
	version, variant := b[6]>>4, b[8]>>6
	if b[0] == 0 && b[1] == 0 && b[2]&0x80 == 0 || version < 1 || version > 8 || variant != 0b10 {
		return id, nil
	}
	s := UUIDScheme()
	switch version {
	case 4:
		s = UUIDv4Scheme()
	case 7:
		s = UUIDv7Scheme()
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
