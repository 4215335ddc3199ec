// Package config reads the generators of a service from a YAML, TOML or
// JSON file: names and their strategy specs, each checked against the
// strategies registry, with errors that name the file and line.
package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/lazyre"
	"github.com/idgenkit/idgen/strategies"
)

// ErrSpec is strategies.ErrSpec: every bad config wraps it, but for a node
// value (worker, datacenter, ...) outside its layout field, whose error wraps
// idgen.ErrOutOfRange instead (see strategies.SpecError).
var ErrSpec = strategies.ErrSpec

// A Config names several generators, read by Load from a YAML, TOML or JSON
// file:
//
//	# idgen.yaml
//	default: orders
//	generators:
//	  orders: snowflake?preset=twitter&worker=7   # a spec
//	  sessions: uuidv7
//	  events:                                     # or a strategy and its keys
//	    strategy: sonyflake
//	    machine: 3
//	    bits_sequence: 8
//	tls:                                          # idgen serve's TLS (optional)
//	  cert: server.pem
//	  key: server-key.pem
//	  client_ca: clients-ca.pem                   # mutual TLS
//
// Every generator's IDs are unique among all the config's generators,
// unless a spec's keyspace key names a keyspace of its own (Load refuses
// two that would issue the same IDs).
//
// Switching a service to another scheme is then one line of config.
type Config struct {
	// Path is the file the config was read from.
	Path string
	// Options are the strategies.Options every generator is built with.
	Options strategies.Options
	// Default names the generator New builds for the name "". Empty means
	// the only generator when there is one.
	Default string
	// Generators in file order.
	Generators []GeneratorSpec
	// TLS are the files of the tls table: idgen serve's --tls-cert,
	// --tls-key and --client-ca. Relative paths are resolved against the
	// config file's directory.
	TLS TLSFiles
}

// TLSFiles are the PEM files of a config's tls table (keys cert, key,
// client_ca): a server's certificate and key, and the CA its clients'
// certificates must chain to for mutual TLS.
type TLSFiles struct {
	Cert, Key, ClientCA string
}

// tlsKeys are the keys of the tls table.
const tlsKeys = "cert, key, client_ca"

// set sets the field of key to value; false for an unknown key.
func (t *TLSFiles) set(key, value string) bool {
	switch key {
	case "cert":
		t.Cert = value
	case "key":
		t.Key = value
	case "client_ca":
		t.ClientCA = value
	default:
		return false
	}
	return true
}

