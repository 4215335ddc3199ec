package strategies

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// EnvWorkerID names the environment variable idgen's CLI reads
// Options.WorkerID from; errors about that value name it.
const EnvWorkerID = "IDGEN_WORKER_ID"

func init() {
	keys := []Key{
		{"preset", "layout preset: " + fmt.Sprint(snowflake.Presets()) + " (default: default)"},
		{"layout", "layout text, e.g. time:41,worker:10,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z"},
		{"epoch", "override the layout's epoch: RFC 3339, a date, or unix ms"},
	}
	for _, n := range snowflake.NodeFields() {
		keys = append(keys, Key{n, n + " ID, 0 to 2^bits-1 (default 0)"})
	}
	keys = append(keys, Key{"random_start", "start each tick's sequence at a random offset (default false)"})
	keys = append(keys, coreKeys...)
	keys = append(keys, Key{"max_ahead", "hold's bound: how far ahead of the clock IDs may be issued (default 10s; 1s under bump)"})
	keys = append(keys, Key{"worker_source", WorkerSourceDoc + " (default none: the worker key; refused beside it)"})
	register(&Strategy{
		Name:   "snowflake",
		Doc:    "native 64-bit Snowflake, any layout or preset (twitter, discord, sonyflake, ...)",
		Keys:   keys,
		Build:  buildSnowflake,
		Scheme: func(p *Params) (*idgen.Scheme, error) { l, err := snowflakeLayout(p); return schemeOrErr(l, err) },
		Keyspace: func(p *Params) (string, error) {
			cfg, err := snowflakeConfig(p)
			if err != nil {
				return "", err
			}
			nodes := map[string]string{}
			for n, v := range cfg.Nodes {
				nodes[n] = strconv.FormatInt(v, 10)
			}
			return layoutKeyspace(p, cfg.Layout, nodes), nil
		},
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
		return snowflake.Layout{}, specError(p.spec, "preset", p.String("preset", ""), fmt.Errorf("%w: snowflake: give preset or layout, not both", ErrSpec))
	}
	key := "preset"
	var l snowflake.Layout
	var err error
	if p.Has("layout") {
		key = "layout"
		l, err = snowflake.ParseLayout(p.String("layout", ""))
	} else {
		l, err = snowflake.Preset(p.String("preset", "default"))
	}
	if err == nil && p.Has("epoch") {
		key = "epoch"
		l.Epoch, err = snowflake.ParseEpoch(p.String("epoch", ""))
	}
	if err == nil {
		err = l.Validate()
	}
	if err != nil {
		// A bad preset, layout or epoch is a bad spec value, as every other
		// key's is: a *SpecError wrapping ErrSpec (and the layout's error).
		return l, specError(p.spec, key, p.String(key, ""), fmt.Errorf("%w: %w", ErrSpec, err))
	}
	return l, nil
}

func buildSnowflake(ctx context.Context, p *Params) (idgen.Generator, error) {
	cfg, err := snowflakeConfig(p)
	if err != nil {
		return nil, err
	}
	if !p.Has("worker_source") {
		g, err := snowflake.New(ctx, cfg)
		if err != nil {
			return nil, nodeError(p, cfg, err)
		}
		return g, nil
	}
	if name, _, ok := cfg.Layout.WorkerField(); ok {
		if err := p.sourceConflict(name, true); err != nil {
			return nil, err
		}
	}
	space, err := layoutSpace(cfg.Layout, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	g, err := underSource(ctx, p, space, func(src WorkerSource) (*snowflake.Generator, error) {
		cfg.Lease, cfg.Closer, cfg.HighWater = src, src, sourceMark(src, cfg.HighWater)
		return snowflake.New(ctx, cfg)
	})
	if err != nil {
		return nil, nodeError(p, cfg, err)
	}
	return g, nil
}

func snowflakeConfig(p *Params) (snowflake.Config, error) {
	var cfg snowflake.Config
	var err error
	if cfg.Layout, err = snowflakeLayout(p); err != nil {
		return cfg, err
	}
	cfg.Nodes = map[string]int64{}
	for _, n := range snowflake.NodeFields() {
		if !p.Has(n) {
			continue
		}
		v, err := strconv.ParseInt(p.String(n, ""), 10, 64)
		if err != nil {
			return cfg, p.bad(n, p.String(n, ""), nodeRange(cfg.Layout, n))
		}
		cfg.Nodes[n] = v
	}
	if env := p.opts.WorkerID; env != "" {
		if worker, _, ok := cfg.Layout.WorkerField(); ok {
			v, err := strconv.ParseInt(env, 10, 64)
			if err != nil {
				return cfg, fmt.Errorf("%w: %s=%s: want %s", ErrSpec, EnvWorkerID, quote(env), nodeRange(cfg.Layout, worker))
			}
			cfg.Nodes[worker] = v
		}
	}
	if err := readCore(p, &cfg.Clock, &cfg.Rollback, &cfg.MaxWait, &cfg.HighWater, &cfg.HighWaterAhead); err != nil {
		return cfg, err
	}
	if cfg.MaxAhead, err = p.Duration("max_ahead", 0); err != nil {
		return cfg, err
	}
	if cfg.RandomSequenceStart, err = p.Bool("random_start", false); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// nodeError returns snowflake.New's err as a *SpecError about the node key
// of p whose value is outside its field, when it is about one.
func nodeError(p *Params, cfg snowflake.Config, err error) error {
	if !errors.Is(err, idgen.ErrOutOfRange) {
		return err
	}
	for _, n := range snowflake.NodeFields() {
		bits, ok := cfg.Layout.Field(n)
		if v, given := cfg.Nodes[n]; ok && given && p.Has(n) && (v < 0 || v >= 1<<bits) {
			return specError(p.spec, n, p.String(n, ""), err)
		}
	}
	return err
}

// nodeRange says what node field name of l takes: "an integer in [0, 31]"
// for a 5-bit field.
func nodeRange(l snowflake.Layout, name string) string {
	bits, ok := l.Field(name)
	if !ok {
		return fmt.Sprintf("an integer (the layout %s has no %s field)", l.WithDefaults(), name)
	}
	return fmt.Sprintf("an integer in [0, %d]", uint64(1)<<uint(bits)-1)
}

// coreKeys are the keys of every strategy built on the Snowflake core.
var coreKeys = []Key{
	{"rollback", "clock rollback policy: fail, wait, wait-then-fail (default), hold, bump (needs a clockseq field)"},
	{"max_wait", "wait-then-fail's bound (default 10ms)"},
	{"high_water", "file persisting the high-water mark (default none)"},
	{"high_water_ahead", "how far ahead the mark is written (default 1s)"},
	{"clock", "system (monotonic, default) or wall (time.Now per ID)"},
}

// readCore reads coreKeys into the fields of a Snowflake-core config.
func readCore(p *Params, clock *snowflake.Clock, policy *snowflake.Policy, maxWait *time.Duration, hw *snowflake.HighWaterStore, ahead *time.Duration) error {
	pol, err := p.Choice("rollback", "wait-then-fail", "fail", "wait", "wait-then-fail", "hold", "bump")
	if err != nil {
		return err
	}
	*policy, _ = snowflake.ParsePolicy(pol)
	if *maxWait, err = p.Duration("max_wait", snowflake.DefaultMaxWait); err != nil {
		return err
	}
	if path := p.String("high_water", ""); path != "" {
		*hw = snowflake.FileHighWater{Path: path}
	}
	if *ahead, err = p.Duration("high_water_ahead", snowflake.DefaultHighWaterAhead); err != nil {
		return err
	}
	clk, err := p.Choice("clock", "system", "system", "wall")
	if err != nil {
		return err
	}
	if clk == "wall" {
		*clock = snowflake.WallClock()
	}
	return nil
}
