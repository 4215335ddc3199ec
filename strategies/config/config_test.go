package config_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/speccount"
	_ "github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
	"github.com/idgenkit/idgen/strategies/config"
	_ "github.com/idgenkit/idgen/workerid"
)

const goodYAML = `# services' ID generators
default: orders
generators:
  orders: snowflake?preset=twitter&worker=7
  sessions: uuidv7
  events:
    strategy: sonyflake
    machine: 3
    bits_sequence: 8
`

const goodTOML = `default = "orders"

[generators]
orders = "snowflake?preset=twitter&worker=7"
sessions = "uuidv7"

[generators.events]
strategy = "sonyflake"
machine = 3
bits_sequence = 8
`

const goodJSON = `{
  "default": "orders",
  "generators": {
    "orders": "snowflake?preset=twitter&worker=7",
    "sessions": "uuidv7",
    "events": {"strategy": "sonyflake", "machine": 3, "bits_sequence": 8}
  }
}
`

func writeConfig(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name, file, text string
		lines            []int
	}{
		{name: "yaml", file: "idgen.yaml", text: goodYAML, lines: []int{4, 5, 6}},
		{name: "toml", file: "idgen.toml", text: goodTOML, lines: []int{4, 5, 7}},
		{name: "json", file: "idgen.json", text: goodJSON, lines: []int{4, 5, 6}},
	}
	want := []config.GeneratorSpec{
		{Name: "orders", Spec: strategies.MustParse("snowflake?preset=twitter&worker=7")},
		{Name: "sessions", Spec: strategies.MustParse("uuidv7")},
		{Name: "events", Spec: strategies.MustParse("sonyflake?bits_sequence=8&machine=3")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file, tc.text)
			c, err := config.Load(path, strategies.Options{})
			if err != nil {
				t.Fatalf("Load(%s) = %v", tc.file, err)
			}
			w := slices.Clone(want)
			for i := range w {
				w[i].Line = tc.lines[i]
			}
			if !slices.Equal(c.Generators, w) || c.Default != "orders" {
				t.Fatalf("Load(%s) = %+v default %q; want %+v default orders", tc.file, c.Generators, c.Default, w)
			}
			for _, name := range []string{"", "orders", "sessions", "events"} {
				g, err := c.New(context.Background(), name)
				if err != nil {
					t.Fatalf("New(%q) = %v", name, err)
				}
				wantScheme := map[string]string{"": "snowflake", "orders": "snowflake", "sessions": "uuidv7", "events": "sonyflake"}[name]
				if g.Scheme().Name != wantScheme {
					t.Fatalf("New(%q).Scheme() = %s; want %s", name, g.Scheme(), wantScheme)
				}
			}
			_, err = c.New(context.Background(), "payments")
			wantErr := `config file ` + path + `: no generator "payments"; valid: orders, sessions, events`
			if err == nil || err.Error() != wantErr {
				t.Fatalf("New(payments) = %v; want %s", err, wantErr)
			}
		})
	}
}

