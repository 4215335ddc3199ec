package strategies

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
)

// ErrSpec reports a spec that names an unknown strategy or key, or a value
// its key does not allow. The wrapping error lists the valid choices.
var ErrSpec = errclass.Invalid("strategies: invalid spec")

// A Key is one key a strategy's spec accepts.
type Key struct {
	Name string
	Doc  string // one line: meaning, unit, default
}

// A Strategy builds generators of one kind from spec parameters.
type Strategy struct {
	Name string
	Doc  string // one line
	Keys []Key
	// External reports that the strategy needs a store it reaches over the
	// network (a dsn key), or a key from Options.LookupKey (public): what a
	// bare spec cannot give, so default runs of every strategy leave it out.
	External bool
	// Build returns a generator. It reads its keys from p.
	Build func(ctx context.Context, p *Params) (idgen.Generator, error)
	// Scheme returns the scheme Build's generator would issue, without
	// building it (no store is contacted).
	Scheme func(p *Params) (*idgen.Scheme, error)
	// Keyspace describes the IDs Build's generator can issue, as
	// Options.Keyspace returns it (without the keyspace key's name), or ""
	// when two such generators cannot issue the same IDs. Nil means "".
	Keyspace func(p *Params) (string, error)
}

var registry = map[string]*Strategy{}

func register(s *Strategy) { registry[s.Name] = withEncoding(s) }

// Register adds s to the registry, as database/sql's drivers register: a
// package whose strategies need a store registers them from its init
// (package segment: segment, ticket and instagram), so that a program
// links a store's driver only when it imports that package; idgen's CLI
// imports them all for this side effect. It panics when s has no name or
// Build, or its name is taken.
func Register(s *Strategy) {
	if s.Name == "" || s.Build == nil {
		panic("strategies: Register of a strategy without a name or Build")
	}
	if _, dup := registry[s.Name]; dup {
		panic("strategies: Register called twice for " + s.Name)
	}
	register(s)
}

