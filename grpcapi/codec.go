package grpcapi

import (
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the "proto" codec that codec falls back to
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/idgenkit/idgen/grpcapi/idgenv1"
)

// codec is the servers' grpc CodecV2 (NewGRPCServer forces it): grpc-go's
// "proto" codec, but for the Next call, whose messages it encodes and
// decodes by hand with protowire: a NextResponse into one buffer of
// grpc-go's pool, without proto's reflection and Size pass, and a
// NextRequest without proto's decoder. The bytes are the ones proto.Marshal
// writes (fields in number order, zero scalars left out); a request with
// anything but the three known fields, well formed, goes to proto.
type codec struct{ proto encoding.CodecV2 }

func newCodec() codec { return codec{proto: encoding.GetCodecV2("proto")} }

func (codec) Name() string { return "proto" }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*idgenv1.NextResponse)
	if !ok || len(r.ProtoReflect().GetUnknown()) > 0 {
		return c.proto.Marshal(v)
	}
	size := responseSize(r)
	if !mem.IsBelowBufferPoolingThreshold(size) {
		pool := mem.DefaultBufferPool()
		buf := pool.Get(size)
		*buf = appendResponse((*buf)[:0], r)
		return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
	}
	// Below the pooling threshold grpc-go's own codec allocates the
	// bytes, the SliceBuffer's box and the slice of one Buffer; a frame
	// holds all three (the bytes when they fit in it).
	switch {
	case size <= smallFrameBytes:
		f := &smallFrame{}
		return f.hold(appendResponse(f.bytes[:0], r)), nil
	case size <= frameBytes:
		f := &frame{}
		return f.hold(appendResponse(f.bytes[:0], r)), nil
	}
	f := &frameHead{}
	return f.hold(appendResponse(make([]byte, 0, size), r)), nil
}

// frameHead is a BufferSlice of one SliceBuffer, in one allocation.
type frameHead struct {
	data mem.SliceBuffer
	out  [1]mem.Buffer
}

// hold returns b as the BufferSlice of f.
func (f *frameHead) hold(b []byte) mem.BufferSlice {
	f.data = b
	f.out[0] = &f.data
	return f.out[:]
}

// The bytes a smallFrame and a frame hold: a count=1 Snowflake answer is
// 39 bytes without its breakdown, about 106 with it (a 160-byte
// allocation in all); a UUID's about 65 and 155.
const (
	smallFrameBytes = 112
	frameBytes      = 240
)

// smallFrame and frame are a small encoded message and the BufferSlice
// that holds it, in one allocation.
type (
	smallFrame struct {
		frameHead
		bytes [smallFrameBytes]byte
	}
	frame struct {
		frameHead
		bytes [frameBytes]byte
	}
)

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*idgenv1.NextRequest)
	if !ok || len(data) > 1 {
		return c.proto.Unmarshal(data, v)
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData()
	}
	if !decodeRequest(b, r) {
		return c.proto.Unmarshal(data, v)
	}
	return nil
}

// decodeRequest sets r from b and reports true when b holds only
// NextRequest's three fields, well formed; otherwise r is undefined.
func decodeRequest(b []byte, r *idgenv1.NextRequest) bool {
	r.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			s, n := protowire.ConsumeBytes(b)
			if n < 0 || !utf8.Valid(s) {
				return false
			}
			r.Generator, b = string(s), b[n:]
		case (num == 2 || num == 3) && typ == protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return false
			}
			if num == 2 {
				r.Count = uint32(x)
			} else {
				r.OmitBreakdown = x != 0
			}
			b = b[n:]
		default:
			return false
		}
	}
	return true
}

// responseSize returns the encoded size of r, which has no unknown fields
// (nor have its IDs and fields: answer builds them).
func responseSize(r *idgenv1.NextResponse) int {
	n := 0
	for _, id := range r.Ids {
		n += lenField(1, idSize(id))
	}
	return n + varintField(2, uint64(r.GeneratedAtMs))
}

// appendResponse appends r as proto.Marshal encodes it.
func appendResponse(b []byte, r *idgenv1.NextResponse) []byte {
	for _, id := range r.Ids {
		b = appendBytes(appendMessage(b, 1, idSize(id)), 1, id.Value)
		b = appendVarint(appendBytes(b, 2, id.Text), 3, uint64(id.TimestampMs))
		for _, f := range id.Fields {
			b = appendVarint(appendBytes(appendMessage(b, 4, fieldSize(f)), 1, f.Name), 2, f.Value)
			b = appendVarint(b, 3, uint64(f.Bits))
		}
	}
	return appendVarint(b, 2, uint64(r.GeneratedAtMs))
}

// appendMessage appends the tag and length of an embedded message of size
// bytes, which follow.
func appendMessage(b []byte, num protowire.Number, size int) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(size))
}

func idSize(id *idgenv1.ID) int {
	n := lenField(1, len(id.Value)) + lenField(2, len(id.Text)) + varintField(3, uint64(id.TimestampMs))
	for _, f := range id.Fields {
		n += protowire.SizeTag(4) + protowire.SizeBytes(fieldSize(f))
	}
	return n
}

func fieldSize(f *idgenv1.Field) int {
	return lenField(1, len(f.Name)) + varintField(2, f.Value) + varintField(3, uint64(f.Bits))
}

// lenField is the size of a length-delimited field of n bytes; 0 for an
// empty one, which proto3 leaves out.
func lenField(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

// varintField is the size of a varint field; 0 for zero, which proto3
// leaves out.
func varintField(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

// appendBytes appends a length-delimited field, bytes or a string;
// nothing for an empty one, which proto3 leaves out.
func appendBytes[T string | []byte](b []byte, num protowire.Number, v T) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}