// TestLoadErrors checks that a bad config names the file, the line and the
// valid choices.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, file, text string
		msg              string // after "<path>:"
	}{
		{name: "yaml unknown key", file: "c.yaml", text: "generators:\n  events:\n    strategy: sonyflake\n    machine: 3\n    bits_seq: 8\n",
			msg: `5: generator "events": strategies: invalid spec: sonyflake: unknown key "bits_seq"; valid keys: bits_sequence, bits_machine, time_unit, start_time, machine, worker_source, rollback, max_wait, high_water, high_water_ahead, clock`},
		{name: "yaml bad value", file: "c.yaml", text: "generators:\n  events:\n    strategy: sonyflake\n    bits_sequence: 40\n",
			msg: `4: generator "events": strategies: invalid spec: sonyflake: bits_sequence="40": want an integer in [1, 30]`},
		{name: "yaml spec typo", file: "c.yaml", text: "generators:\n  a: uuidv7\n  b: snowflak?worker=1\n",
			msg: `3: generator "b": strategies: invalid spec: unknown strategy "snowflak"; valid: ` + strings.Join(strategies.Names(), ", ")},
		{name: "yaml no strategy", file: "c.yaml", text: "generators:\n  a:\n    worker: 1\n",
			msg: `2: generator "a": strategies: invalid spec: no strategy key; valid strategies: ` + strings.Join(strategies.Names(), ", ")},
		{name: "yaml top key", file: "c.yaml", text: "generators:\n  a: uuidv7\ndefalt: a\n",
			msg: `3: unknown key "defalt"; valid: default, generators, tls`},
		{name: "yaml default", file: "c.yaml", text: "default: b\ngenerators:\n  a: uuidv7\n",
			msg: `1: default "b" is not a generator; valid: a`},
		{name: "toml unknown key", file: "c.toml", text: "[generators.events]\nstrategy = \"sonyflake\"\nbits_seq = 8\n",
			msg: `3: generator "events": strategies: invalid spec: sonyflake: unknown key "bits_seq"; valid keys: bits_sequence, bits_machine, time_unit, start_time, machine, worker_source, rollback, max_wait, high_water, high_water_ahead, clock`},
		{name: "toml bad value", file: "c.toml", text: "[generators]\na = \"uuidv7\"\nb = \"flake128?rollback=retry\"\n",
			msg: `3: generator "b": strategies: invalid spec: flake128: rollback="retry": want one of fail, wait, wait-then-fail, hold, bump`},
		{name: "json unknown key", file: "c.json", text: "{\"generators\": {\n  \"x\": {\"strategy\": \"ksuid\",\n    \"monotone\": true}}}\n",
			msg: `3: generator "x": strategies: invalid spec: ksuid: unknown key "monotone"; valid keys: monotonic`},
		{name: "json syntax", file: "c.json", text: "{\"generators\": {\n  \"x\": \"ulid\",\n}}\n",
			msg: `3: invalid JSON: invalid character '}' looking for beginning of object key string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file, tc.text)
			_, err := config.Load(path, strategies.Options{})
			want := "config file " + path + ":" + tc.msg
			if err == nil || err.Error() != want || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("Load(%s) = %v; want %s (ErrSpec)", tc.text, err, want)
			}
		})
	}
}

// TestLoadDuplicates checks that a name or key given twice is refused in
// every format, at the second's line, naming the first's: YAML kept the
// first and JSON the last, so one intended file gave two configs.
func TestLoadDuplicates(t *testing.T) {
	tests := []struct {
		name, file, text string
		msg              string // after "<path>:"
	}{
		{name: "yaml generator", file: "c.yaml", text: "generators:\n  orders: snowflake?worker=1\n  other: uuidv7\n  orders: snowflake?worker=2\n",
			msg: `4: generator "orders" defined twice, first at line 2`},
		{name: "yaml generator as a table", file: "c.yaml", text: "generators:\n  orders: snowflake?worker=1\n  orders:\n    strategy: snowflake\n    worker: 2\n",
			msg: `3: generator "orders" defined twice, first at line 2`},
		{name: "yaml key of a generator", file: "c.yaml", text: "generators:\n  a:\n    strategy: snowflake\n    worker: 1\n    worker: 2\n",
			msg: `5: generator "a": key "worker" given twice, first at line 4`},
		{name: "yaml strategy key", file: "c.yaml", text: "generators:\n  a:\n    strategy: snowflake\n    strategy: uuidv7\n",
			msg: `4: generator "a": key "strategy" given twice, first at line 3`},
		{name: "yaml top key", file: "c.yaml", text: "default: a\ngenerators:\n  a: uuidv7\ndefault: b\n",
			msg: `4: key "default" given twice, first at line 1`},
		{name: "json generator", file: "c.json", text: "{\"generators\": {\n  \"orders\": \"snowflake?worker=1\",\n  \"orders\": \"snowflake?worker=2\"\n}}\n",
			msg: `3: generator "orders" defined twice, first at line 2`},
		{name: "json key of a generator", file: "c.json", text: "{\"generators\": {\n  \"a\": {\"strategy\": \"snowflake\",\n    \"worker\": 1,\n    \"worker\": 2}}}\n",
			msg: `4: generator "a": key "worker" given twice, first at line 3`},
		{name: "json top key", file: "c.json", text: "{\"generators\": {\"a\": \"uuidv7\"},\n \"generators\": {\"b\": \"uuidv7\"}}\n",
			msg: `2: key "generators" given twice, first at line 1`},
		{name: "toml generator", file: "c.toml", text: "[generators]\norders = \"snowflake?worker=1\"\norders = \"snowflake?worker=2\"\n",
			msg: `3: invalid TOML: Key 'generators.orders' has already been defined.`},
		{name: "toml key of a generator", file: "c.toml", text: "[generators.a]\nstrategy = \"snowflake\"\nworker = 1\nworker = 2\n",
			msg: `4: invalid TOML: Key 'generators.a.worker' has already been defined.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file, tc.text)
			c, err := config.Load(path, strategies.Options{})
			if want := "config file " + path + ":" + tc.msg; err == nil || err.Error() != want || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("Load(%q) = %+v, %v; want %s (ErrSpec)", tc.text, c, err, want)
			}
		})
	}
}