// resolve makes relative paths relative to dir.
func (t *TLSFiles) resolve(dir string) {
	for _, p := range []*string{&t.Cert, &t.Key, &t.ClientCA} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// A GeneratorSpec is one named generator of a Config.
type GeneratorSpec struct {
	Name string
	Spec strategies.Spec
	Line int // where the file defines it, from 1
}

// Lookup returns the named generator's spec.
func (c *Config) Lookup(name string) (GeneratorSpec, bool) {
	i := slices.IndexFunc(c.Generators, func(g GeneratorSpec) bool { return g.Name == name })
	if i < 0 {
		return GeneratorSpec{}, false
	}
	return c.Generators[i], true
}

// Names returns the generators' names in file order.
func (c *Config) Names() []string {
	var names []string
	for _, g := range c.Generators {
		names = append(names, g.Name)
	}
	return names
}

// New builds the named generator; "" is the default one: Default, else the
// only generator. Errors begin "config file PATH", as Load's do. Several
// generators and no Default give an error that counts and lists them and
// says to add a default key; an unknown name, one that lists the names
// (both wrap ErrSpec); a build error names the line of the generator.
func (c *Config) New(ctx context.Context, name string) (idgen.Generator, error) {
	if name == "" {
		name = c.Default
		if name == "" && len(c.Generators) == 1 {
			name = c.Generators[0].Name
		}
		if name == "" {
			return nil, c.noDefault()
		}
	}
	g, ok := c.Lookup(name)
	if !ok {
		return nil, &fileError{c.Path, 0, fileErr(fmt.Sprintf("no generator %s; valid: %s", echo.Quote(name), c.names()))}
	}
	gen, err := c.Options.New(ctx, g.Spec)
	if err != nil {
		return nil, &fileError{c.Path, g.Line, fmt.Errorf("generator %q: %w", g.Name, err)}
	}
	return gen, nil
}

// names lists the generators' names, cut to about 64 bytes.
func (c *Config) names() string { return echo.Cut(strings.Join(c.Names(), ", ")) }

// noDefault is New's error for the name "" when Default is empty and the
// config has other than one generator: it counts them and says how to
// name the default in the file's format.
func (c *Config) noDefault() error {
	if len(c.Generators) == 0 {
		return &fileError{c.Path, 0, fileErr(noGenerators)}
	}
	example := "default: " + c.Generators[0].Name
	switch strings.ToLower(filepath.Ext(c.Path)) {
	case ".toml":
		example = fmt.Sprintf("default = %q", c.Generators[0].Name)
	case ".json":
		example = fmt.Sprintf(`"default": %q`, c.Generators[0].Name)
	}
	return &fileError{c.Path, 0, fileErr(fmt.Sprintf("%d generators (%s) and no default key; add one naming the generator to use when none is named, e.g. %s",
		len(c.Generators), c.names(), echo.Cut(example)))}
}

// noGenerators is the error of a file that names no generator.
const noGenerators = `no generators; want a "generators" table naming at least one`

// Formats returns the file extensions Load reads, in a new slice.
func Formats() []string { return slices.Clone(formats) }

var formats = []string{".yaml", ".yml", ".toml", ".json"}

// NewAll builds every generator of c, by name, for a service that serves
// them all (idgen serve --config), and checks that each is inside its
// layout's lifetime (CheckLifetime). warn, when not nil, receives each
// generator's worker-source warning (a hostname hash that can collide)
// with the generator's name, once, as it is built; nil means
// c.Options.Warn. Errors are New's (naming the file and line) or
// CheckLifetime's, prefixed `generator "NAME": `; on an error every
// generator built is closed.
func (c *Config) NewAll(ctx context.Context, warn func(name, msg string)) (map[string]idgen.Generator, error) {
	gens := make(map[string]idgen.Generator, len(c.Generators))
	for _, g := range c.Generators {
		built := *c
		if warn != nil {
			built.Options.Warn = func(msg string) { warn(g.Name, msg) }
		}
		gen, err := built.New(ctx, g.Name)
		if err != nil {
			closeAll(gens)
			return nil, err
		}
		gens[g.Name] = gen
	}
	if name, err := CheckLifetime(ctx, gens); err != nil {
		closeAll(gens)
		return nil, fmt.Errorf("generator %q: %w", name, err)
	}
	return gens, nil
}

// ReadyTimeout bounds each generator's readiness answer in CheckLifetime.
const ReadyTimeout = time.Second

// CheckLifetime asks every generator that can tell (idgen.ReadyOf, which
// looks through wrappers such as encoding=) whether the
// clock is inside its layout's lifetime, issuing nothing, each within
// ReadyTimeout. It returns the name of the first, in name order, whose
// layout has ended (idgen.ErrLayoutExhausted) or whose epoch is ahead
// (idgen.ErrBeforeEpoch), and that error; "" and nil when there is none.
// Other readiness errors (a lease, a store) are not its concern: a
// service's readiness probe reports them.
func CheckLifetime(ctx context.Context, gens map[string]idgen.Generator) (string, error) {
	for _, name := range slices.Sorted(maps.Keys(gens)) {
		r, ok := idgen.ReadyOf(gens[name])
		if !ok {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
		err := r.Ready(rctx)
		cancel()
		if errors.Is(err, idgen.ErrLayoutExhausted) || errors.Is(err, idgen.ErrBeforeEpoch) {
			return name, err
		}
	}
	return "", nil
}

// closeAll closes the generators that hold resources.
func closeAll(gens map[string]idgen.Generator) {
	for _, g := range gens {
		if c, ok := g.(io.Closer); ok {
			c.Close()
		}
	}
}

// Load reads a config file, chosen by extension (.yaml, .yml, .toml, .json),
// and checks every generator: its strategy, keys and values, by building
// and closing each one that needs no external store (a store-backed one is
// checked without contacting the store), with opts. Errors begin "config
// file PATH:LINE: " (PATH: alone where no line applies) and list the valid
// choices. A file that cannot be read wraps the read error; a syntax
// error, one the format's parser gives with its line, and a bad key or
// shape wrap ErrSpec, as does a bad spec, or idgen.ErrOutOfRange for a node
// value outside its field. YAML aliases (*name) are refused: the file's
// three top-level keys leave anchors nowhere to live but on a generator,
// and a merge key (<<) would bypass the refusal of a key given twice. A
// generator with an empty name is refused. The line is
// that of the key a *strategies.SpecError names, where the file gives the
// generator's keys one by one, else the generator's. A generator name or a
// key given twice is refused in every format, at the second's line, naming
// the first's (YAML decoders keep the first and JSON's the last). Two
// generators that would issue the same IDs (strategies.Options.Keyspace:
// the same layout, epoch and node values, each with its own sequence) are
// refused, naming both, unless the keyspace key names them apart; two
// segment generators on one biz tag are not (the store hands each its own
// IDs).
func Load(path string, opts strategies.Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err // the path is in the label
		}
		return nil, &fileError{path, 0, fmt.Errorf("cannot read it: %w", err)}
	}
	var raw *rawConfig
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml":
		raw, err = readYAML(data)
	case ".toml":
		raw, err = readTOML(data)
	case ".json":
		raw, err = readJSON(data)
	default:
		return nil, &fileError{path, 0, fileErr(fmt.Sprintf("unknown config format %s; valid: %s", echo.Quote(ext), strings.Join(formats, ", ")))}
	}
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, &fileError{path, le.line, le.err}
		}
		return nil, &fileError{path, 0, err}
	}
	c := &Config{Path: path, Options: opts, Default: raw.def, TLS: raw.tls}
	c.TLS.resolve(filepath.Dir(path))
	for _, g := range raw.gens {
		if g.name == "" {
			return nil, &fileError{path, g.line, fileErr("a generator has an empty name; give it one, as in orders: SPEC")}
		}
		spec, err := g.toSpec()
		if err == nil {
			err = check(opts, spec)
		}
		if err != nil {
			return nil, &fileError{path, g.lineOf(err), fmt.Errorf("generator %q: %w", g.name, err)}
		}
		c.Generators = append(c.Generators, GeneratorSpec{Name: g.name, Spec: spec, Line: g.line})
	}
	if len(c.Generators) == 0 {
		return nil, &fileError{path, 0, fileErr(noGenerators)}
	}
	if err := c.checkKeyspaces(); err != nil {
		return nil, err
	}
	if c.Default != "" {
		if _, ok := c.Lookup(c.Default); !ok {
			return nil, &fileError{path, raw.defLine, fileErr(fmt.Sprintf("default %s is not a generator; valid: %s", echo.Quote(c.Default), c.names()))}
		}
	}
	return c, nil
}

