package prefetch_test

import (
	"fmt"
	"time"

	"github.com/idgenkit/idgen/prefetch"
)

// A consumer of ID blocks tells the Planner how fast it uses IDs and how long
// fetches take; the Planner answers when to fetch the next block and how
// large to make it.
func Example() {
	p, err := prefetch.New(prefetch.Config{Min: 1000, Max: 100_000})
	if err != nil {
		panic(err)
	}
	p.ObserveUse(50_000, 10*time.Second) // 5,000 IDs/s
	for _, ms := range []int{8, 12, 20, 9, 11} {
		p.ObserveFetch(time.Duration(ms) * time.Millisecond)
	}
	rate, p99 := p.Figures()
	fmt.Println(rate, p99)
	// 5,000 IDs/s × 20 ms × safety 2 = 200 IDs: below Min, the block is Min.
	fmt.Println(p.Need(), p.Threshold(), p.Size(), p.Limited())

	// A surge of 10 million IDs/s moves the rate, a moving average, to
	// 5,002,500 IDs/s: 200,100 IDs must remain when a fetch starts, more
	// than a block of Max holds, so consumers will wait (Limited).
	p.ObserveUse(10_000_000, time.Second)
	fmt.Println(p.Need(), p.Threshold(), p.Size(), p.Limited())
	// Output:
	// 5000 20ms
	// 200 200 1000 false
	// 200100 100000 100000 true
}

func ExampleNew_badConfig() {
	_, err := prefetch.New(prefetch.Config{Min: 5000, Max: 1000})
	fmt.Println(err)
	// Output:
	// prefetch: invalid configuration: Min 5000 and Max 1000: want 1 <= Min <= Max
}
