package strategies

import (
	"fmt"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/errclass"
)

// ErrConvert reports a conversion between two schemes that is not defined;
// the wrapping error names the schemes and lists the conversions there are.
var ErrConvert = errclass.Invalid("strategies: no such conversion")

// Conversions lists the conversions Convert performs, as "from -> to".
var Conversions = []string{
	"ulid -> uuid", "uuid -> ulid", "uuidv7 -> ulid", "ulid -> uuidv7",
	"uuidv7 -> uuid", "uuidv4 -> uuid", "uuid -> uuidv7", "uuid -> uuidv4",
}

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
// no time to make a ULID of) wrap ErrConvert.
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
	return idgen.ID{}, fmt.Errorf("%w: %s -> %s; defined: %v", ErrConvert, from, to, Conversions)
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
