package strategies

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
)

// ErrSpec reports a spec that names an unknown strategy or key, or a value
// its key does not allow. The wrapping error lists the valid choices.
var ErrSpec = errors.New("strategies: invalid spec")

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
	// network (a dsn key), or a key from the environment (public): what a
	// bare spec cannot give, so default runs of every strategy leave it out.
	External bool
	// Build returns a generator. It reads its keys from p.
	Build func(ctx context.Context, p *Params) (idgen.Generator, error)
	// Scheme returns the scheme Build's generator would issue, without
	// building it (no store is contacted).
	Scheme func(p *Params) (*idgen.Scheme, error)
}

var registry = map[string]*Strategy{}

func register(s *Strategy) { registry[s.Name] = withEncoding(s) }

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

// Params are a spec's key=value pairs, checked against its strategy's keys.
type Params struct {
	strategy string
	values   map[string]string
}

// ParseSpec splits "name?k=v&k=v" and checks the name and keys against the
// registry. Values are percent-decoded ('+' stays '+').
func ParseSpec(spec string) (*Strategy, *Params, error) {
	name, query, _ := strings.Cut(strings.TrimSpace(spec), "?")
	s, ok := registry[name]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown strategy %q; valid: %s", ErrSpec, name, strings.Join(Names(), ", "))
	}
	p := &Params{strategy: name, values: map[string]string{}}
	if query == "" {
		return s, p, nil
	}
	for kv := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k != EncodingKey && !slices.ContainsFunc(s.Keys, func(key Key) bool { return key.Name == k }) {
			return nil, nil, fmt.Errorf("%w: %s: unknown key %q; valid keys: %s", ErrSpec, name, k, keyNames(s))
		}
		if _, dup := p.values[k]; dup {
			return nil, nil, fmt.Errorf("%w: %s: key %q given twice", ErrSpec, name, k)
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %s=%q is not valid percent-encoding", ErrSpec, name, k, v)
		}
		p.values[k] = dv
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

// New builds the generator a spec names. A generator holding resources
// (connections, goroutines) implements io.Closer; close it when done.
func New(spec string) (idgen.Generator, error) {
	return NewContext(context.Background(), spec)
}

// NewContext is New with a context for any store the strategy contacts.
func NewContext(ctx context.Context, spec string) (idgen.Generator, error) {
	s, p, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.Build(ctx, p)
}

// SchemeOf returns the scheme a spec's generator issues, without building it.
func SchemeOf(spec string) (*idgen.Scheme, error) {
	s, p, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.Scheme(p)
}

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

func (p *Params) bad(key, v, want string) error {
	return fmt.Errorf("%w: %s: %s=%s: want %s", ErrSpec, p.strategy, key, quote(v), want)
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