// checkKeyspaces refuses two generators that would issue the same IDs
// (strategies.Options.Keyspace): each counts its own sequence over the
// same layout, epoch and node values, in one keyspace.
func (c *Config) checkKeyspaces() error {
	first := map[string]GeneratorSpec{}
	for _, g := range c.Generators {
		space, err := c.Options.Keyspace(g.Spec)
		if err != nil {
			return &fileError{c.Path, g.Line, fmt.Errorf("generator %q: %w", g.Name, err)}
		}
		if space == "" {
			continue
		}
		if f, ok := first[space]; ok {
			override := ""
			if w := c.Options.WorkerID; w != "" {
				override = fmt.Sprintf(" (%s=%s overrides every worker key)", strategies.EnvWorkerID, w)
			}
			return &fileError{c.Path, g.Line, fileErr(fmt.Sprintf("generators %q (line %d) and %q (line %d) issue the same IDs, each with its own sequence over %s%s; "+
				"give each its own worker ID (or another node value), or, if their IDs never meet, a different %s=NAME",
				f.Name, f.Line, g.Name, g.Line, space, override, strategies.KeyspaceKey))}
		}
		first[space] = g
	}
	return nil
}

// check validates spec as fully as can be done without a store.
func check(opts strategies.Options, spec strategies.Spec) error {
	s, _, err := opts.Resolve(spec)
	if err != nil {
		return err
	}
	if _, err := opts.SchemeOf(spec); err != nil {
		return err
	}
	if s.External {
		return nil
	}
	g, err := opts.New(context.Background(), spec)
	if err != nil {
		return err
	}
	if c, ok := g.(io.Closer); ok {
		c.Close()
	}
	return nil
}

type rawConfig struct {
	def     string
	defLine int
	gens    []rawGen
	tls     TLSFiles
}

