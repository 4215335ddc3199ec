package segment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/jackc/pgx/v5"
)

func TestInstagram(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	seq := uniqueName("instagram_seq")
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Exec(ctx, "DROP SEQUENCE IF EXISTS "+seq)
			c.Close(ctx)
		}
	})
	if _, err := segment.DialInstagram(ctx, dsn, segment.InstagramConfig{Shard: 5, Seq: seq}); !errors.Is(err, segment.ErrNotInstalled) {
		t.Fatalf("DialInstagram() before install = %v; want ErrNotInstalled", err)
	}
	for range 2 { // idempotent
		if err := segment.InstallInstagram(ctx, dsn, seq); err != nil {
			t.Fatalf("InstallInstagram(%q) = %v", seq, err)
		}
	}
	g, err := segment.DialInstagram(ctx, dsn, segment.InstagramConfig{Shard: 5, Seq: seq})
	if err != nil {
		t.Fatalf("DialInstagram() = %v", err)
	}
	defer g.Close()
	start := time.Now().Add(-time.Second)
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatalf("Next() = %v", err)
	}
	l, _ := snowflake.LayoutOf(id.Scheme())
	if l.Bits() != 64 || !l.Unsigned {
		t.Fatalf("layout = %v; want the 64-bit unsigned instagram preset", l)
	}
	fields := id.Scheme().Decompose(id)
	want := map[string]int{"time": 41, "shard": 13, "sequence": 10}
	for _, f := range fields {
		if want[f.Name] != f.Bits {
			t.Fatalf("Decompose(%s) field %s has %d bits; want %d", id, f.Name, f.Bits, want[f.Name])
		}
		if f.Name == "shard" && f.Value != 5 {
			t.Fatalf("Decompose(%s) shard = %d; want 5", id, f.Value)
		}
		if f.Name == "sequence" && f.Value != 1 {
			t.Fatalf("Decompose(%s) sequence = %d; want 1 (a new sequence's first value)", id, f.Value)
		}
	}
	if ts := id.Time(); ts.Before(start) || ts.After(time.Now().Add(time.Second)) {
		t.Fatalf("Time(%s) = %v; want about now (PostgreSQL's clock)", id, ts)
	}
	dst := make([]idgen.ID, 600)
	if n, err := g.NextN(ctx, dst); err != nil || n != 600 {
		t.Fatalf("NextN(600) = %d, %v", n, err)
	}
	// Unordered: a shard's sequence wraps mod 1024 within a millisecond.
	idgentest.Run(t, func(t *testing.T) idgen.Generator {
		g, err := segment.DialInstagram(ctx, dsn, segment.InstagramConfig{Shard: 5, Seq: seq})
		if err != nil {
			t.Fatalf("DialInstagram() = %v", err)
		}
		return g
	}, idgentest.Options{Goroutines: 4, PerGoroutine: 500, Unordered: true})

	for _, shard := range []int{-1, 8192} {
		if _, err := segment.DialInstagram(ctx, dsn, segment.InstagramConfig{Shard: shard, Seq: seq}); !errors.Is(err, segment.ErrConfig) {
			t.Fatalf("DialInstagram(shard %d) = %v; want ErrConfig", shard, err)
		}
	}
	if _, err := segment.DialInstagram(ctx, "mysql://root@127.0.0.1/test", segment.InstagramConfig{}); !errors.Is(err, segment.ErrDSN) {
		t.Fatalf("DialInstagram(mysql://) = %v; want ErrDSN", err)
	}
}
