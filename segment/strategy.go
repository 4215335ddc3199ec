package segment

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// The database-backed strategies of package strategies' registry: Leaf
// segments, Flickr ticket servers and Instagram's PL/pgSQL IDs. They
// register here, as database/sql's drivers do, so that a program links
// the store drivers (pgx, MySQL, Redis) only when it imports this package
// (idgen's CLI imports it for this side effect). A DSN's own '&' must be
// written %26 inside a spec.
func init() {
	strategies.Register(&strategies.Strategy{
		Name: "segment",
		Doc:  "Leaf segment allocator: dense increasing 64-bit IDs from a biz tag in PostgreSQL, MySQL or Redis",
		Keys: []strategies.Key{
			{Name: "dsn", Doc: "store URL: postgres://, mysql:// or redis:// (required)"},
			{Name: "tag", Doc: "biz tag, created by `idgen segment init` (required)"},
			{Name: "step", Doc: "first segment's size, 1 to 2^31-1 (default: the tag's step)"},
			{Name: "min_step", Doc: "floor of the dynamic step (default: the first step)"},
			{Name: "max_step", Doc: "cap of the dynamic step (default 1000000)"},
			{Name: "prefetch", Doc: "used share of a segment that starts the next fetch, (0, 1] (default 0.1)"},
			{Name: "rate", Doc: "IDs/s expected, a hint that sizes the first segments so that the first switch does not wait (default: none)"},
			{Name: "auto_create", Doc: "create an unknown tag instead of failing (default false)"},
		},
		External: true,
		Build:    buildSegment,
		Scheme:   func(*strategies.Params) (*idgen.Scheme, error) { return segmentScheme, nil },
	})
	strategies.Register(&strategies.Strategy{
		Name: "ticket",
		Doc:  "Flickr ticket servers: round robin over n servers, server k issuing k mod n (PostgreSQL, MySQL, Redis; set up with `idgen ticket init`)",
		Keys: []strategies.Key{
			{Name: "dsn", Doc: "comma-separated server URLs, in any order: postgres://, mysql:// or redis:// (required)"},
			{Name: "name", Doc: "sequence, table or key name (default tickets64)"},
		},
		External: true,
		Build:    buildTicket,
		Scheme:   func(*strategies.Params) (*idgen.Scheme, error) { return ticketScheme, nil },
	})
	strategies.Register(&strategies.Strategy{
		Name: "instagram",
		Doc:  "Instagram IDs from PL/pgSQL: time 41 + shard 13 + sequence 10 (install with `idgen segment init --instagram`)",
		Keys: []strategies.Key{
			{Name: "dsn", Doc: "PostgreSQL URL, postgres:// (required)"},
			{Name: "shard", Doc: "logical shard, 0 to 8191 (default 0)"},
			{Name: "seq", Doc: "per-table sequence (default " + DefaultInstagramSeq + ")"},
		},
		External: true,
		Build:    buildInstagram,
		Scheme:   func(*strategies.Params) (*idgen.Scheme, error) { return instagramScheme, nil },
	})
}

func buildSegment(ctx context.Context, p *strategies.Params) (idgen.Generator, error) {
	dsn, err := p.Required("dsn", "postgres://, mysql:// or redis:// URL")
	if err != nil {
		return nil, err
	}
	var cfg Config
	if cfg.Tag, err = p.Required("tag", "a biz tag"); err != nil {
		return nil, err
	}
	if cfg.Step, err = p.Int("step", 0, 1, MaxStep); err != nil {
		return nil, err
	}
	if cfg.MinStep, err = p.Int("min_step", 0, 1, MaxStep); err != nil {
		return nil, err
	}
	if cfg.MaxStep, err = p.Int("max_step", 0, 1, MaxStep); err != nil {
		return nil, err
	}
	if cfg.Prefetch, err = floatParam(p, "prefetch", "a share in (0, 1], such as 0.1", func(f float64) bool { return f > 0 && f <= 1 }); err != nil {
		return nil, err
	}
	if cfg.Rate, err = floatParam(p, "rate", "IDs/s, a number at least 0, such as 20000000", func(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }); err != nil {
		return nil, err
	}
	if cfg.AutoCreate, err = p.Bool("auto_create", false); err != nil {
		return nil, err
	}
	if notify := p.Options().Notify; notify != nil {
		cfg.OnLimit = func(l Limit) { notify(l.String()) }
	}
	return Dial(ctx, dsn, cfg)
}

// floatParam returns key's value as a number that ok accepts, or 0 when
// the spec does not set it; want describes the values ok accepts.
func floatParam(p *strategies.Params, key, want string, ok func(float64) bool) (float64, error) {
	if !p.Has(key) {
		return 0, nil
	}
	v := p.String(key, "")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !ok(f) { // NaN fails every ok
		return 0, p.Invalid(key, v, want)
	}
	return f, nil
}

func buildTicket(ctx context.Context, p *strategies.Params) (idgen.Generator, error) {
	list, err := p.Required("dsn", "comma-separated server URLs")
	if err != nil {
		return nil, err
	}
	return DialTickets(ctx, strings.Split(list, ","), p.String("name", ""))
}

func buildInstagram(ctx context.Context, p *strategies.Params) (idgen.Generator, error) {
	dsn, err := p.Required("dsn", "a postgres:// URL")
	if err != nil {
		return nil, err
	}
	shard, err := p.Int("shard", 0, 0, MaxShard)
	if err != nil {
		return nil, err
	}
	return DialInstagram(ctx, dsn, InstagramConfig{Shard: int(shard), Seq: p.String("seq", "")})
}
