package compare

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// workerKeys are the spec keys, in order of preference, through which each
// writer gets its own worker ID, for a strategy without a Snowflake
// layout (flake128, xid). The first one the strategy declares and accepts
// is used. A strategy whose scheme has a layout (snowflake, sonyflake,
// instagram) uses the layout's snowflake.Layout.WorkerField instead.
var workerKeys = []string{"worker", "machine", "node", "shard", "process"}

// A plan is one row of the comparison: a strategy and its writers'
// generators, or the baseline (no generators: the server fills the key).
type plan struct {
	spec      string // as given; builds the generators
	label     string // spec with its passwords masked: what is printed and written
	name      string // strategy name, or Baseline
	scheme    *idgen.Scheme
	column    string
	keyBytes  int
	workerKey string
	gens      []idgen.Generator // one per writer
	// series: the keys are first, first+1, ... (the harness check's rows);
	// server: the server generates them (INSERT ... SELECT generate_series).
	series, server bool
	// swap: UUIDv1 keys stored as UUID_TO_BIN(u, 1) (SwappedV1).
	swap bool
	// serverKey: the server generates the keys (a ServerKey's Name);
	// auto: added to the default strategies, left out where the server
	// lacks it.
	serverKey string
	auto      bool
	// external: the strategy needs a store (strategies.Strategy.External).
	external bool
}

// A ServerKey is a key the server generates itself, as the column's
// DEFAULT. Its rows are loaded the same way as the Baseline's (binary COPY
// of the other columns, the server fills the key), so that the ratio to
// the Baseline compares key schemes, not loading paths.
type ServerKey struct {
	Name        string // the row's name: "pg-uuidv7"
	Scheme      string // the client-side scheme of the same keys: "uuidv7"
	Default     string // the DEFAULT expression: "uuidv7()"
	MinPostgres int    // the first PostgreSQL major version that has it
}

// ServerKeys returns the server-generated keys, in a new slice: PostgreSQL
// 18's uuidv7() and gen_random_uuid() (PostgreSQL 13 and later).
func ServerKeys() []ServerKey { return slices.Clone(serverKeys) }

var serverKeys = []ServerKey{
	{Name: "pg-uuidv7", Scheme: "uuidv7", Default: "uuidv7()", MinPostgres: 18},
	{Name: "pg-uuidv4", Scheme: "uuidv4", Default: "gen_random_uuid()", MinPostgres: 13},
}

// serverKeyOf returns the ServerKey named name, or nil.
func serverKeyOf(name string) *ServerKey {
	for i := range serverKeys {
		if serverKeys[i].Name == name {
			return &serverKeys[i]
		}
	}
	return nil
}

// buildServerKey builds the row of a server-generated key.
func buildServerKey(k *ServerKey, auto bool) (*plan, error) {
	scheme, err := strategies.Options{}.SchemeOf(strategies.MustParse(k.Scheme)) // a bare name
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadInput, k.Name, err)
	}
	return &plan{spec: k.Name, label: k.Name, name: k.Name, scheme: scheme, column: idgen.ColumnUUID, keyBytes: 16, serverKey: k.Name, auto: auto}, nil
}

func (p *plan) close() {
	for _, g := range p.gens {
		if c, ok := g.(io.Closer); ok {
			c.Close()
		}
	}
	p.gens = nil
}

func closePlans(ps []*plan) {
	for _, p := range ps {
		p.close()
	}
}

