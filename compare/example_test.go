package compare_test

import (
	"fmt"

	"github.com/idgenkit/idgen/compare"
)

// SplitSpecs splits the -s (--spec) list, leaving a comma inside a
// spec's layout in the spec.
func ExampleSplitSpecs() {
	for _, s := range compare.SplitSpecs("snowflake?layout=time:41,worker:10,sequence:12,uuidv7,bigserial") {
		fmt.Println(s)
	}
	// Output:
	// snowflake?layout=time:41,worker:10,sequence:12
	// uuidv7
	// bigserial
}
