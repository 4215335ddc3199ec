package strategies_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// readmeLibrary is the README's "As a library" snippet, verbatim between
// the markers: Example_library keeps it compiling and true.
func readmeLibrary(ctx context.Context) error {
	// README: library
	layout, err := snowflake.Preset("twitter")
	if err != nil {
		return err
	}
	g, err := snowflake.New(ctx, snowflake.Config{
		Layout:   layout,
		Nodes:    map[string]int64{"datacenter": 1, "worker": 3},
		Rollback: snowflake.WaitThenFail, // the zero value
	})
	if err != nil {
		return err
	}
	defer g.Close()        // after Close, Next and NextN return idgen.ErrClosed
	id, err := g.Next(ctx) // idgen.ID: comparable, 32 bytes, no allocation
	if err != nil {
		return err
	}
	v, ok := id.Int64()       // 2123934260623585280, true: a bigint column takes it
	js, _ := json.Marshal(id) // "\"2123934260623585280\"": 64-bit IDs travel as JSON strings
	fmt.Println(ok, v > 0, string(js) == `"`+id.String()+`"`)
	fmt.Println(g.Scheme().Decompose(id)[2]) // the worker field: {worker 3 5}
	// README: end
	return nil
}

func Example_library() {
	if err := readmeLibrary(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// true true true
	// {worker 3 5}
}

// readmeTyped is the README's TypedID snippet, verbatim between the
// markers.
func readmeTyped(ctx context.Context) error {
	// README: typed
	type Order struct {
		ID     idgen.TypedID[snowflake.Twitter] `json:"id"`
		Parent idgen.TypedID[snowflake.Twitter] `json:"parent"`
	}
	g, err := strategies.NewText(ctx, "snowflake?preset=twitter&worker=7")
	if err != nil {
		return err
	}
	defer g.(io.Closer).Close() // every generator strategies.New returns is an io.Closer
	a, _ := g.Next(ctx)
	b, _ := g.Next(ctx)
	id, ok := idgen.Typed[snowflake.Twitter](a) // ok: a is of the twitter layout
	parent, _ := idgen.Typed[snowflake.Twitter](b)
	data, _ := json.Marshal([]Order{{ID: id, Parent: parent}})

	var orders []Order // zero values decode: no Scheme.Zero() to fill in first
	if err := json.Unmarshal(data, &orders); err != nil {
		return err
	}
	fmt.Println(ok, orders[0].ID == id, orders[0].ID.ID() == a) // true true true

	var untyped []idgen.ID // the untyped ID cannot tell the scheme: it refuses
	err = json.Unmarshal([]byte(`["`+a.String()+`"]`), &untyped)
	fmt.Println(errors.Is(err, idgen.ErrNoScheme)) // true: the error names TypedID and Scheme.Zero()
	// README: end
	return nil
}

func Example_typedIDs() {
	if err := readmeTyped(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// true true true
	// true
}

// TestREADMESnippets checks that the README's library snippets are the
// bodies above, which the examples compile and run.
func TestREADMESnippets(t *testing.T) {
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"library", "typed"} {
		_, rest, ok := strings.Cut(string(src), "\t// README: "+name+"\n")
		body, _, ok2 := strings.Cut(rest, "\t// README: end\n")
		if !ok || !ok2 {
			t.Fatalf("no %q snippet markers", name)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l, "\t"))
		}
		snippet := "```go\n" + strings.Join(lines, "\n") + "\n```"
		if !strings.Contains(string(readme), snippet) {
			t.Errorf("README.md lacks the %q snippet, verbatim:\n%s", name, snippet)
		}
	}
}
