package config_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/strategies"
	"github.com/idgenkit/idgen/strategies/config"
)

// TestLoadFileErrors checks that a fault of the file itself (unreadable,
// its syntax, an alias, an empty generator name) is labelled "config file
// PATH:LINE", not "strategies: invalid spec" (before: "strategies: reading
// config: open PATH: ..." for a missing file, "PATH: strategies: invalid
// spec: yaml: line 2: ..." for a syntax error, and an alias refused as "want
// a spec string or a mapping").
func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, file, text string
		msg              string // after "config file <path>"
	}{
		{name: "yaml syntax", file: "c.yaml", text: "generators:\n  a: uuidv7\n  b: [oops\n",
			msg: `:2: invalid YAML: did not find expected ',' or ']'`}, // the line yaml.v3 gives
		{name: "toml syntax", file: "c.toml", text: "[generators\na = \"uuidv7\"\n",
			msg: `:2: invalid TOML: expected '.' or ']' to end table name, but got '\n' instead`},
		{name: "yaml alias of a spec", file: "c.yaml", text: "generators:\n  a: &spec uuidv7\n  b: *spec\n",
			msg: `:3: YAML alias *spec: aliases and anchors are not supported; write the value out`},
		{name: "yaml alias of a generator", file: "c.yaml", text: "generators:\n  a: &gen\n    strategy: snowflake\n    worker: 1\n  b: *gen\n",
			msg: `:5: YAML alias *gen: aliases and anchors are not supported; write the value out`},
		{name: "yaml merge key", file: "c.yaml", text: "generators:\n  a: &gen\n    strategy: snowflake\n    worker: 1\n  b:\n    <<: *gen\n    worker: 2\n",
			msg: `:6: YAML alias *gen: aliases and anchors are not supported; write the value out`},
		{name: "yaml empty name", file: "c.yaml", text: "generators:\n  \"\": uuidv7\n",
			msg: `:2: a generator has an empty name; give it one, as in orders: SPEC`},
		{name: "json empty name", file: "c.json", text: "{\"default\": \"a\", \"generators\": {\n  \"a\": \"uuidv7\",\n  \"\": \"ulid\"}}\n",
			msg: `:3: a generator has an empty name; give it one, as in orders: SPEC`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file, tc.text)
			c, err := config.Load(path, strategies.Options{})
			if want := "config file " + path + tc.msg; err == nil || err.Error() != want || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("Load(%q) = %+v, %v; want %s (ErrSpec)", tc.text, c, err, want)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "none.yaml")
	_, err := config.Load(path, strategies.Options{})
	if want := "config file " + path + ": cannot read it: no such file or directory"; err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) = %v; want %s (fs.ErrNotExist)", err, want)
	}
}

// TestNewNoDefault checks that New("") of a config with several generators
// and no default key counts and names them and shows the key to add in the
// file's format (before: "strategies: invalid spec: PATH names no default
// generator; name one of a, b").
func TestNewNoDefault(t *testing.T) {
	for file, tc := range map[string]struct{ text, example string }{
		"c.yaml": {"generators:\n  a: uuidv7\n  b: ulid\n", "default: a"},
		"c.toml": {"[generators]\na = \"uuidv7\"\nb = \"ulid\"\n", `default = "a"`},
		"c.json": {"{\"generators\": {\n  \"a\": \"uuidv7\",\n  \"b\": \"ulid\"}}\n", `"default": "a"`},
	} {
		path := writeConfig(t, file, tc.text)
		c, err := config.Load(path, strategies.Options{})
		if err != nil {
			t.Fatalf("Load(%s) = %v", file, err)
		}
		_, err = c.New(context.Background(), "")
		want := "config file " + path + ": 2 generators (a, b) and no default key; add one naming the generator to use when none is named, e.g. " + tc.example
		if err == nil || err.Error() != want || !errors.Is(err, strategies.ErrSpec) {
			t.Errorf("New(\"\") of %s = %v; want %s (ErrSpec)", file, err, want)
		}
	}
	// A config built by hand with no generators says so.
	c := &config.Config{Path: "x.yaml"}
	if _, err := c.New(context.Background(), ""); err == nil || !strings.HasSuffix(err.Error(), `: no generators; want a "generators" table naming at least one`) {
		t.Errorf("New(\"\") of no generators = %v; want no generators", err)
	}
}
