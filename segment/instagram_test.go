package segment_test

import (
	"context"
	"errors"
	"net/url"
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

// Past the 41 bits of time (2081-04-30), the function raises rather than
// shift the time into the sign bit, and Next says the layout has ended.
// The clock is a clock_timestamp() of the test's own schema, found before
// pg_catalog's on the session's search_path.
func TestInstagramLifetime(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	schema := uniqueName("instagram_clock")
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("CREATE SCHEMA: %v", err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE") })
	at := func(path string) string {
		u, _ := url.Parse(dsn)
		q := u.Query()
		q.Set("search_path", path)
		u.RawQuery = q.Encode()
		return u.String()
	}
	if err := segment.InstallInstagram(ctx, at(schema), "seq"); err != nil {
		t.Fatalf("InstallInstagram() = %v", err)
	}
	for _, tc := range []struct {
		name, now string
		ok        bool
	}{
		{"last ms", "2081-04-30 12:54:37.272+00", true},
		{"first ms past", "2081-04-30 12:54:37.273+00", false},
		{"before the epoch", "2011-08-24 21:07:01.720+00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Exec(ctx, `CREATE OR REPLACE FUNCTION `+schema+`.clock_timestamp() RETURNS timestamptz
				LANGUAGE sql AS $$ SELECT timestamptz '`+tc.now+`' $$`); err != nil {
				t.Fatalf("clock_timestamp(): %v", err)
			}
			g, err := segment.DialInstagram(ctx, at(schema+",pg_catalog"), segment.InstagramConfig{Shard: 1, Seq: "seq"})
			if err != nil {
				t.Fatalf("DialInstagram() = %v", err)
			}
			defer g.Close()
			id, err := g.Next(ctx)
			if !tc.ok {
				if !errors.Is(err, idgen.ErrLayoutExhausted) {
					t.Fatalf("Next() at %s = %v, %v; want ErrLayoutExhausted", tc.now, id, err)
				}
				return
			}
			want, _ := time.Parse("2006-01-02 15:04:05.000-07", tc.now)
			if err != nil || !id.Time().Equal(want) {
				t.Fatalf("Next() at %s = %v (time %v), %v; want time %v", tc.now, id, id.Time(), err, want)
			}
		})
	}
}
