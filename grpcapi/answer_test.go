package grpcapi

import (
	"context"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// answer builds, in its few blocks (one for one ID), the messages toProto
// builds one by one (a Snowflake layout's spans give Decompose's fields
// and Time's timestamp, strconv its decimal text, but not the text of an
// encoding= wrapper), and leaves timestamp_ms and fields out when asked
// to.
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
	b62, err := strategies.NewText(context.Background(), "snowflake?encoding=base62")
	if err != nil {
		t.Fatal(err)
	}
	for _, gen := range []idgen.Generator{sf, uu, b62} {
		g, ids := served(t, gen, 50)
		full, bare := g.answer(ids, 42, true), g.answer(ids, 42, false)
		for i, id := range ids {
			want := toProto(id)
			one := g.answer(ids[i:i+1], 42, true)
			if !proto.Equal(full.Ids[i], want) || len(one.Ids) != 1 || !proto.Equal(one.Ids[0], want) || one.GeneratedAtMs != 42 {
				t.Fatalf("%s: answer ID %d = %v, alone %v; want %v", gen.Scheme().Name, i, full.Ids[i], one, want)
			}
			want.TimestampMs, want.Fields = 0, nil
			one = g.answer(ids[i:i+1], 42, false)
			if !proto.Equal(bare.Ids[i], want) || len(one.Ids) != 1 || !proto.Equal(one.Ids[0], want) {
				t.Fatalf("%s: answer without breakdown, ID %d = %v, alone %v; want %v", gen.Scheme().Name, i, bare.Ids[i], one, want)
			}
		}
		if full.GeneratedAtMs != 42 || len(full.Ids) != 50 || len(bare.Ids) != 50 {
			t.Fatalf("%s: answer = %d IDs at %d; want 50 at 42", gen.Scheme().Name, len(full.Ids), full.GeneratedAtMs)
		}
		if b, err := proto.Marshal(full); err != nil || len(b) == 0 {
			t.Fatalf("%s: Marshal(answer) = %d bytes, %v", gen.Scheme().Name, len(b), err)
		}
		if n := testing.AllocsPerRun(100, func() { g.answer(ids[:1], 42, true) }); n != 1 && g.decimal {
			t.Errorf("%s: answer of one ID: %v allocations; want 1 (a decimal Snowflake text)", gen.Scheme().Name, n)
		}
		if b := bytesPerRun(func() { g.answer(ids[:1], 42, false) }); b > maxBareBytes && g.decimal {
			t.Errorf("%s: answer of one ID without breakdown: %d bytes; want at most %d (a bareAnswer)", gen.Scheme().Name, b, maxBareBytes)
		}
	}
}

// served returns gen as a Server serves it and n of its IDs.
func served(t *testing.T, gen idgen.Generator, n int) (*generator, []idgen.ID) {
	t.Helper()
	s, err := New(map[string]idgen.Generator{"g": gen}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]idgen.ID, n)
	if _, err := idgen.NextN(context.Background(), gen, ids); err != nil {
		t.Fatal(err)
	}
	return s.gens["g"], ids
}

// maxBareBytes bounds the bytes of a one-ID answer without breakdown: a
// bareAnswer, 240, and 16 for what else the process allocates meanwhile
// (16 KB over bytesPerRun's runs; a oneAnswer, as before, is 720 in a
// 768-byte allocation).
const maxBareBytes = 256

// bytesPerRun returns the bytes allocated per call of f over 1000 calls,
// rounded down. Like testing.AllocsPerRun it runs with GOMAXPROCS 1, so
// that other goroutines allocate little meanwhile.
func bytesPerRun(f func()) uint64 {
	const runs = 1000
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}
