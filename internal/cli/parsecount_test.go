package cli_test

import (
	"io"
	"testing"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/speccount"
)

// TestSpecParsedOnce: gen and serve parse -s once between its text and the
// generator, the worker source set on the parsed Spec (issue 28: it was
// parsed up to three times here). Not parallel: the count is the
// process's.
func TestSpecParsedOnce(t *testing.T) {
	const spec = "snowflake?preset=twitter&datacenter=1"
	before := speccount.N()
	if _, errOut, code := run("gen", "-s", spec, "--worker-source", "static:3"); code != 0 {
		t.Fatalf("gen -s %s --worker-source static:3 = exit %d: %s", spec, code, errOut)
	}
	if n := speccount.N() - before; n != 1 {
		t.Errorf("gen parsed %d spec texts; want 1", n)
	}
	before = speccount.N()
	gens, err := cli.LoadServeSpec(t.Context(), spec, "static:3")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		g.(io.Closer).Close()
	}
	if n := speccount.N() - before; n != 1 {
		t.Errorf("serve -s parsed %d spec texts; want 1", n)
	}
}
