package idgen

import (
	"database/sql/driver"
	"fmt"
)

// Value implements driver.Valuer for the scheme's PostgreSQL column: NULL
// for the zero ID (see NullID), int64 for bigint, the 36-char hex text for
// uuid, the raw bytes for bytea, the canonical text for text. A 64-bit value above 2^63-1 does not fit a
// bigint and gives ErrOutOfRange.
func (id ID) Value() (driver.Value, error) {
	s := id.scheme
	if s == nil {
		return nil, nil
	}
	switch s.Column {
	case ColumnBigint:
		v, ok := id.Int64()
		if !ok {
			return nil, fmt.Errorf("%w: %s ID %s does not fit a bigint (max 2^63-1)", ErrOutOfRange, s.Name, id)
		}
		return v, nil
	case ColumnUUID:
		if s.Size != 16 {
			return nil, fmt.Errorf("idgen: %s ID of %d bytes cannot be a uuid", s.Name, s.Size)
		}
		b := id.raw()
		return string(AppendUUIDText(nil, b[:16])), nil
	case ColumnBytea:
		return id.Bytes(), nil
	default:
		return id.String(), nil
	}
}

// Scan implements sql.Scanner. It keeps id's scheme (see Scheme.Zero) and
// accepts what drivers return for the scheme's column: int64, raw bytes
// (for a UUID scheme the 16 bytes MySQL's BINARY(16) holds), UUID text or
// the canonical text. An ID without a scheme gives ErrNoScheme, naming the
// TypedID and Scheme.Zero() forms that scan. NULL is no ID: it gives
// ErrNull and leaves id unchanged; scan a nullable column into a NullID.
func (id *ID) Scan(src any) error {
	s := id.scheme
	if src == nil {
		name := "an"
		if s != nil {
			name = "a " + s.Name
		}
		return fmt.Errorf("%w: scan a nullable column into a NullID, not %s ID", ErrNull, name)
	}
	if s == nil {
		return noScheme(fmt.Sprintf("scan %T", src))
	}
	n := ID{scheme: s}
	var err error
	switch v := src.(type) {
	case int64:
		if s.Size != 8 {
			return fmt.Errorf("%w: cannot scan an integer into a %d-byte %s ID", ErrSyntax, s.Size, s.Name)
		}
		n.hi = uint64(v)
	case []byte:
		err = n.scanBytes(v)
	case string:
		err = n.scanBytes([]byte(v))
	default:
		return fmt.Errorf("idgen: cannot scan %T into a %s ID", src, s.Name)
	}
	if err != nil {
		return err
	}
	*id = n
	return nil
}

func (id *ID) scanBytes(v []byte) error {
	s := id.scheme
	var b [MaxSize]byte
	switch {
	case (s.Column == ColumnBytea || s.Column == ColumnUUID) && len(v) == s.Size:
		copy(b[:], v)
	case s.Column == ColumnUUID && len(v) == 36:
		if err := ParseUUIDText(b[:16], v); err != nil {
			return err
		}
	default:
		if err := s.Codec.ParseText(b[:s.Size], v); err != nil {
			return err
		}
	}
	id.setRaw(b[:])
	return nil
}
