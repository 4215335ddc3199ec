package idgen_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// traced is a wrapper Generator, as a program writes one to log or trace
// the IDs it issues. Its Unwrap lets StatsOf and ReadyOf find the
// counters and the readiness of the generator it wraps.
type traced struct{ idgen.Generator }

func (t traced) Unwrap() idgen.Generator { return t.Generator }

// StatsOf looks through wrappers, as net/http's ResponseController does:
// the wrapper has no counters, the Snowflake generator inside it has.
func ExampleStatsOf() {
	layout, _ := snowflake.Preset("twitter")
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout, Nodes: map[string]int64{"worker": 7}, Rollback: snowflake.Hold})
	if err != nil {
		panic(err)
	}
	var w idgen.Generator = traced{traced{g}}
	st, ok := idgen.StatsOf(w)
	fmt.Println(ok, st.Has(idgen.StatsClock), st.Has(idgen.StatsSegment))
	fmt.Println(st.MaxAhead, st.LayoutEnd.Format(time.RFC3339))

	_, ok = idgen.StatsOf(traced{&localCounter{}})
	fmt.Println(ok)
	// Output:
	// true true false
	// 10s 2080-07-10T17:30:30Z
	// false
}

// ReadyOf finds the Readier through wrappers; a generator without one can
// only be probed with Next.
func ExampleReadyOf() {
	layout, _ := snowflake.Preset("baidu") // its 28-bit time field ran out in 2024
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout})
	if err != nil {
		panic(err)
	}
	if r, ok := idgen.ReadyOf(traced{g}); ok {
		err := r.Ready(context.Background())
		fmt.Println(errors.Is(err, idgen.ErrLayoutExhausted))
	}
	_, ok := idgen.ReadyOf(&localCounter{})
	fmt.Println(ok)
	// Output:
	// true
	// false
}
