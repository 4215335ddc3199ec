package compare

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/idgenkit/idgen"
)

// Rows travel in PostgreSQL's binary formats, so the harness spends no time
// converting: an ID's big-endian bytes are already a bigint's or a uuid's
// wire form.

// PayloadSize is the size in bytes of each row's payload column.
const PayloadSize = 100

// copyHeader starts a binary COPY stream: signature, flags, extension length.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// copyTrailer ends it: a field count of -1.
var copyTrailer = []byte{0xff, 0xff}

// pgEpochMicros is 2000-01-01T00:00:00Z in Unix microseconds: the zero of a
// binary timestamptz.
const pgEpochMicros = 946684800000000

func timestamptz(t time.Time) [8]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixMicro()-pgEpochMicros))
	return b
}

// keyBytes returns id's binary wire form for column, appended to dst.
func keyBytes(dst []byte, id idgen.ID, column string) ([]byte, error) {
	switch column {
	case idgen.ColumnBigint:
		v, ok := id.Uint64()
		if !ok || v > 1<<63-1 {
			return dst, fmt.Errorf("%w: %s ID %s does not fit a bigint (max 2^63-1)", idgen.ErrOutOfRange, id.Scheme(), id)
		}
		return binary.BigEndian.AppendUint64(dst, v), nil
	case idgen.ColumnText:
		return id.AppendText(dst)
	default: // uuid, bytea: the raw bytes
		return append(dst, id.Bytes()...), nil
	}
}

// appendField appends one binary COPY field: int32 length, then the bytes.
func appendField(dst, v []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// appendRow appends one binary COPY tuple. key is nil for the baseline,
// whose id the server fills.
func appendRow(dst, key []byte, ts [8]byte, payload []byte) []byte {
	if key == nil {
		dst = binary.BigEndian.AppendUint16(dst, 2)
	} else {
		dst = binary.BigEndian.AppendUint16(dst, 3)
		dst = appendField(dst, key)
	}
	dst = appendField(dst, ts[:])
	return appendField(dst, payload)
}

// newPayload returns the fixed payload every row carries: 100 bytes of a
// pseudo-random pattern (not compressible, not TOASTed).
func newPayload() []byte {
	p := make([]byte, PayloadSize)
	x := uint32(2463534242)
	for i := range p {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		p[i] = byte(x)
	}
	return p
}
