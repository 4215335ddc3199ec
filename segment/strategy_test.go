package segment_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
	"github.com/redis/go-redis/v9"
)

func TestSegmentStrategies(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.RedisURL(t)
	tag := uniqueSuffix("strategies_test_segment")
	st, err := segment.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("segment.Open(%q) = %v", dsn, err)
	}
	defer st.Close()
	if _, _, err := st.Init(ctx, tag, 1000, ""); err != nil {
		t.Fatalf("Init(%q) = %v", tag, err)
	}
	t.Cleanup(func() {
		opt, _ := redis.ParseURL(dsn)
		c := redis.NewClient(opt)
		k := segment.RedisPrefix + "{" + tag + "}"
		c.Del(context.Background(), k, k+":step")
		c.Close()
	})

	spec := withDSN("segment?step=500&prefetch=0.2&rate=1000", dsn).With("tag", tag).String()
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		t.Fatalf("New(%q) = %v", spec, err)
	}
	defer g.(io.Closer).Close()
	if g.Scheme() != segment.Scheme() {
		t.Fatalf("New(%q).Scheme() = %v; want segment.Scheme()", spec, g.Scheme())
	}
	idgentest.Run(t, fromSpec(spec), idgentest.Options{PerGoroutine: 20_000})

	for _, name := range []string{"segment", "ticket", "instagram"} {
		spec := name + "?dsn=redis://127.0.0.1:1/0"
		s, err := strategies.SchemeOf(strategies.MustParse(spec))
		if err != nil || s == nil || s.Size != 8 || s.Column != "bigint" {
			t.Fatalf("SchemeOf(%q) = %v, %v; want an 8-byte bigint scheme, no store contacted", spec, s, err)
		}
		if st, _ := strategies.Lookup(name); !st.External {
			t.Fatalf("Lookup(%q).External = false; want true", name)
		}
	}
	// inspect decodes Instagram IDs by the snowflake preset.
	id, err := strategies.ParseWith("1387263000000000001", "instagram")
	if err != nil || id.Scheme() != segment.InstagramScheme() {
		t.Fatalf("ParseWith(instagram) = %v, %v; want an InstagramScheme() ID", id, err)
	}
}

func uniqueSuffix(prefix string) string { return fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()) }

func TestSegmentStrategyBadInput(t *testing.T) {
	dsn := testenv.RedisURL(t)
	cases := []struct {
		name, spec string
		want       error
		mention    string
	}{
		{"no dsn", "segment?tag=x", strategies.ErrSpec, "dsn is required"},
		{"no tag", withDSN("segment", dsn).String(), strategies.ErrSpec, "tag is required"},
		{"step 0", withDSN("segment?tag=x&step=0", dsn).String(), strategies.ErrSpec, `step="0"`},
		{"step negative", withDSN("segment?tag=x&step=-3", dsn).String(), strategies.ErrSpec, `step="-3"`},
		{"prefetch", withDSN("segment?tag=x&prefetch=2", dsn).String(), strategies.ErrSpec, `prefetch="2"`},
		{"rate", withDSN("segment?tag=x&rate=-5", dsn).String(), strategies.ErrSpec, `rate="-5"`},
		{"unknown tag", withDSN("segment", dsn).With("tag", uniqueSuffix("never_created_tag")).String(), segment.ErrUnknownTag, "never_created_tag_"},
		{"bad dsn", "segment?dsn=ftp://x/y&tag=x", segment.ErrDSN, `"ftp"`},
		{"unreachable", "segment?dsn=redis://127.0.0.1:1/0&tag=x", segment.ErrUnreachable, "cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused"},
		{"ticket no dsn", "ticket", strategies.ErrSpec, "dsn is required"},
		{"ticket unreachable", "ticket?dsn=redis://127.0.0.1:1/0,redis://127.0.0.1:1/1", segment.ErrUnreachable, "cannot connect to Redis at 127.0.0.1:1 (database 1)"},
		{"ticket listed twice", withDSN("ticket", dsn+","+dsn).String(), segment.ErrConfig, "listed twice"},
		{"instagram shard", "instagram?dsn=postgres://127.0.0.1/x&shard=8192", strategies.ErrSpec, `shard="8192"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), c.spec)
			if err == nil {
				g.(io.Closer).Close()
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("New(%q) = %v; want %v naming %q", c.spec, err, c.want, c.mention)
			}
		})
	}
}

// withDSN returns spec with dsn set.
func withDSN(spec, dsn string) strategies.Spec { return strategies.MustParse(spec).With("dsn", dsn) }

// fromSpec is an idgentest.Run constructor: a generator from spec, which
// Run closes.
func fromSpec(spec string) func(t *testing.T) idgen.Generator {
	return func(t *testing.T) idgen.Generator {
		t.Helper()
		g, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) = %v", spec, err)
		}
		return g
	}
}
