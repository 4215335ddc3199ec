package strategies

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/errclass"
)

// ErrConvert reports a conversion between two schemes that is not defined;
// the wrapping error names the schemes and lists the conversions there are.
var ErrConvert = errclass.Invalid("strategies: no such conversion")

// conversions are the pairs Convert performs, as "from -> to".
var conversions = []string{
	"ulid -> uuid", "uuid -> ulid", "uuidv7 -> ulid", "ulid -> uuidv7",
	"uuidv7 -> uuid", "uuidv4 -> uuid", "uuid -> uuidv7", "uuid -> uuidv4",
}

// Conversions returns the conversions Convert performs, as "from -> to"
// (the schemes' names), in a new slice the caller may change.
func Conversions() []string { return slices.Clone(conversions) }

// Convert returns id as an ID of the scheme to:
//
//	ulid   -> uuid    the same 128 bits, exact (a ULID's uuid column value)
//	uuid   -> ulid    the same 128 bits, exact
//	uuidv7 -> ulid    the same 128 bits: the same unix_ts_ms and the same order
//	ulid   -> uuidv7  sets ver (4 bits) to 7 and var (2 bits) to 0b10, keeping
//	                  the 48-bit ms: 6 of the 80 random bits are lost, so it is
//	                  exact only for a ULID that came from a UUIDv7
//	uuidv7, uuidv4 -> uuid, and back when the version nibble matches
//
// An ID already of scheme to is returned as is. Other pairs (a UUIDv4 has
// no time to make a ULID of) wrap ErrConvert; the message gives the reason
// and lists Conversions. ConvertExact refuses the lossy ones too.
func Convert(id idgen.ID, to *idgen.Scheme) (idgen.ID, error) {
	from := id.Scheme()
	if from == nil {
		return idgen.ID{}, idgen.ErrNoScheme
	}
	if from == to {
		return id, nil
	}
	b := id.Bytes()
	switch {
	case to == UUIDScheme() && (from == ULIDScheme() || from == UUIDv7Scheme() || from == UUIDv4Scheme()),
		to == ULIDScheme() && (from == UUIDScheme() || from == UUIDv7Scheme()):
		return to.FromBytes(b)
	case to == UUIDv7Scheme() && from == ULIDScheme():
		b[6] = 0x70 | b[6]&0x0f
		b[8] = 0x80 | b[8]&0x3f
		return to.FromBytes(b)
	case (to == UUIDv7Scheme() || to == UUIDv4Scheme()) && from == UUIDScheme():
		want := byte(7)
		if to == UUIDv4Scheme() {
			want = 4
		}
		if b[6]>>4 != want || b[8]>>6 != 0b10 {
			return idgen.ID{}, fmt.Errorf("%w: %s %s is not an RFC 9562 version %d UUID", ErrConvert, from.Name, id, want)
		}
		return to.FromBytes(b)
	}
	return idgen.ID{}, fmt.Errorf("%w: %s -> %s: %s; defined: %s", ErrConvert, from, to, noConversion(from, to), strings.Join(conversions, ", "))
}

// noConversion says why Convert has no conversion from one scheme to
// another.
func noConversion(from, to *idgen.Scheme) string {
	bits128 := func(s *idgen.Scheme) bool {
		return s == ULIDScheme() || s == UUIDScheme() || s == UUIDv7Scheme() || s == UUIDv4Scheme()
	}
	encoded := func(s *idgen.Scheme) bool {
		return !bits128(s) && slices.ContainsFunc([]*idgen.Scheme{ULIDScheme(), UUIDScheme(), UUIDv7Scheme(), UUIDv4Scheme()},
			func(b *idgen.Scheme) bool { return b.Name == s.Name })
	}
	switch {
	case encoded(from):
		return fmt.Sprintf("the %s ID is read in another text encoding (%s=): Convert takes the scheme's own", from.Name, EncodingKey)
	case !bits128(from):
		return fmt.Sprintf("only a ULID and a UUID hold the same 128 bits; a %s ID is neither", from.Name)
	case !bits128(to):
		return fmt.Sprintf("only a ULID and a UUID hold the same 128 bits; a %s ID is neither", to.Name)
	case from == UUIDv4Scheme() && to != UUIDScheme():
		return fmt.Sprintf("a UUIDv4 has no time to make a %s of", displayName(to))
	}
	// ulid -> uuidv4, uuidv7 -> uuidv4: a time would become random bits.
	return fmt.Sprintf("a %s's time has no place in a %s", displayName(from), displayName(to))
}

// displayName is a 128-bit scheme's name as prose writes it.
func displayName(s *idgen.Scheme) string {
	switch s {
	case ULIDScheme():
		return "ULID"
	case UUIDv7Scheme():
		return "UUIDv7"
	case UUIDv4Scheme():
		return "UUIDv4"
	}
	return "UUID"
}

// ConvertExact is Convert for a pair that loses no bit: it also refuses
// (wrapping ErrConvert) an ID that does not convert back to the same bits,
// as a ULID not made from a UUIDv7 does when it becomes a UUIDv7 (6 of its
// random bits are overwritten). idgen convert converts with it.
func ConvertExact(id idgen.ID, to *idgen.Scheme) (idgen.ID, error) {
	out, err := Convert(id, to)
	if err != nil {
		return idgen.ID{}, err
	}
	back, err := Convert(out, id.Scheme())
	if err != nil || !bytes.Equal(back.Bytes(), id.Bytes()) {
		return idgen.ID{}, fmt.Errorf("%w: %s %s -> %s is lossy: %s does not convert back to it (a ULID becomes a UUIDv7 exactly only when it came from one)",
			ErrConvert, id.Scheme().Name, id, to.Name, out)
	}
	return out, nil
}

// ULIDToUUID returns a ULID's 128 bits as a UUIDScheme() ID: the value a
// ULID has in a PostgreSQL uuid column. UUIDToULID reverses it exactly.
func ULIDToUUID(id idgen.ID) (idgen.ID, error) { return convertFrom(id, ULIDScheme(), UUIDScheme()) }

// UUIDToULID returns the 128 bits of a UUIDScheme() or UUIDv7Scheme() ID as a
// ULID. From a UUIDv7 the ULID carries the same millisecond and sorts the
// same.
func UUIDToULID(id idgen.ID) (idgen.ID, error) {
	if id.Scheme() == UUIDv7Scheme() {
		return Convert(id, ULIDScheme())
	}
	return convertFrom(id, UUIDScheme(), ULIDScheme())
}

// ULIDToUUIDv7 returns a ULID as a UUIDv7 of the same millisecond; see
// Convert for the 6 bits it sets.
func ULIDToUUIDv7(id idgen.ID) (idgen.ID, error) {
	return convertFrom(id, ULIDScheme(), UUIDv7Scheme())
}

// UUIDv7ToULID returns a UUIDv7's 128 bits as a ULID of the same
// millisecond and order.
func UUIDv7ToULID(id idgen.ID) (idgen.ID, error) {
	return convertFrom(id, UUIDv7Scheme(), ULIDScheme())
}

func convertFrom(id idgen.ID, from, to *idgen.Scheme) (idgen.ID, error) {
	if id.Scheme() != from {
		return idgen.ID{}, fmt.Errorf("%w: want a %s ID, got %s", ErrConvert, from, id.Scheme())
	}
	return Convert(id, to)
}
