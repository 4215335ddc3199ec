package grpcapi

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// The codec writes the bytes proto.Marshal writes for every Next answer
// (one ID in one allocation, many past grpc-go's pooling threshold, with
// and without the breakdown, Snowflake, UUID and encoding= schemes), and
// hands every other message to grpc-go's proto codec.
func TestCodecMarshal(t *testing.T) {
	sf, err := snowflake.New(context.Background(), snowflake.Config{Nodes: map[string]int64{"worker": 5}})
	if err != nil {
		t.Fatal(err)
	}
	var gens []idgen.Generator
	for _, spec := range []string{"uuidv7", "snowflake?encoding=base62"} {
		g, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, g)
	}
	c := newCodec()
	for _, gen := range append(gens, sf) {
		g, ids := served(t, gen, 3000)
		for _, n := range []int{1, 2, 50, 3000} {
			for _, breakdown := range []bool{true, false} {
				for _, at := range []int64{0, 1764000000000, -1} {
					resp := g.answer(ids[:n], at, breakdown)
					want, err := proto.Marshal(resp)
					if err != nil {
						t.Fatal(err)
					}
					got, err := c.Marshal(resp)
					if err != nil || !bytes.Equal(got.Materialize(), want) {
						t.Fatalf("%s: Marshal(%d IDs, breakdown %t, at %d) = %x, %v; want %x", gen.Scheme().Name, n, breakdown, at, got.Materialize(), err, want)
					}
					got.Free()
				}
			}
		}
		if g.decimal {
			resp := g.answer(ids[:1], 1764000000000, true)
			if n := testing.AllocsPerRun(100, func() { c.Marshal(resp) }); n != 1 {
				t.Errorf("Marshal(one Snowflake ID): %v allocations; want 1", n)
			}
			if b := bytesPerRun(func() { c.Marshal(resp) }); b > maxSmallFrameBytes {
				t.Errorf("Marshal(one Snowflake ID): %d bytes; want at most %d (a smallFrame)", b, maxSmallFrameBytes)
			}
		}
	}
	other := &idgenv1.ID{Value: []byte{1}, Text: "1", Fields: []*idgenv1.Field{{Name: "x", Value: 3}}}
	want, _ := proto.Marshal(other)
	if got, err := c.Marshal(other); err != nil || !bytes.Equal(got.Materialize(), want) {
		t.Fatalf("Marshal(%v) = %x, %v; want %x", other, got.Materialize(), err, want)
	}
}

// The codec decodes a NextRequest as proto.Unmarshal does, whatever the
// bytes: well formed, with fields repeated, unknown or of another wire
// type, not UTF-8, cut short.
func TestCodecUnmarshal(t *testing.T) {
	marshal := func(r *idgenv1.NextRequest) []byte {
		b, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tag := func(b []byte, num protowire.Number, typ protowire.Type) []byte {
		return protowire.AppendTag(b, num, typ)
	}
	inputs := [][]byte{
		nil,
		marshal(&idgenv1.NextRequest{Count: 1}),
		marshal(&idgenv1.NextRequest{Generator: "orders", Count: 10_000, OmitBreakdown: true}),
		marshal(&idgenv1.NextRequest{Generator: "ünïcode"}),
		protowire.AppendVarint(tag(protowire.AppendVarint(tag(nil, 2, protowire.VarintType), 7), 2, protowire.VarintType), 1<<33+5), // repeated, past uint32
		protowire.AppendVarint(tag(nil, 3, protowire.VarintType), 2),                                                                // bool from 2
		protowire.AppendVarint(tag(marshal(&idgenv1.NextRequest{Count: 3}), 9, protowire.VarintType), 1),                            // unknown field
		protowire.AppendBytes(tag(nil, 2, protowire.BytesType), []byte("x")),                                                        // count of another wire type
		protowire.AppendBytes(tag(nil, 1, protowire.BytesType), []byte{0xff, 0xfe}),                                                 // not UTF-8
		tag(nil, 1, protowire.BytesType),                                                                                            // cut short
		{0x10, 0x80},                                                                                                                // varint cut short
		{0x00},                                                                                                                      // field number 0
	}
	c := newCodec()
	for _, in := range inputs {
		want := &idgenv1.NextRequest{}
		werr := proto.Unmarshal(in, want)
		got := &idgenv1.NextRequest{Generator: "stale", Count: 99}
		gerr := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(in)}, got)
		if (gerr == nil) != (werr == nil) || (werr == nil && !proto.Equal(got, want)) {
			t.Errorf("Unmarshal(%x) = %v, %v; want %v, %v", in, got, gerr, want, werr)
		}
	}
}

// maxSmallFrameBytes bounds the bytes of a one-ID Snowflake answer's
// encoding: a smallFrame, 160 (a frame, as before, 288), and 16 for what
// else the process allocates meanwhile, as maxBareBytes.
const maxSmallFrameBytes = 176
