package serving

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/lazyre"
)

// namePattern is what a generator name may look like: on HTTP it becomes
// a path segment, /api/v1/{name}/ids, and gRPC takes the same names so
// that one config file serves alike on both.
var namePattern = lazyre.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// reserved are the names that would shadow other HTTP routes.
var reserved = []string{"ids", "generators", "openapi.json"}

// CheckName returns nil when name may name a generator on both transports:
// [A-Za-z0-9][A-Za-z0-9_.-]*, at most 64 characters, and not "ids",
// "generators" or "openapi.json". Its error names the input, cut to
// about 64 bytes, and the rule.
func CheckName(name string) error {
	if !namePattern().MatchString(name) || slices.Contains(reserved, name) {
		return fmt.Errorf("generator name %q: want [A-Za-z0-9][A-Za-z0-9_.-]*, at most 64 characters, not %s",
			echo.Cut(name), strings.Join(reserved, ", "))
	}
	return nil
}

// Config is what a transport's Options give the core.
type Config struct {
	// Default names the default generator. Empty means the only
	// generator when there is one, else DefaultName.
	Default string
	// MaxCount is the largest count a request may ask for. Zero means
	// DefaultMaxCount.
	MaxCount int
	// Timeout bounds how long a request may wait for its IDs. Zero means
	// no bound but the request's own.
	Timeout time.Duration
}

// A Gen is one generator of a Set and its name.
type Gen struct {
	Name   string
	Gen    idgen.Generator
	Scheme *idgen.Scheme
}

// A Set is the named generator set a transport serves, with the limits
// both transports apply: the one place the name rule (CheckName), the
// default rule, the largest count and the timeout are settled.
type Set struct {
	gens     []Gen // sorted by name
	names    []string
	def      string
	maxCount int
	timeout  time.Duration
}

// NewSet checks gens and c and returns their Set. The map must hold at
// least one generator, each named by CheckName's rule and with a scheme;
// MaxCount must be zero or positive, Timeout not negative, and Default
// (or its rule's choice) one of the names. An error names the field or
// generator at fault; the transport wraps it with its ErrConfig.
func NewSet(gens map[string]idgen.Generator, c Config) (*Set, error) {
	if len(gens) == 0 {
		return nil, errors.New("no generators to serve")
	}
	s := &Set{maxCount: c.MaxCount, timeout: c.Timeout}
	if s.maxCount == 0 {
		s.maxCount = DefaultMaxCount
	}
	if s.maxCount < 1 {
		return nil, fmt.Errorf("MaxCount %d must be at least 1", c.MaxCount)
	}
	if s.timeout < 0 {
		return nil, fmt.Errorf("Timeout %v must not be negative", c.Timeout)
	}
	for name, g := range gens {
		if err := CheckName(name); err != nil {
			return nil, err
		}
		if g == nil || g.Scheme() == nil {
			return nil, fmt.Errorf("generator %q is nil or has no scheme", name)
		}
		s.gens = append(s.gens, Gen{Name: name, Gen: g, Scheme: g.Scheme()})
	}
	slices.SortFunc(s.gens, func(a, b Gen) int { return strings.Compare(a.Name, b.Name) })
	for _, g := range s.gens {
		s.names = append(s.names, g.Name)
	}
	s.def = c.Default
	if s.def == "" {
		s.def = DefaultName
		if len(gens) == 1 {
			s.def = s.names[0]
		}
	}
	if _, ok := gens[s.def]; !ok {
		return nil, fmt.Errorf("default generator %q is not among %s", echo.Cut(s.def), strings.Join(s.names, ", "))
	}
	return s, nil
}

// Gens returns the generators in name order; the slice is shared: do not
// modify it.
func (s *Set) Gens() []Gen { return s.gens }

// Names returns the generators' names, sorted; the slice is shared.
func (s *Set) Names() []string { return s.names }

// Default returns the default generator's name.
func (s *Set) Default() string { return s.def }

// MaxCount returns the largest count a request may ask for.
func (s *Set) MaxCount() int { return s.maxCount }

// Timeout returns how long a request may wait for its IDs; 0 is no bound.
func (s *Set) Timeout() time.Duration { return s.timeout }

// Unknown returns the answer to a request naming a generator the set does
// not hold (HTTP 404, gRPC NotFound): the name, cut, and the names served.
func (s *Set) Unknown(name string) error {
	return &requestError{KindNotFound, fmt.Sprintf("unknown generator %q; served: %s", echo.Cut(name), strings.Join(s.names, ", "))}
}