// buildPlans builds every strategy's generators, so that a bad spec is
// refused before any database is touched.
func buildPlans(ctx context.Context, cfg Config) ([]*plan, []string, error) {
	plans := []*plan{{spec: Baseline, label: Baseline, name: Baseline, column: idgen.ColumnBigint, keyBytes: 8}}
	var notes []string
	for _, spec := range cfg.Strategies {
		if k := serverKeyOf(spec); k != nil {
			p, err := buildServerKey(k, false)
			if err != nil {
				closePlans(plans)
				return nil, nil, err
			}
			plans = append(plans, p)
			continue
		}
		build := buildPlan
		if spec == SwappedV1 {
			build = func(ctx context.Context, _ strategies.Options, _ string, writers int) (*plan, string, error) {
				return buildSwapped(ctx, writers)
			}
		}
		p, note, err := build(ctx, cfg.SpecOptions, spec, cfg.Writers)
		if err != nil {
			closePlans(plans)
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		plans = append(plans, p)
	}
	if cfg.serverKeys {
		for i := range serverKeys {
			p, err := buildServerKey(&serverKeys[i], true)
			if err != nil {
				closePlans(plans)
				return nil, nil, err
			}
			plans = append(plans, p)
		}
	}
	return plans, notes, nil
}

// serverRows leaves out of rows the server-generated keys the server of sc
// lacks: silently (with a note) when they were added to the default
// strategies, with ErrBadInput when they were asked for.
func (h *harness) serverRows(rows []*plan, sc *Scenario) ([]*plan, error) {
	var out []*plan
	for _, p := range rows {
		if p.serverKey != "" && !sc.serverPK[p.serverKey] {
			k := serverKeyOf(p.serverKey)
			if !p.auto {
				return nil, fmt.Errorf("%w: %s: DEFAULT %s needs PostgreSQL %d or later; the server is %s", ErrBadInput, p.label, k.Default, k.MinPostgres, sc.ServerVersion)
			}
			h.noteOnce("serverkey "+p.serverKey, "%s left out: DEFAULT %s needs PostgreSQL %d or later (server %s); %s chooses the server binaries",
				p.label, k.Default, k.MinPostgres, sc.ServerVersion, h.cfg.name("Config.PGBin"))
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

func buildPlan(ctx context.Context, opts strategies.Options, spec string, writers int) (*plan, string, error) {
	parsed, err := strategies.CheckSpec(spec) // the one parse of the spec
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	st, _, err := opts.Resolve(parsed)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	scheme, err := opts.SchemeOf(parsed)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	p := &plan{spec: spec, label: redact.Spec(spec), name: st.Name, scheme: scheme, column: scheme.Column, external: st.External}
	switch {
	case scheme.Column == idgen.ColumnBigint && scheme.Size != 8,
		scheme.Column == idgen.ColumnUUID && scheme.Size != 16:
		return nil, "", fmt.Errorf("%w: %s: a %d-byte %s ID cannot be a %s column", ErrBadInput, p.label, scheme.Size, scheme.Name, scheme.Column)
	case scheme.Column != idgen.ColumnBigint && scheme.Column != idgen.ColumnUUID &&
		scheme.Column != idgen.ColumnBytea && scheme.Column != idgen.ColumnText:
		return nil, "", fmt.Errorf("%w: %s: unknown column type %q", ErrBadInput, p.label, scheme.Column)
	}
	specs, key, note, err := writerSpecs(ctx, opts, st, parsed, writers)
	if err != nil {
		return nil, "", err
	}
	p.workerKey = key
	for _, s := range specs {
		g, err := opts.New(ctx, s)
		if err != nil {
			p.close()
			return nil, "", fmt.Errorf("%w: %s: %w", ErrBadInput, redact.Spec(s.String()), err)
		}
		p.gens = append(p.gens, g)
	}
	switch p.column {
	case idgen.ColumnBigint:
		p.keyBytes = 8
	case idgen.ColumnUUID:
		p.keyBytes = 16
	case idgen.ColumnBytea:
		p.keyBytes = scheme.Size + 1
	case idgen.ColumnText:
		id, err := p.gens[0].Next(ctx) // one ID spent to learn the text length
		if err != nil {
			p.close()
			return nil, "", fmt.Errorf("%s: %w", p.label, err)
		}
		p.keyBytes = len(id.String()) + 1
	}
	return p, note, nil
}

// WriterSpecs returns the spec each of writers writers builds its generator
// from, and the worker key that tells them apart ("" when the strategy has
// none: its generators are independent, like UUIDv4's). Writer k gets
// key=k, or key=base+k when spec sets key=base. A strategy that declares a
// worker key its layout lacks (a Snowflake layout with a shard field and no
// worker field) falls through to the next of workerKeys. The specs are
// built with zero strategies.Options.
func WriterSpecs(ctx context.Context, spec string, writers int) (specs []string, key string, err error) {
	parsed, err := strategies.CheckSpec(spec)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	st, _, err := strategies.Resolve(parsed)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	parsedSpecs, key, _, err := writerSpecs(ctx, strategies.Options{}, st, parsed, writers)
	for _, s := range parsedSpecs {
		specs = append(specs, s.String())
	}
	return specs, key, err
}

func writerSpecs(ctx context.Context, opts strategies.Options, st *strategies.Strategy, spec strategies.Spec, writers int) ([]strategies.Spec, string, string, error) {
	label := redact.Spec(spec.String())
	// The spec must build as given; its own error is the one to report.
	g, err := opts.New(ctx, spec)
	if err != nil {
		return nil, "", "", fmt.Errorf("%w: %s: %w", ErrBadInput, label, err)
	}
	closeGen(g)
	keys := workerKeys
	if scheme, err := opts.SchemeOf(spec); err == nil {
		if l, ok := snowflake.LayoutOf(scheme); ok {
			keys = nil
			if name, _, ok := l.WorkerField(); ok {
				keys = []string{name}
			}
		}
	}
	for _, key := range keys {
		if !slices.ContainsFunc(st.Keys, func(k strategies.Key) bool { return k.Name == key }) {
			continue
		}
		specs, err := withWorker(spec, key, writers)
		if err != nil {
			return nil, "", "", err
		}
		// Try the first and the last writer: the key must exist in the
		// layout and the range must fit.
		if g, err = opts.New(ctx, specs[0]); err != nil {
			continue
		}
		closeGen(g)
		if g, err = opts.New(ctx, specs[len(specs)-1]); err != nil {
			return nil, "", "", fmt.Errorf("%w: %s: %d writers need %s IDs up to %s: %w", ErrBadInput, label, writers, key, redact.Spec(specs[len(specs)-1].String()), err)
		}
		closeGen(g)
		if env := opts.WorkerID; env != "" && writers > 1 {
			return nil, "", "", fmt.Errorf("%w: %s=%s overrides every writer's %s ID, so %d writers would issue the same IDs; unset it to compare", ErrBadInput, strategies.EnvWorkerID, env, key, writers)
		}
		return specs, key, "", nil
	}
	specs := make([]strategies.Spec, writers)
	for i := range specs {
		specs[i] = spec
	}
	var note string
	switch {
	case writers <= 1 || !slices.ContainsFunc(st.Keys, func(k strategies.Key) bool { return slices.Contains(workerKeys, k.Name) }):
	case len(keys) == 0:
		note = fmt.Sprintf("%s: the layout has no node field to tell writers apart; %d writers share the spec", label, writers)
	default:
		note = fmt.Sprintf("%s: no worker key accepted (tried %s); %d writers share the spec", label, strings.Join(keys, ", "), writers)
	}
	return specs, "", note, nil
}

// withWorker returns writers copies of spec with key=base+k last, base
// being the spec's own value of key (default 0).
func withWorker(spec strategies.Spec, key string, writers int) ([]strategies.Spec, error) {
	base := int64(0)
	if v, ok := spec.Get(key); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: %s: %s=%q: want a non-negative integer", ErrBadInput, redact.Spec(spec.String()), key, v)
		}
		base = n
	}
	spec = spec.Without(key)
	specs := make([]strategies.Spec, writers)
	for k := range specs {
		specs[k] = spec.With(key, strconv.FormatInt(base+int64(k), 10))
	}
	return specs, nil
}

func closeGen(g idgen.Generator) {
	if c, ok := g.(io.Closer); ok {
		c.Close()
	}
}
