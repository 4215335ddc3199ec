package idgen_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// localCounter is a Generator of the plain int64 IDs 1, 2, 3, ...: unique in one
// process only, enough to show the interface.
type localCounter struct{ n atomic.Uint64 }

func (c *localCounter) Next(context.Context) (idgen.ID, error) {
	return idgen.Int64Scheme().FromUint64(c.n.Add(1)), nil
}

func (c *localCounter) Scheme() *idgen.Scheme { return idgen.Int64Scheme() }

// Every strategy is a Generator of IDs of one Scheme. NextN fills a batch in
// one step from a Batcher, and by calling Next from any other Generator.
func Example() {
	var g idgen.Generator = &localCounter{}
	ids := make([]idgen.ID, 3)
	n, err := idgen.NextN(context.Background(), g, ids)
	fmt.Println(n, err)
	js, _ := json.Marshal(ids)
	v, _ := ids[2].Value()
	fmt.Println(string(js), ids[0].Compare(ids[1]), v, g.Scheme().Column)
	// Output:
	// 3 <nil>
	// ["1","2","3"] -1 3 bigint
}

// An *ID is a flag.Value: the value it starts from fixes the scheme the
// flag parses.
func ExampleID_Set() {
	layout, _ := snowflake.Preset("twitter")
	scheme, _ := snowflake.SchemeOf(layout)
	fs := flag.NewFlagSet("backfill", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	after := scheme.Zero() // no default: 0 of the twitter scheme
	fs.Var(&after, "after", "resume after this `ID`")

	err := fs.Parse([]string{"-after", "2061404137190924288"})
	fmt.Println(err, after, after.Time().Format(time.RFC3339))
	err = fs.Parse([]string{"-after", "2061404137190924288x"})
	fmt.Println(err)
	// Output:
	// <nil> 2061404137190924288 2026-06-01T11:07:00Z
	// invalid value "2061404137190924288x" for flag -after: idgen: invalid ID syntax: "2061404137190924288x" is not a decimal ID (digits 0-9 only)
}
