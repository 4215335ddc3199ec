package strategies

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/speccount"
)

// A Spec is a parsed spec, a strategy's name and its keys in order:
//
//	name?key=value&key=value
//
// Spec values are comparable: two specs are equal when their names, keys,
// values and key order are. The zero Spec has no name.
//
// One escaping rule holds for every spec text, read or written: in a key or
// a value, '%' starts a percent-escape (%26 is '&'), and String escapes '%',
// '&', bytes outside printable ASCII (space, controls, non-ASCII), and '='
// in keys. '+' is a plus sign, not a space. So ParseSpec(s.String()) == s
// for every Spec s built by ParseSpec and With.
type Spec struct {
	name  string
	query string // the keys and values, each escaped, joined by '&'; "" when none
}

// ParseSpec parses spec text "name?key=value&...", spaces around the text
// and the name trimmed. It checks the syntax only: the name and keys are checked against
// the registry when the spec is built (New, SchemeOf), or by CheckSpec,
// which parses and checks in one step. A key given twice or a value that is
// not valid percent-encoding is a *SpecError wrapping ErrSpec.
func ParseSpec(text string) (Spec, error) { return parseSpec(text, nil) }

// parseSpec is ParseSpec; known, when not nil, checks each key as given
// (before unescaping), ahead of the other checks.
func parseSpec(text string, known func(key string) error) (Spec, error) {
	speccount.Add()
	name, query, _ := strings.Cut(strings.TrimSpace(text), "?")
	s := Spec{name: strings.TrimSpace(name)}
	if query == "" {
		return s, nil
	}
	seen := map[string]bool{}
	var b strings.Builder
	for kv := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if known != nil {
			if err := known(k); err != nil {
				return Spec{}, specError(text, k, v, err)
			}
		}
		dk, err := url.PathUnescape(k)
		if err != nil {
			return Spec{}, specError(text, k, v, fmt.Errorf("%w: %s: key %q is not valid percent-encoding", ErrSpec, name, k))
		}
		if seen[dk] {
			return Spec{}, specError(text, dk, v, fmt.Errorf("%w: %s: key %q given twice", ErrSpec, name, dk))
		}
		seen[dk] = true
		dv, err := url.PathUnescape(v)
		if err != nil {
			return Spec{}, specError(text, dk, v, fmt.Errorf("%w: %s: %s=%q is not valid percent-encoding", ErrSpec, name, dk, v))
		}
		appendParam(&b, dk, dv)
	}
	s.query = b.String()
	return s, nil
}

// MustParse is ParseSpec for specs known to be valid, such as constants in
// a program: it panics on an error.
func MustParse(text string) Spec {
	s, err := ParseSpec(text)
	if err != nil {
		panic(err)
	}
	return s
}

// Name returns the strategy's name, the text before '?'.
func (s Spec) Name() string { return s.name }

// String returns the spec's text, keys in order, escaped by the rule of
// Spec.
func (s Spec) String() string {
	if s.query == "" {
		return s.name
	}
	return s.name + "?" + s.query
}

// Get returns key's value, unescaped, and whether the spec gives key.
func (s Spec) Get(key string) (string, bool) {
	for k, v := range s.All() {
		if k == key {
			return v, true
		}
	}
	return "", false
}

// Keys returns the spec's keys in order.
func (s Spec) Keys() []string {
	var keys []string
	for k := range s.All() {
		keys = append(keys, k)
	}
	return keys
}

// All yields the spec's keys and their values, unescaped, in order.
func (s Spec) All() func(yield func(key, value string) bool) {
	return func(yield func(key, value string) bool) {
		if s.query == "" {
			return
		}
		for kv := range strings.SplitSeq(s.query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			k, _ = url.PathUnescape(k) // escaped by appendParam
			v, _ = url.PathUnescape(v)
			if !yield(k, v) {
				return
			}
		}
	}
}

