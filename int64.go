package idgen

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"
)

// Int64Scheme returns the plain 64-bit integer scheme (Kind Int64): decimal
// text, bigint column. Decode plain integers into Int64Scheme().Zero() or a
// TypedID[Int64]. Every call returns the same *Scheme, since schemes compare
// by pointer; do not modify it.
func Int64Scheme() *Scheme { return int64Scheme }

var int64Scheme = &Scheme{Name: "int64", Size: 8, Column: ColumnBigint, Codec: Uint64Codec{}}

// Uint64Codec is the Codec of a plain 64-bit integer in decimal text. Schemes
// of the 64-bit family embed it and add their own Time and Decompose.
type Uint64Codec struct{}

// AppendText appends b as an unsigned decimal.
func (Uint64Codec) AppendText(dst, b []byte) []byte {
	return strconv.AppendUint(dst, binary.BigEndian.Uint64(b), 10)
}

// ParseText decodes an unsigned decimal of at most 20 digits.
func (Uint64Codec) ParseText(b, text []byte) error {
	v, err := ParseUint64(text)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b, v)
	return nil
}

// Time returns the zero Time: a plain integer carries none.
func (Uint64Codec) Time([]byte) time.Time { return time.Time{} }

// Decompose returns the single field "value".
func (Uint64Codec) Decompose(b []byte) []Field {
	return []Field{{Name: "value", Value: binary.BigEndian.Uint64(b), Bits: 64}}
}

// ParseUint64 parses a decimal 64-bit ID: digits only, no sign, no spaces.
// Errors wrap ErrSyntax or ErrOutOfRange and quote the text.
func ParseUint64(text []byte) (uint64, error) {
	if len(text) == 0 {
		return 0, fmt.Errorf("%w: empty ID", ErrSyntax)
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s is not a decimal ID (digits 0-9 only)", ErrSyntax, quoteInput(text))
		}
	}
	v, err := strconv.ParseUint(string(text), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s exceeds 2^64-1", ErrOutOfRange, quoteInput(text))
	}
	return v, nil
}