type rawKV struct {
	key, value string
	line       int
}

// rawGen is one generator as the file gives it: a spec, or a strategy and
// its keys.
type rawGen struct {
	name     string
	line     int
	spec     string
	strategy string
	keys     []rawKV
	stratAt  int // line of the strategy key
	isTable  bool
}

func (g rawGen) toSpec() (strategies.Spec, error) {
	if !g.isTable {
		return strategies.CheckSpec(g.spec) // the one parse of the text
	}
	if g.strategy == "" {
		return strategies.Spec{}, fmt.Errorf("%w: no strategy key; valid strategies: %s", ErrSpec, strings.Join(strategies.Names(), ", "))
	}
	if _, ok := strategies.Lookup(g.strategy); !ok {
		return strategies.Spec{}, &strategies.SpecError{Spec: g.strategy, Value: g.strategy,
			Err: fmt.Errorf("%w: unknown strategy %q; valid: %s", ErrSpec, g.strategy, strings.Join(strategies.Names(), ", "))}
	}
	spec, err := strategies.ParseSpec(g.strategy) // a registered name: no '?'
	if err != nil {
		return strategies.Spec{}, err
	}
	// Keys in name order: a spec's meaning does not depend on it, and JSON
	// objects and inline tables give no order of their own.
	keys := slices.Clone(g.keys)
	slices.SortStableFunc(keys, func(a, b rawKV) int { return strings.Compare(a.key, b.key) })
	for _, kv := range keys {
		spec = spec.With(kv.key, kv.value)
	}
	return spec, nil
}

// lineOf returns the line of the key a *strategies.SpecError in err names
// (the strategy key for its name), else the generator's.
func (g rawGen) lineOf(err error) int {
	se, ok := errors.AsType[*strategies.SpecError](err)
	switch {
	case !ok:
	case se.Key == "" && g.stratAt > 0:
		return g.stratAt
	case se.Key != "":
		for _, kv := range g.keys {
			if kv.key == se.Key {
				return kv.line
			}
		}
	}
	return g.line
}

// A fileError is an error of a config file: its text begins "config file
// PATH:LINE: ", or "config file PATH: " with line 0, and it wraps err.
type fileError struct {
	path string
	line int
	err  error
}

func (e *fileError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("config file %s:%d: %v", e.path, e.line, e.err)
	}
	return fmt.Sprintf("config file %s: %v", e.path, e.err)
}

func (e *fileError) Unwrap() error { return e.err }

// A fileErr is a fault of the file itself (its syntax, keys or shape), not
// of a generator's spec: it matches ErrSpec with errors.Is, and its text
// is its own, without ErrSpec's "invalid spec".
type fileErr string

func (e fileErr) Error() string { return string(e) }
func (e fileErr) Unwrap() error { return ErrSpec }

// lineError is an error at a line of the file, before Load adds the path.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

func errAt(line int, format string, args ...any) error {
	return &lineError{line, fileErr(fmt.Sprintf(format, args...))}
}

const topKeys = "default, generators, tls"

// duplicateKey is the error about key given twice at line, first at
// first, in the mapping at path: nil for the top level, ["generators"]
// for the generators, ["generators", name] for a generator's keys.
func duplicateKey(path []string, key string, first, line int) error {
	switch {
	case len(path) == 1 && path[0] == "generators":
		return errAt(line, "generator %q defined twice, first at line %d", key, first)
	case len(path) == 2 && path[0] == "generators":
		return errAt(line, "generator %q: key %q given twice, first at line %d", path[1], key, first)
	}
	return errAt(line, "key %q given twice, first at line %d", strings.Join(append(slices.Clone(path), key), "."), first)
}

// keyLines records the line of each key of one mapping, to refuse a key
// given twice: YAML decoders keep the first and JSON's the last, silently.
type keyLines map[string]int

// add records key at line; a key seen before is duplicateKey's error.
func (s keyLines) add(path []string, key string, line int) error {
	if first, ok := s[key]; ok {
		return duplicateKey(path, key, first, line)
	}
	s[key] = line
	return nil
}

