package grpcapi

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// answer builds, in its few blocks, the messages toProto builds one by
// one (a Snowflake layout's spans give Decompose's fields), and leaves
// timestamp_ms and fields out when asked to.
func TestAnswer(t *testing.T) {
	l, _ := snowflake.Preset("sonyflake")
	sf, err := snowflake.New(context.Background(), snowflake.Config{Layout: l, Nodes: map[string]int64{"machine": 9}})
	if err != nil {
		t.Fatal(err)
	}
	uu, err := strategies.NewText(context.Background(), "uuidv7")
	if err != nil {
		t.Fatal(err)
	}
	for _, gen := range []idgen.Generator{sf, uu} {
		s, err := New(map[string]idgen.Generator{"g": gen}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := s.gens["g"]
		ids := make([]idgen.ID, 50)
		if _, err := idgen.NextN(context.Background(), gen, ids); err != nil {
			t.Fatal(err)
		}
		full, bare := g.answer(ids, 42, true), g.answer(ids, 42, false)
		for i, id := range ids {
			want := toProto(id)
			if !proto.Equal(full.Ids[i], want) {
				t.Fatalf("%s: answer ID %d = %v; want %v", gen.Scheme().Name, i, full.Ids[i], want)
			}
			want.TimestampMs, want.Fields = 0, nil
			if !proto.Equal(bare.Ids[i], want) {
				t.Fatalf("%s: answer without breakdown, ID %d = %v; want %v", gen.Scheme().Name, i, bare.Ids[i], want)
			}
		}
		if full.GeneratedAtMs != 42 || len(full.Ids) != 50 || len(bare.Ids) != 50 {
			t.Fatalf("%s: answer = %d IDs at %d; want 50 at 42", gen.Scheme().Name, len(full.Ids), full.GeneratedAtMs)
		}
		if b, err := proto.Marshal(full); err != nil || len(b) == 0 {
			t.Fatalf("%s: Marshal(answer) = %d bytes, %v", gen.Scheme().Name, len(b), err)
		}
	}
}
