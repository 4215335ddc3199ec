package compare_test

import (
	"fmt"

	"github.com/idgenkit/idgen/compare"
)

// Three trials' rows/s: the median, and its 95 % interval from the seeded
// bootstrap (with 5 trials or fewer, the trials' range).
func ExampleBootstrapCI() {
	rps := []float64{388000, 328000, 352000}
	ci := compare.BootstrapCI(rps, 7)
	fmt.Printf("median %.0f rows/s, 95 %% CI [%.0f–%.0f]\n", compare.Median(rps), ci[0], ci[1])
	// Output: median 352000 rows/s, 95 % CI [328000–388000]
}

// A ratio to the baseline prints as a number when its interval excludes
// 1, and as "≈" (no significant difference) when it contains 1.
func ExampleEstimate_FormatRatio() {
	uuidv4 := compare.Ratios([]float64{70, 66, 74}, []float64{100, 100, 100})
	uuidv7 := compare.Ratios([]float64{98, 104, 101}, []float64{100, 100, 100})
	for _, rs := range [][]float64{uuidv4, uuidv7} {
		e := compare.Estimate{Median: compare.Median(rs), CI: compare.BootstrapCI(rs, 7)}
		fmt.Printf("%s (median %.2f, CI [%.2f–%.2f])\n", e.FormatRatio(), e.Median, e.CI[0], e.CI[1])
	}
	// Output:
	// 0.70 (median 0.70, CI [0.66–0.74])
	// ≈ (median 1.01, CI [0.98–1.04])
}

// SplitSpecs splits the --strategies list, leaving a comma inside a
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
