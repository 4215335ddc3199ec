package strategies

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/segment"
)

// The database-backed strategies: Leaf segments, Flickr ticket servers and
// Instagram's PL/pgSQL IDs (package segment). A DSN's own '&' must be
// written %26 inside a spec.
func init() {
	register(&Strategy{
		Name: "segment",
		Doc:  "Leaf segment allocator: dense increasing 64-bit IDs from a biz tag in PostgreSQL, MySQL or Redis",
		Keys: []Key{
			{"dsn", "store URL: postgres://, mysql:// or redis:// (required)"},
			{"tag", "biz tag, created by `idgen segment init` (required)"},
			{"step", "first segment's size, 1 to 2^31-1 (default: the tag's step)"},
			{"min_step", "floor of the dynamic step (default: the first step)"},
			{"max_step", "cap of the dynamic step (default 1000000)"},
			{"prefetch", "used share of a segment that starts the next fetch, (0, 1] (default 0.1)"},
			{"auto_create", "create an unknown tag instead of failing (default false)"},
		},
		External: true,
		Build:    buildSegment,
		Scheme:   func(*Params) (*idgen.Scheme, error) { return segment.Scheme, nil },
	})
	register(&Strategy{
		Name: "ticket",
		Doc:  "Flickr ticket servers: round robin over n servers, server k issuing k mod n (PostgreSQL, MySQL, Redis; set up with `idgen ticket init`)",
		Keys: []Key{
			{"dsn", "comma-separated server URLs, in any order: postgres://, mysql:// or redis:// (required)"},
			{"name", "sequence, table or key name (default tickets64)"},
		},
		External: true,
		Build:    buildTicket,
		Scheme:   func(*Params) (*idgen.Scheme, error) { return segment.TicketScheme, nil },
	})
	register(&Strategy{
		Name: "instagram",
		Doc:  "Instagram IDs from PL/pgSQL: time 41 + shard 13 + sequence 10 (install with `idgen segment init --instagram`)",
		Keys: []Key{
			{"dsn", "PostgreSQL URL, postgres:// (required)"},
			{"shard", "logical shard, 0 to 8191 (default 0)"},
			{"seq", "per-table sequence (default " + segment.DefaultInstagramSeq + ")"},
		},
		External: true,
		Build:    buildInstagram,
		Scheme:   func(*Params) (*idgen.Scheme, error) { return segment.InstagramScheme, nil },
	})
}

func requireKey(p *Params, key, want string) (string, error) {
	v := strings.TrimSpace(p.String(key, ""))
	if v == "" {
		return "", fmt.Errorf("%w: %s: %s is required (%s)", ErrSpec, p.strategy, key, want)
	}
	return v, nil
}

func buildSegment(ctx context.Context, p *Params) (idgen.Generator, error) {
	dsn, err := requireKey(p, "dsn", "postgres://, mysql:// or redis:// URL")
	if err != nil {
		return nil, err
	}
	var cfg segment.Config
	if cfg.Tag, err = requireKey(p, "tag", "a biz tag"); err != nil {
		return nil, err
	}
	if cfg.Step, err = p.Int("step", 0, 1, segment.MaxStep); err != nil {
		return nil, err
	}
	if cfg.MinStep, err = p.Int("min_step", 0, 1, segment.MaxStep); err != nil {
		return nil, err
	}
	if cfg.MaxStep, err = p.Int("max_step", 0, 1, segment.MaxStep); err != nil {
		return nil, err
	}
	if p.Has("prefetch") {
		v := p.String("prefetch", "")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return nil, p.bad("prefetch", v, "a share in (0, 1], such as 0.1")
		}
		cfg.Prefetch = f
	}
	if cfg.AutoCreate, err = p.Bool("auto_create", false); err != nil {
		return nil, err
	}
	if notify := p.opts.Notify; notify != nil {
		cfg.OnLimit = func(l segment.Limit) { notify(l.String()) }
	}
	return segment.Dial(ctx, dsn, cfg)
}

func buildTicket(ctx context.Context, p *Params) (idgen.Generator, error) {
	list, err := requireKey(p, "dsn", "comma-separated server URLs")
	if err != nil {
		return nil, err
	}
	return segment.DialTickets(ctx, strings.Split(list, ","), p.String("name", ""))
}

func buildInstagram(ctx context.Context, p *Params) (idgen.Generator, error) {
	dsn, err := requireKey(p, "dsn", "a postgres:// URL")
	if err != nil {
		return nil, err
	}
	shard, err := p.Int("shard", 0, 0, segment.MaxShard)
	if err != nil {
		return nil, err
	}
	return segment.DialInstagram(ctx, dsn, segment.InstagramConfig{Shard: int(shard), Seq: p.String("seq", "")})
}
