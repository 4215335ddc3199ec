package strategies

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// EnvWorkerID names the environment variable that overrides the worker ID.
const EnvWorkerID = "IDGEN_WORKER_ID"

func init() {
	keys := []Key{
		{"preset", "layout preset: " + fmt.Sprint(snowflake.Presets()) + " (default: default)"},
		{"layout", "layout text, e.g. time:41,worker:10,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z"},
		{"epoch", "override the layout's epoch: RFC 3339, a date, or unix ms"},
	}
	for _, n := range snowflake.NodeFields {
		keys = append(keys, Key{n, n + " ID, 0 to 2^bits-1 (default 0)"})
	}
	keys = append(keys,
		Key{"rollback", "clock rollback policy: fail, wait, wait-then-fail (default)"},
		Key{"max_wait", "wait-then-fail's bound (default 10ms)"},
		Key{"random_start", "start each tick's sequence at a random offset (default false)"},
		Key{"high_water", "file persisting the high-water mark (default none)"},
		Key{"high_water_ahead", "how far ahead the mark is written (default 1s)"},
		Key{"clock", "system (monotonic, default) or wall (time.Now per ID)"},
	)
	register(&Strategy{
		Name:   "snowflake",
		Doc:    "native 64-bit Snowflake, any layout or preset (twitter, discord, sonyflake, ...)",
		Keys:   keys,
		Build:  buildSnowflake,
		Scheme: func(p *Params) (*idgen.Scheme, error) { l, err := snowflakeLayout(p); return schemeOrErr(l, err) },
	})
}

func schemeOrErr(l snowflake.Layout, err error) (*idgen.Scheme, error) {
	if err != nil {
		return nil, err
	}
	return snowflake.SchemeOf(l)
}

func snowflakeLayout(p *Params) (snowflake.Layout, error) {
	if p.Has("preset") && p.Has("layout") {
		return snowflake.Layout{}, fmt.Errorf("%w: snowflake: give preset or layout, not both", ErrSpec)
	}
	var l snowflake.Layout
	var err error
	if p.Has("layout") {
		l, err = snowflake.ParseLayout(p.String("layout", ""))
	} else {
		l, err = snowflake.Preset(p.String("preset", "default"))
	}
	if err != nil {
		return l, err
	}
	if p.Has("epoch") {
		if l.Epoch, err = snowflake.ParseEpoch(p.String("epoch", "")); err != nil {
			return l, err
		}
	}
	return l, l.Validate()
}

func buildSnowflake(ctx context.Context, p *Params) (idgen.Generator, error) {
	cfg, err := snowflakeConfig(p)
	if err != nil {
		return nil, err
	}
	return snowflake.New(ctx, cfg)
}

func snowflakeConfig(p *Params) (snowflake.Config, error) {
	var cfg snowflake.Config
	var err error
	if cfg.Layout, err = snowflakeLayout(p); err != nil {
		return cfg, err
	}
	cfg.Nodes = map[string]int64{}
	for _, n := range snowflake.NodeFields {
		if !p.Has(n) {
			continue
		}
		v, err := strconv.ParseInt(p.String(n, ""), 10, 64)
		if err != nil {
			return cfg, p.bad(n, p.String(n, ""), "an integer")
		}
		cfg.Nodes[n] = v
	}
	if env := os.Getenv(EnvWorkerID); env != "" {
		if _, ok := cfg.Layout.Field("worker"); ok {
			v, err := strconv.ParseInt(env, 10, 64)
			if err != nil {
				return cfg, fmt.Errorf("%w: %s=%q is not an integer", ErrSpec, EnvWorkerID, env)
			}
			cfg.Nodes["worker"] = v
		}
	}
	pol, err := p.Choice("rollback", "wait-then-fail", "fail", "wait", "wait-then-fail")
	if err != nil {
		return cfg, err
	}
	cfg.Rollback, _ = snowflake.ParsePolicy(pol)
	if cfg.MaxWait, err = p.Duration("max_wait", snowflake.DefaultMaxWait); err != nil {
		return cfg, err
	}
	if cfg.RandomSequenceStart, err = p.Bool("random_start", false); err != nil {
		return cfg, err
	}
	if path := p.String("high_water", ""); path != "" {
		cfg.HighWater = snowflake.FileHighWater{Path: path}
	}
	if cfg.HighWaterAhead, err = p.Duration("high_water_ahead", snowflake.DefaultHighWaterAhead); err != nil {
		return cfg, err
	}
	clk, err := p.Choice("clock", "system", "system", "wall")
	if err != nil {
		return cfg, err
	}
	if clk == "wall" {
		cfg.Clock = snowflake.WallClock()
	}
	return cfg, nil
}