func readYAML(data []byte) (*rawConfig, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3's syntax errors read "yaml: line N: what".
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine().FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &lineError{line, fileErr("invalid YAML: " + m[2])}
		}
		return nil, fileErr("invalid YAML: " + msg)
	}
	if len(doc.Content) == 0 {
		return &rawConfig{}, nil
	}
	if a := findAlias(&doc); a != nil {
		return nil, errAt(a.Line, "YAML alias *%s: aliases and anchors are not supported; write the value out", echo.Cut(a.Value))
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errAt(root.Line, "the top level must be a mapping with keys %s", topKeys)
	}
	raw := &rawConfig{}
	top := keyLines{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := top.add(nil, k.Value, k.Line); err != nil {
			return nil, err
		}
		switch k.Value {
		case "default":
			if v.Kind != yaml.ScalarNode {
				return nil, errAt(v.Line, "default must be a generator's name")
			}
			raw.def, raw.defLine = v.Value, v.Line
		case "generators":
			if v.Kind != yaml.MappingNode {
				return nil, errAt(v.Line, "generators must map names to specs")
			}
			names := keyLines{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				if err := names.add([]string{"generators"}, v.Content[j].Value, v.Content[j].Line); err != nil {
					return nil, err
				}
				g, err := yamlGen(v.Content[j], v.Content[j+1])
				if err != nil {
					return nil, err
				}
				raw.gens = append(raw.gens, g)
			}
		case "tls":
			if v.Kind != yaml.MappingNode {
				return nil, errAt(v.Line, "tls must map %s to file paths", tlsKeys)
			}
			keys := keyLines{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				if err := keys.add([]string{"tls"}, kk.Value, kk.Line); err != nil {
					return nil, err
				}
				if vv.Kind != yaml.ScalarNode || !raw.tls.set(kk.Value, vv.Value) {
					return nil, errAt(kk.Line, "tls: key %q: want one of %s, each a file path", kk.Value, tlsKeys)
				}
			}
		default:
			return nil, errAt(k.Line, "unknown key %q; valid: %s", k.Value, topKeys)
		}
	}
	return raw, nil
}

// yamlLine finds the line in a yaml.v3 syntax error.
var yamlLine = lazyre.MustCompile(`^line (\d+): (.*)$`)

// findAlias returns the first alias node (*name) under n, nil when none.
// It does not follow aliases, so its work is the document's size.
func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

func yamlGen(k, v *yaml.Node) (rawGen, error) {
	g := rawGen{name: k.Value, line: k.Line}
	switch v.Kind {
	case yaml.ScalarNode:
		g.spec = v.Value
		return g, nil
	case yaml.MappingNode:
		g.isTable = true
		keys := keyLines{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			kk, vv := v.Content[i], v.Content[i+1]
			if err := keys.add([]string{"generators", g.name}, kk.Value, kk.Line); err != nil {
				return g, err
			}
			if vv.Kind != yaml.ScalarNode {
				return g, errAt(vv.Line, "generator %q: %s must be a single value", g.name, kk.Value)
			}
			if kk.Value == "strategy" {
				g.strategy, g.stratAt = vv.Value, kk.Line
				continue
			}
			g.keys = append(g.keys, rawKV{kk.Value, vv.Value, kk.Line})
		}
		return g, nil
	}
	return g, errAt(v.Line, "generator %q: want a spec string or a mapping with a strategy key", g.name)
}

// fromAny reads generic decoded data (TOML, JSON) with the lines found by
// lines, keyed by dotted path.
func fromAny(m map[string]any, lines map[string]int) (*rawConfig, error) {
	raw := &rawConfig{}
	for k, v := range m {
		switch k {
		case "default":
			s, ok := v.(string)
			if !ok {
				return nil, errAt(lines[k], "default must be a generator's name")
			}
			raw.def, raw.defLine = s, lines[k]
		case "generators":
			gm, ok := v.(map[string]any)
			if !ok {
				return nil, errAt(lines[k], "generators must map names to specs")
			}
			for name, gv := range gm {
				path := "generators." + name
				g := rawGen{name: name, line: lines[path]}
				switch x := gv.(type) {
				case string:
					g.spec = x
				case map[string]any:
					g.isTable = true
					for kk, vv := range x {
						s, ok := scalar(vv)
						if !ok {
							return nil, errAt(lines[path+"."+kk], "generator %q: %s must be a single value", name, kk)
						}
						if kk == "strategy" {
							g.strategy, g.stratAt = s, lines[path+"."+kk]
							continue
						}
						g.keys = append(g.keys, rawKV{kk, s, lines[path+"."+kk]})
					}
					slices.SortFunc(g.keys, func(a, b rawKV) int { return a.line - b.line })
				default:
					return nil, errAt(g.line, "generator %q: want a spec string or a table with a strategy key", name)
				}
				raw.gens = append(raw.gens, g)
			}
		case "tls":
			tm, ok := v.(map[string]any)
			if !ok {
				return nil, errAt(lines[k], "tls must map %s to file paths", tlsKeys)
			}
			for kk, vv := range tm {
				s, ok := vv.(string)
				if !ok || !raw.tls.set(kk, s) {
					return nil, errAt(lines["tls."+kk], "tls: key %q: want one of %s, each a file path", kk, tlsKeys)
				}
			}
		default:
			return nil, errAt(lines[k], "unknown key %q; valid: %s", k, topKeys)
		}
	}
	slices.SortFunc(raw.gens, func(a, b rawGen) int { return a.line - b.line })
	return raw, nil
}

