package config_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
	"github.com/idgenkit/idgen/strategies/config"
)

// writeFile writes text to a file name in a new temporary directory, which
// the returned function removes.
func writeFile(name, text string) (path string, remove func()) {
	dir, err := os.MkdirTemp("", "idgen-config")
	if err != nil {
		panic(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		panic(err)
	}
	return path, func() { os.RemoveAll(dir) }
}

// A service names its generators in one file and builds them by name.
func Example() {
	path, remove := writeFile("idgen.yaml", `default: orders
generators:
  orders: snowflake?preset=twitter&datacenter=2&worker=7
  sessions: uuidv7
  events:
    strategy: sonyflake
    machine: 3
`)
	defer remove()

	cfg, err := config.Load(path, strategies.Options{})
	if err != nil {
		panic(err)
	}
	for _, name := range cfg.Names() {
		gs, _ := cfg.Lookup(name)
		fmt.Printf("%s (line %d): %s\n", name, gs.Line, gs.Spec)
	}
	g, err := cfg.New(context.Background(), "") // the default: orders
	if err != nil {
		panic(err)
	}
	if c, ok := g.(io.Closer); ok {
		defer c.Close()
	}
	id, err := g.Next(context.Background())
	if err != nil {
		panic(err)
	}
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name != "time" && f.Name != "sequence" { // these depend on the clock
			fmt.Printf("%s=%d ", f.Name, f.Value)
		}
	}
	fmt.Println(id.Scheme())
	// Output:
	// orders (line 3): snowflake?preset=twitter&datacenter=2&worker=7
	// sessions (line 4): uuidv7
	// events (line 5): sonyflake?machine=3
	// datacenter=2 worker=7 snowflake
}

// A bad generator is reported with the file and line of the key at fault, and
// the range allowed; a node value outside its field wraps idgen.ErrOutOfRange.
func ExampleLoad_error() {
	path, remove := writeFile("idgen.toml", `[generators.orders]
strategy = "snowflake"
preset = "twitter"
worker = 40
`)
	defer remove()

	_, err := config.Load(path, strategies.Options{})
	fmt.Println(strings.Replace(err.Error(), filepath.Dir(path)+string(filepath.Separator), "", 1))
	if se, ok := errors.AsType[*strategies.SpecError](err); ok {
		fmt.Printf("key %s, value %s, out of range: %v\n", se.Key, se.Value, errors.Is(err, idgen.ErrOutOfRange))
	}
	// Output:
	// config file idgen.toml:4: generator "orders": idgen: value out of range: worker 40 outside [0, 31] (5 bits)
	// key worker, value 40, out of range: true
}