// TestLoadOverlap checks that two generators that would issue the same IDs
// (the same layout, epoch and node values, each with its own sequence) are
// refused, naming both; before, 59,000 of 400,000 IDs from two such
// generators of one serve were equal.
func TestLoadOverlap(t *testing.T) {
	space := "layout time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z, datacenter 0, worker 1"
	tests := []struct {
		name, file, text string
		workerID         string // Options.WorkerID
		msg              string // after "<path>:"; "" when it loads
	}{
		{name: "yaml, one worker ID", file: "c.yaml", text: "generators:\n  orders: snowflake?worker=1\n  sessions: uuidv7\n  other: snowflake?worker=1\n",
			msg: `4: generators "orders" (line 2) and "other" (line 4) issue the same IDs, each with its own sequence over ` + space +
				`; give each its own worker ID (or another node value), or, if their IDs never meet, a different keyspace=NAME`},
		{name: "json, written differently", file: "c.json", text: "{\"generators\": {\n  \"orders\": \"snowflake?worker=1\",\n  \"other\": {\"strategy\": \"snowflake\", \"worker_source\": \"static:1\", \"preset\": \"default\"}\n}}\n",
			msg: `3: generators "orders" (line 2) and "other" (line 3) issue the same IDs`},
		{name: "toml", file: "c.toml", text: "[generators]\norders = \"snowflake?worker=1\"\nother = \"snowflake?worker=1\"\n",
			msg: `3: generators "orders" (line 2) and "other" (line 3) issue the same IDs`},
		{name: "IDGEN_WORKER_ID over both", file: "c.yaml", text: "generators:\n  orders: snowflake?worker=1\n  other: snowflake?worker=2\n", workerID: "7",
			msg: `3: generators "orders" (line 2) and "other" (line 3) issue the same IDs, each with its own sequence over ` +
				strings.Replace(space, "worker 1", "worker 7", 1) + ` (IDGEN_WORKER_ID=7 overrides every worker key)`},
		{name: "other worker IDs", file: "c.yaml", text: "generators:\n  orders: snowflake?worker=1\n  other: snowflake?worker=2\n"},
		{name: "keyspaces named apart", file: "c.yaml", text: "generators:\n  orders: snowflake?worker=1&keyspace=orders\n  other:\n    strategy: snowflake\n    worker: 1\n    keyspace: other\n"},
		{name: "segments on one biz tag", file: "c.yaml", text: "generators:\n  a: segment?dsn=postgres://x@127.0.0.1:1/db&tag=orders\n  b: segment?dsn=postgres://x@127.0.0.1:1/db&tag=orders\n"},
		{name: "random IDs", file: "c.yaml", text: "generators:\n  a: uuidv7\n  b: uuidv7\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file, tc.text)
			c, err := config.Load(path, strategies.Options{WorkerID: tc.workerID})
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Load(%q) = %v; want it loaded", tc.text, err)
				}
				return
			}
			if want := "config file " + path + ":" + tc.msg; err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("Load(%q) = %+v, %v; want %s... (ErrSpec)", tc.text, c, err, want)
			}
		})
	}
}

func TestLoadFormat(t *testing.T) {
	path := writeConfig(t, "idgen.ini", "x")
	_, err := config.Load(path, strategies.Options{})
	want := `config file ` + path + `: unknown config format ".ini"; valid: .yaml, .yml, .toml, .json`
	if err == nil || err.Error() != want || !errors.Is(err, strategies.ErrSpec) {
		t.Fatalf("Load(idgen.ini) = %v; want %s", err, want)
	}
}

// TestLoadErrorLine checks that errors about a key raised when the
// generator is built (not by the spec's syntax) point at the key's line.
func TestLoadErrorLine(t *testing.T) {
	tests := []struct {
		name, text, msg string
	}{
		{"node out of range", "generators:\n  a:\n    strategy: snowflake\n    preset: twitter\n    worker: 40\n",
			`5: generator "a": idgen: value out of range: worker 40 outside [0, 31] (5 bits)`},
		{"preset beside layout", "generators:\n  a:\n    strategy: snowflake\n    layout: time:41,worker:10,sequence:12\n    preset: twitter\n",
			`5: generator "a": strategies: invalid spec: snowflake: give preset or layout, not both`},
		{"sonyflake bits", "generators:\n  a:\n    strategy: sonyflake\n    bits_machine: 16\n    bits_sequence: 16\n",
			`5: generator "a": strategies: invalid spec: sonyflake: bits_sequence + bits_machine = 32: want at most 31 (time needs 32 bits)`},
		{"unknown strategy", "generators:\n  a:\n    worker: 1\n    strategy: snowflak\n",
			`4: generator "a": strategies: invalid spec: unknown strategy "snowflak"; valid: ` + strings.Join(strategies.Names(), ", ")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, "c.yaml", tc.text)
			_, err := config.Load(path, strategies.Options{})
			if want := "config file " + path + ":" + tc.msg; err == nil || err.Error() != want {
				t.Fatalf("Load(%q) = %v; want %s", tc.text, err, want)
			}
		})
	}
}

