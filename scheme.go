package idgen

import (
	"fmt"
	"time"
)

// MaxSize is the largest ID, in bytes, that an ID value holds (KSUID's 20).
const MaxSize = 20

// PostgreSQL column types the schemes map to.
const (
	ColumnBigint = "bigint" // 64-bit schemes, signed; values above 2^63-1 do not fit
	ColumnUUID   = "uuid"   // 16-byte schemes: UUIDv4, UUIDv7, ULID
	ColumnBytea  = "bytea"  // other byte strings: KSUID (20 B), xid (12 B)
	ColumnText   = "text"   // the canonical text, for schemes that want it
)

// A Field is one named part of a decomposed ID, such as a Snowflake's worker
// ID or a UUIDv7's unix_ts_ms.
type Field struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
	Bits  int    `json:"bits"` // the field's width in bits
}

// A Codec converts a scheme's raw bytes (Scheme.Size of them, big-endian) to
// and from text and takes them apart. Implementations must not retain b.
type Codec interface {
	// AppendText appends the canonical text of b to dst.
	AppendText(dst, b []byte) []byte
	// ParseText decodes text into b, which has Scheme.Size bytes. Errors
	// wrap ErrSyntax or ErrOutOfRange and name the text.
	ParseText(b, text []byte) error
	// Time returns the creation time b encodes; the zero Time if none.
	Time(b []byte) time.Time
	// Decompose returns b's fields, high bits first.
	Decompose(b []byte) []Field
}

// A Scheme describes one kind of ID. Schemes are compared by pointer: two IDs
// are equal only when they have the same *Scheme and the same bytes, so a
// package creates each Scheme once and reuses it.
type Scheme struct {
	// Name is the scheme's name as used in specs and output: "snowflake",
	// "uuidv7", "ulid", ...
	Name string
	// Size is the ID's size in bytes, 1 to MaxSize.
	Size int
	// Column is the native PostgreSQL column type (ColumnBigint, ...).
	Column string
	// TimeOrdered reports whether IDs sort by creation time (k-sorted across
	// nodes, strictly increasing within one generator).
	TimeOrdered bool
	// Codec converts the raw bytes to and from text.
	Codec Codec
}

// Zero returns the scheme's all-zero ID. Use it as the destination of Scan or
// UnmarshalText, which keep the receiver's scheme.
func (s *Scheme) Zero() ID { return ID{scheme: s} }

// Parse decodes the scheme's canonical text. Errors wrap ErrSyntax or
// ErrOutOfRange.
func (s *Scheme) Parse(text string) (ID, error) {
	var b [MaxSize]byte
	if err := s.Codec.ParseText(b[:s.Size], []byte(text)); err != nil {
		return ID{}, err
	}
	id := ID{scheme: s}
	id.setRaw(b[:])
	return id, nil
}

// MustParse is like Parse but panics on error. For tests and constants.
func (s *Scheme) MustParse(text string) ID {
	id, err := s.Parse(text)
	if err != nil {
		panic(err)
	}
	return id
}

// FromBytes returns the ID whose raw bytes are b; len(b) must be s.Size.
func (s *Scheme) FromBytes(b []byte) (ID, error) {
	if len(b) != s.Size {
		return ID{}, s.sizeError(len(b))
	}
	id := ID{scheme: s}
	id.setRaw(b)
	return id, nil
}

func (s *Scheme) sizeError(n int) error {
	return fmt.Errorf("%w: %s ID is %d bytes, got %d", ErrSyntax, s.Name, s.Size, n)
}

// FromWords returns the ID whose raw bytes, read as big-endian words, are
// hi (bytes 0-7), lo (bytes 8-15) and tail (bytes 16-19); the words past
// Size must be zero. It is the allocation- and copy-free way for adapters
// to build an ID from a library's byte array.
func (s *Scheme) FromWords(hi, lo uint64, tail uint32) ID {
	return ID{scheme: s, hi: hi, lo: lo, tail: tail}
}

// FromUint64 returns the ID of an 8-byte scheme whose value is v.
func (s *Scheme) FromUint64(v uint64) ID { return ID{scheme: s, hi: v} }

// FillUint64 sets dst[i] to the 8-byte ID first + i*stride: the IDs of one
// tick of a Snowflake layout, or of one segment, written without a call per
// ID. For 8-byte schemes only.
func (s *Scheme) FillUint64(dst []ID, first, stride uint64) {
	for i := range dst {
		d := &dst[i]
		if d.scheme != s { // a reused buffer skips the pointer store
			d.scheme = s
		}
		d.hi, d.lo, d.tail = first, 0, 0
		first += stride
	}
}

// Decompose returns id's named fields, high bits first.
func (s *Scheme) Decompose(id ID) []Field {
	b := id.raw()
	return s.Codec.Decompose(b[:s.Size])
}

func (s *Scheme) String() string {
	if s == nil {
		return "<nil>"
	}
	return s.Name
}
