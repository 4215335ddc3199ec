package bench_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/idgenkit/idgen/bench"
)

// Run measures strategies one after the other; WriteTable prints what
// "idgen bench" prints. Throughput differs from run to run, so this example
// prints the fixed columns of its own run, then a table of fixed figures.
func Example() {
	specs := bench.SplitSpecs([]string{"uuidv7,ulid"})
	rs, err := bench.Run(context.Background(), bench.Config{Specs: specs, Duration: 20 * time.Millisecond, Goroutines: 1})
	if err != nil {
		panic(err)
	}
	for _, r := range rs {
		fmt.Println(r.Spec, r.Scheme, r.TextLen, r.Goroutines, r.IDs > 0)
	}

	rs[0].IDs, rs[0].Elapsed = 6_824_010, 2*time.Second
	rs[1].IDs, rs[1].Elapsed = 8_192_000, 2*time.Second
	if err := bench.WriteTable(os.Stdout, rs); err != nil {
		panic(err)
	}
	// Output:
	// uuidv7 uuidv7 36 1 true
	// ulid ulid 26 1 true
	// strategy  IDs/s      ns/ID  bytes  time-ordered  text  column
	// uuidv7    3,412,005  293.1  16     yes           36    uuid
	// ulid      4,096,000  244.1  16     yes           26    uuid
}

// SplitSpecs reads the -s flag: comma-separated specs, where a comma inside
// a spec's layout is kept.
func ExampleSplitSpecs() {
	for _, s := range bench.SplitSpecs([]string{"uuidv7, ulid,,xid", "snowflake?layout=time:41,worker:10,sequence:12"}) {
		fmt.Println(s)
	}
	// Output:
	// uuidv7
	// ulid
	// xid
	// snowflake?layout=time:41,worker:10,sequence:12
}