// The tls table gives serve's TLS files in each format, relative paths
// resolved against the file's directory; an unknown key is refused at its
// line.
func TestLoadTLS(t *testing.T) {
	for name, text := range map[string]string{
		"c.yaml": "generators:\n  a: uuidv7\ntls:\n  cert: s.pem\n  key: /etc/k.pem\n  client_ca: ca.pem\n",
		"c.toml": "[generators]\na = \"uuidv7\"\n[tls]\ncert = \"s.pem\"\nkey = \"/etc/k.pem\"\nclient_ca = \"ca.pem\"\n",
		"c.json": `{"generators": {"a": "uuidv7"}, "tls": {"cert": "s.pem", "key": "/etc/k.pem", "client_ca": "ca.pem"}}`,
	} {
		path := writeConfig(t, name, text)
		c, err := config.Load(path, strategies.Options{})
		if err != nil {
			t.Fatalf("Load(%s) = %v", name, err)
		}
		dir := filepath.Dir(path)
		want := config.TLSFiles{Cert: filepath.Join(dir, "s.pem"), Key: "/etc/k.pem", ClientCA: filepath.Join(dir, "ca.pem")}
		if c.TLS != want {
			t.Errorf("Load(%s).TLS = %+v; want %+v", name, c.TLS, want)
		}
	}
	for name, tc := range map[string]struct{ text, want string }{
		"c.yaml": {"generators:\n  a: uuidv7\ntls:\n  cert: s.pem\n  ca: x\n", `:5: tls: key "ca": want one of cert, key, client_ca, each a file path`},
		"c.json": {"{\"generators\": {\"a\": \"uuidv7\"},\n \"tls\": \"s.pem\"}", `:2: tls must map cert, key, client_ca to file paths`},
	} {
		path := writeConfig(t, name, tc.text)
		if _, err := config.Load(path, strategies.Options{}); err == nil || err.Error() != "config file "+path+tc.want {
			t.Errorf("Load(%s) = %v; want config file %s", name, err, path+tc.want)
		}
	}
}

// TestNewAll: NewAll builds every generator by name, passes each worker
// source's warning on with the generator's name, and refuses a layout
// whose lifetime has ended, naming the generator.
func TestNewAll(t *testing.T) {
	path := writeConfig(t, "idgen.yaml", `generators:
  orders: snowflake?preset=twitter&worker=7
  hashed: snowflake?worker_source=hostname-hash%3Faccept_collisions%3Dtrue
  sessions: uuidv7
`)
	c, err := config.Load(path, strategies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	gens, err := c.NewAll(t.Context(), func(name, msg string) { warned = append(warned, name) })
	if err != nil {
		t.Fatalf("NewAll() = %v", err)
	}
	defer func() {
		for _, g := range gens {
			g.(io.Closer).Close()
		}
	}()
	if got := slices.Sorted(maps.Keys(gens)); !slices.Equal(got, []string{"hashed", "orders", "sessions"}) {
		t.Fatalf("NewAll() built %q; want hashed, orders, sessions", got)
	}
	if gens["sessions"].Scheme().Name != "uuidv7" || gens["orders"].Scheme().Name != "snowflake" {
		t.Fatalf("NewAll() schemes: orders %s, sessions %s; want snowflake, uuidv7", gens["orders"].Scheme(), gens["sessions"].Scheme())
	}
	if !slices.Equal(warned, []string{"hashed"}) {
		t.Fatalf("NewAll() warned for %q; want the hostname-hash generator, hashed, once", warned)
	}

	old := writeConfig(t, "old.yaml", "generators:\n  new: uuidv7\n  old: snowflake?preset=baidu\n")
	c, err = config.Load(old, strategies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.NewAll(t.Context(), nil)
	if !errors.Is(err, idgen.ErrLayoutExhausted) || !strings.HasPrefix(err.Error(), `generator "old": idgen: layout lifetime exhausted`) {
		t.Fatalf("NewAll(baidu) = %v; want ErrLayoutExhausted naming generator old", err)
	}
}

// TestParsedOnce: Load parses each generator's spec text once (a table's
// strategy name is its text), and New and NewAll build from the parsed
// Spec without parsing again (issue 28: it was about six times).
func TestParsedOnce(t *testing.T) {
	path := writeConfig(t, "idgen.yaml", goodYAML)
	before := speccount.N()
	c, err := config.Load(path, strategies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := speccount.N() - before; n != 3 {
		t.Fatalf("Load of 3 generators parsed %d spec texts; want 3", n)
	}
	before = speccount.N()
	g, err := c.New(t.Context(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	g.(io.Closer).Close()
	gens, err := c.NewAll(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		g.(io.Closer).Close()
	}
	if n := speccount.N() - before; n != 0 {
		t.Fatalf("New and NewAll parsed %d spec texts; want 0", n)
	}
}
