package grpcapi

import (
	"bytes"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
)

// MaxMessageBytes is grpc-go's default limit on a message a client
// receives (4 MiB, grpc.MaxCallRecvMsgSize): every message a Server sends
// fits in it, so that a stock client reads it. It is
// idgenv1.MaxMessageBytes.
const MaxMessageBytes = idgenv1.MaxMessageBytes

// framing is what MaxBatch and MaxNextCount leave of MaxMessageBytes for
// the message's own fields and framing.
const framing = idgenv1.MessageFraming

// MaxBatch returns the most IDs of size bytes one IDBatch carries within
// MaxMessageBytes: 524,160 of 8 bytes, 262,080 of 16. It is
// idgenv1.MaxBatch.
func MaxBatch(size int) int { return idgenv1.MaxBatch(size) }

// MaxNextCount returns the most IDs of s one Next answer carries within
// MaxMessageBytes, each with its text and breakdown: 25,260 IDs of the
// twitter layout, 19,873 UUIDv7s. The bound per ID is the encoding of an ID of s (all
// bytes 0xff, else 0x00) with its timestamp and every field at their
// longest varint (10 bytes) and 8 bytes of text to spare.
func MaxNextCount(s *idgen.Scheme) int {
	per := 0
	for _, fill := range []byte{0xff, 0x00} {
		id, err := s.FromBytes(bytes.Repeat([]byte{fill}, s.Size))
		if err != nil {
			continue
		}
		p := toProto(id)
		p.Text += "12345678"
		p.TimestampMs = math.MinInt64
		for _, f := range p.Fields {
			f.Value, f.Bits = math.MaxUint64, math.MaxUint32
		}
		per = max(per, proto.Size(&idgenv1.NextResponse{Ids: []*idgenv1.ID{p}}))
	}
	if per == 0 { // no ID of s from bytes: a generous bound
		per = 1024
	}
	return (MaxMessageBytes - framing) / per
}