// With returns s with key set to value: in place where s gives key, else
// appended after the other keys. s itself is unchanged.
func (s Spec) With(key, value string) Spec {
	var b strings.Builder
	set := false
	for k, v := range s.All() {
		if k == key {
			v, set = value, true
		}
		appendParam(&b, k, v)
	}
	if !set {
		appendParam(&b, key, value)
	}
	return Spec{name: s.name, query: b.String()}
}

// Without returns s without key; s itself is unchanged.
func (s Spec) Without(key string) Spec {
	var b strings.Builder
	for k, v := range s.All() {
		if k != key {
			appendParam(&b, k, v)
		}
	}
	return Spec{name: s.name, query: b.String()}
}

// appendParam appends key=value, escaped, to b, after an '&' when b is not
// empty.
func appendParam(b *strings.Builder, key, value string) {
	if b.Len() > 0 {
		b.WriteByte('&')
	}
	escape(b, key, true)
	b.WriteByte('=')
	escape(b, value, false)
}

// escape writes s to b with '%', '&', bytes outside printable ASCII and,
// in a key, '=' percent-escaped: the one escaping rule of Spec.
func escape(b *strings.Builder, s string, key bool) {
	const hex = "0123456789ABCDEF"
	for i := range len(s) {
		c := s[i]
		if c == '%' || c == '&' || c <= ' ' || c > '~' || key && c == '=' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
}

// A SpecError reports a spec refused for one of its keys, or for its
// strategy's name (Key empty, Value the name). Its message is Err's, which
// wraps ErrSpec, or idgen.ErrOutOfRange for a node value (worker,
// datacenter, ...) outside its layout field. Programs that read specs from
// files find the key at fault with errors.As, to name its line.
type SpecError struct {
	Spec  string // the spec text, cut to about 64 bytes (internal/echo.Cut)
	Key   string // the key at fault; "" when it is the strategy's name
	Value string // the value given, or the name when Key is ""
	Err   error  // wraps ErrSpec or idgen.ErrOutOfRange
}

func (e *SpecError) Error() string { return e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// specError returns a *SpecError about key of spec; err must wrap ErrSpec.
func specError(spec, key, value string, err error) *SpecError {
	return &SpecError{Spec: echo.Cut(spec), Key: key, Value: value, Err: err}
}

// keyError returns err as a *SpecError about key of p's spec, when it wraps
// ErrSpec and is not one already.
func (p *Params) keyError(key string, err error) error {
	if err == nil || !errors.Is(err, ErrSpec) {
		return err
	}
	if _, ok := errors.AsType[*SpecError](err); ok {
		return err
	}
	return specError(p.spec, key, p.String(key, ""), err)
}

// SplitList splits a comma-separated list of spec texts, as the CLI's
// -s (--spec) flags of bench and compare give it. A comma inside a spec's query, as
// in a layout ("snowflake?layout=time:41,worker:10,sequence:12"), stays in
// the spec: after a spec with a '?', a comma starts a new spec only when the
// text after it is blank or starts with a registered strategy's name (or a
// name isName accepts, when not nil). Pieces are returned as given, blanks
// included, for the caller to trim, drop or refuse.
func SplitList(list string, isName func(name string) bool) []string {
	var specs []string
	for seg := range strings.SplitSeq(list, ",") {
		if n := len(specs); n > 0 && strings.Contains(specs[n-1], "?") && !startsSpec(seg, isName) {
			specs[n-1] += "," + seg
			continue
		}
		specs = append(specs, seg)
	}
	return specs
}

// startsSpec reports whether seg is blank or starts with a strategy's name.
func startsSpec(seg string, isName func(string) bool) bool {
	seg = strings.TrimSpace(seg)
	if seg == "" {
		return true
	}
	name, _, _ := strings.Cut(seg, "?")
	if _, ok := registry[name]; ok {
		return true
	}
	return isName != nil && isName(name)
}
