package stats_test

import (
	"fmt"

	"github.com/idgenkit/idgen/internal/stats"
)

// Three trials' rows/s: the median, and its 95 % interval from the seeded
// bootstrap (with 5 trials or fewer, the trials' range).
func ExampleBootstrapCI() {
	rps := []float64{388000, 328000, 352000}
	ci := stats.BootstrapCI(rps, 7)
	fmt.Printf("median %.0f rows/s, 95 %% CI [%.0f–%.0f]\n", stats.Median(rps), ci[0], ci[1])
	// Output: median 352000 rows/s, 95 % CI [328000–388000]
}
