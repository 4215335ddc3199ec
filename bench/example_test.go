package bench_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/idgenkit/idgen/bench"
)

// Run measures strategies one after the other; WriteTable prints what
// "idgen bench" prints. What a run measures (IDs issued, time, the longest
// text seen) differs from run to run, so this example prints the columns of
// its own run that do not, then a table of fixed figures.
func Example() {
	specs := bench.SplitSpecs([]string{"uuidv7,ulid"})
	rs, err := bench.Run(context.Background(), bench.Config{Specs: specs, Duration: 20 * time.Millisecond, Goroutines: 1})
	if err != nil {
		panic(err)
	}
	for _, r := range rs {
		fmt.Println(r.Spec, r.Scheme, r.Scheme.Size, r.Goroutines)
	}

	rs[0].IDs, rs[0].Elapsed, rs[0].TextLen = 6_824_010, 2*time.Second, 36
	rs[1].IDs, rs[1].Elapsed, rs[1].TextLen = 8_192_000, 2*time.Second, 26
	if err := bench.WriteTable(os.Stdout, rs); err != nil {
		panic(err)
	}
	// Output:
	// uuidv7 uuidv7 16 1
	// ulid ulid 16 1
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