func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

func readTOML(data []byte) (*rawConfig, error) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &lineError{pe.Position.Line, fileErr("invalid TOML: " + pe.Message)}
		}
		return nil, fileErr("invalid TOML: " + err.Error())
	}
	return fromAny(m, tomlLines(data))
}

var (
	tomlHeader = lazyre.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]`)
	tomlKey    = lazyre.MustCompile(`^\s*("[^"]*"|[A-Za-z0-9_-]+)\s*=`)
	tomlInline = lazyre.MustCompile(`("[^"]*"|[A-Za-z0-9_-]+)\s*=`)
)

// tomlLines finds the line of each table header and key, by dotted path.
// It reads the common forms ([a.b] headers, key = value, one-line inline
// tables); anything else falls back to the enclosing table's line.
func tomlLines(data []byte) map[string]int {
	lines := map[string]int{}
	table := ""
	for i, l := range strings.Split(string(data), "\n") {
		n := i + 1
		if m := tomlHeader().FindStringSubmatch(l); m != nil {
			var parts []string
			for p := range strings.SplitSeq(m[1], ".") {
				parts = append(parts, strings.Trim(strings.TrimSpace(p), `"`))
			}
			table = strings.Join(parts, ".")
			for j := range parts {
				if _, ok := lines[strings.Join(parts[:j+1], ".")]; !ok {
					lines[strings.Join(parts[:j+1], ".")] = n
				}
			}
			continue
		}
		m := tomlKey().FindStringSubmatchIndex(l)
		if m == nil {
			continue
		}
		key := strings.Trim(l[m[2]:m[3]], `"`)
		path := key
		if table != "" {
			path = table + "." + key
		}
		lines[path] = n
		if rest := l[m[1]:]; strings.Contains(rest, "{") {
			for _, im := range tomlInline().FindAllStringSubmatch(rest, -1) {
				lines[path+"."+strings.Trim(im[1], `"`)] = n
			}
		}
	}
	return lines
}

func readJSON(data []byte) (*rawConfig, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &lineError{lineAt(data, se.Offset), fileErr("invalid JSON: " + err.Error())}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, errAt(lineAt(data, te.Offset), "the top level must be an object with keys %s", topKeys)
		}
		return nil, fileErr("invalid JSON: " + err.Error())
	}
	lines, err := jsonLines(data)
	if err != nil {
		return nil, err
	}
	return fromAny(m, lines)
}

func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// jsonLines finds the line of each object key, by dotted path, and
// refuses a key an object gives twice (duplicateKey's error), which
// encoding/json would let the last one win.
func jsonLines(data []byte) (map[string]int, error) {
	lines := map[string]int{}
	var dup error
	d := json.NewDecoder(bytes.NewReader(data))
	var walk func(path []string) bool
	walk = func(path []string) bool {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := keyLines{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return false
				}
				key := fmt.Sprint(k)
				line := lineAt(data, d.InputOffset())
				if err := seen.add(path, key, line); err != nil && dup == nil {
					dup = err
				}
				p := append(slices.Clone(path), key)
				lines[strings.Join(p, ".")] = line
				if !walk(p) {
					return false
				}
			}
			_, err = d.Token()
			return err == nil
		case json.Delim('['):
			for d.More() {
				if !walk(path) {
					return false
				}
			}
			_, err = d.Token()
			return err == nil
		}
		return true
	}
	walk(nil)
	return lines, dup
}