// List returns the registered strategies, sorted by name.
func List() []*Strategy {
	out := make([]*Strategy, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Strategy) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the registered strategy names, sorted.
func Names() []string {
	var names []string
	for _, s := range List() {
		names = append(names, s.Name)
	}
	return names
}

// Lookup returns the named strategy.
func Lookup(name string) (*Strategy, bool) {
	s, ok := registry[name]
	return s, ok
}

// Params are a spec's key=value pairs, checked against its strategy's keys,
// and the Options it is built with.
type Params struct {
	strategy string
	spec     string // the spec text, for errors
	values   map[string]string
	opts     Options
}

// Options are the settings a spec does not carry, which a program resolves
// from its own environment and passes in (idgen's CLI reads IDGEN_WORKER_ID
// and the variables key_env names). The zero Options is usable: no
// override, and public specs are refused.
type Options struct {
	// WorkerID, when not empty, overrides the worker key (the machine key
	// of sonyflake and xid; a snowflake layout's WorkerField, such as
	// machine or shard where it has no worker field) of every strategy
	// that has one, and is the
	// worker ID of the env worker source: decimal, in the field's range, 0
	// to 2^bits-1. Beside any other worker source it is refused (a
	// *WorkerConflictError), as the worker key is. Errors name it
	// EnvWorkerID, the variable idgen's CLI reads it from. Empty means the
	// spec's own key.
	WorkerID string
	// LookupKey returns the key text a public spec's key_env names
	// (public.ParseKeys's form: 64 hex digits, or ID:HEX,ID:HEX), and
	// whether it is set; idgen's CLI passes the environment's lookup. The text never
	// appears in errors. Nil means public specs are refused.
	LookupKey func(name string) (string, bool)
	// Warn receives a worker source's warning for the operator (a
	// hostname hash, which can collide), once the generator is built.
	// Nil means warnings are dropped.
	Warn func(msg string)
	// Notify receives what a generator's background work finds for the
	// operator while it runs: a segment allocator's "step bound too small
	// for this rate" and its end (segment.Limit's sentence). It is called
	// from any goroutine at any time after the generator is built and must
	// not block. Nil means they are dropped.
	Notify func(msg string)
}

// CheckSpec parses spec text as ParseSpec does and checks its strategy's
// name and keys against the registry, as New does: the one parse between a
// spec's text and its generator, whose Spec then flows to New, SchemeOf,
// Keyspace and Resolve unparsed. Errors are *SpecError values wrapping
// ErrSpec that list the valid names or keys; an unknown name is reported
// first, then each key in order (an unknown key before its value's
// escaping).
func CheckSpec(text string) (Spec, error) {
	name, _, _ := strings.Cut(strings.TrimSpace(text), "?")
	s, ok := registry[strings.TrimSpace(name)]
	if !ok {
		return Spec{}, unknownStrategy(text, name)
	}
	return parseSpec(text, func(k string) error {
		if !s.takes(k) {
			return unknownKey(s, k)
		}
		return nil
	})
}

func unknownStrategy(spec, name string) error {
	return specError(spec, "", name, fmt.Errorf("%w: unknown strategy %s; valid: %s", ErrSpec, quote(name), strings.Join(Names(), ", ")))
}

func unknownKey(s *Strategy, k string) error {
	return fmt.Errorf("%w: %s: unknown key %s; valid keys: %s", ErrSpec, s.Name, strconv.Quote(echo.CutN(k, echo.Max/2)), keyNames(s))
}

// takes reports whether s's specs take key k: one of its Keys, or a key
// every strategy takes (EncodingKey, KeyspaceKey).
func (s *Strategy) takes(k string) bool {
	return k == EncodingKey || k == KeyspaceKey || slices.ContainsFunc(s.Keys, func(key Key) bool { return key.Name == k })
}

// Resolve checks spec's name and keys against the registry, as CheckSpec
// does, and returns its strategy and the Params its Build, Scheme and
// Keyspace read. Errors are *SpecError values wrapping ErrSpec that list
// the valid names or keys. No text is parsed.
func Resolve(spec Spec) (*Strategy, *Params, error) { return Options{}.Resolve(spec) }

// Resolve is the package's Resolve, the Params carrying o.
func (o Options) Resolve(spec Spec) (*Strategy, *Params, error) {
	text := spec.String()
	s, ok := registry[spec.Name()]
	if !ok {
		return nil, nil, unknownStrategy(text, spec.Name())
	}
	p := &Params{strategy: s.Name, spec: text, values: map[string]string{}, opts: o}
	for k, v := range spec.All() {
		if !s.takes(k) {
			return nil, nil, specError(text, k, v, unknownKey(s, k))
		}
		p.values[k] = v
	}
	return s, p, nil
}

func keyNames(s *Strategy) string {
	var names []string
	for _, k := range s.Keys {
		names = append(names, k.Name)
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// New builds the generator a spec names, with zero Options; ctx bounds
// any store the strategy contacts. A generator holding resources
// (connections, goroutines, a worker ID lease) implements io.Closer; close
// it when done. A bad spec is a *SpecError wrapping ErrSpec, or
// idgen.ErrOutOfRange for a node value outside its layout field. The spec
// is not parsed again: a program that reads spec text parses it once
// (ParseSpec, CheckSpec, MustParse) and passes the Spec on; NewText takes
// the text.
func New(ctx context.Context, spec Spec) (idgen.Generator, error) {
	return Options{}.New(ctx, spec)
}

// New is the package's New, built with o.
func (o Options) New(ctx context.Context, spec Spec) (idgen.Generator, error) {
	s, p, err := o.Resolve(spec)
	if err != nil {
		return nil, err
	}
	return s.Build(ctx, p)
}

// NewText is New of spec text ("snowflake?preset=twitter&worker=7"),
// checked by CheckSpec: errors as CheckSpec and New give them.
func NewText(ctx context.Context, text string) (idgen.Generator, error) {
	return Options{}.NewText(ctx, text)
}

// NewText is the package's NewText, built with o.
func (o Options) NewText(ctx context.Context, text string) (idgen.Generator, error) {
	spec, err := CheckSpec(text)
	if err != nil {
		return nil, err
	}
	return o.New(ctx, spec)
}

// SchemeOf returns the scheme a spec's generator issues, without building
// it, with zero Options.
func SchemeOf(spec Spec) (*idgen.Scheme, error) { return Options{}.SchemeOf(spec) }

// SchemeOf is the package's SchemeOf, with o.
func (o Options) SchemeOf(spec Spec) (*idgen.Scheme, error) {
	s, p, err := o.Resolve(spec)
	if err != nil {
		return nil, err
	}
	return s.Scheme(p)
}

// Options returns the Options the spec is built with.
func (p *Params) Options() Options { return p.opts }

// Has reports whether the spec gave key.
func (p *Params) Has(key string) bool {
	_, ok := p.values[key]
	return ok
}

// String returns key's value, or def when the spec did not give it.
func (p *Params) String(key, def string) string {
	if v, ok := p.values[key]; ok {
		return v
	}
	return def
}

// Required returns key's value, trimmed, or an error wrapping ErrSpec
// that says the key is required and what it takes (want).
func (p *Params) Required(key, want string) (string, error) {
	v := strings.TrimSpace(p.String(key, ""))
	if v == "" {
		return "", fmt.Errorf("%w: %s: %s is required (%s)", ErrSpec, p.strategy, key, want)
	}
	return v, nil
}

// Invalid returns the error for key's value v, which is not what the key
// takes (want): a *SpecError wrapping ErrSpec, v quoted and cut to about
// 64 bytes.
func (p *Params) Invalid(key, v, want string) error { return p.bad(key, v, want) }

func (p *Params) bad(key, v, want string) error {
	return specError(p.spec, key, v, fmt.Errorf("%w: %s: %s=%s: want %s", ErrSpec, p.strategy, key, quote(v), want))
}

// Int returns key's value as an integer in [lo, hi], or def.
func (p *Params) Int(key string, def, lo, hi int64) (int64, error) {
	v, ok := p.values[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, p.bad(key, v, fmt.Sprintf("an integer in [%d, %d]", lo, hi))
	}
	return n, nil
}

// Duration returns key's value as a positive duration (10ms, 1s), or def.
func (p *Params) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := p.values[key]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, p.bad(key, v, "a positive duration such as 10ms or 1s")
	}
	return d, nil
}

// Bool returns key's value as a boolean (true, false, 1, 0), or def.
func (p *Params) Bool(key string, def bool) (bool, error) {
	v, ok := p.values[key]
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, p.bad(key, v, "true or false")
	}
	return b, nil
}

// Choice returns key's value, which must be one of choices, or def.
func (p *Params) Choice(key, def string, choices ...string) (string, error) {
	v, ok := p.values[key]
	if !ok {
		return def, nil
	}
	if !slices.Contains(choices, v) {
		return "", p.bad(key, v, "one of "+strings.Join(choices, ", "))
	}
	return v, nil
}

// findScheme is package strategies' idgen.SchemeFinder: the scheme of the
// registered strategy a name (a bare spec) names. Layouts are package
// snowflake's.
func findScheme(name, layout string) (*idgen.Scheme, bool, error) {
	if layout != "" {
		return nil, false, nil
	}
	spec, err := CheckSpec(name)
	if err != nil {
		return nil, false, nil
	}
	s, err := SchemeOf(spec)
	return s, err == nil, nil
}

func init() { idgen.RegisterSchemeFinder(findScheme) }
