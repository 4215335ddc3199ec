package idgentest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// A Clock stands still until a test moves it, so that what a generator
// issues is known in advance: here a Snowflake generator meets a clock
// rollback of 5 ms, which its default policy (WaitThenFail) waits out by
// sleeping on the Clock (the sequence number the first attempt took is a
// gap), and one of 50 ms, past its MaxWait of 10 ms. Timers fire when the
// clock reaches them.
func ExampleClock() {
	ctx := context.Background()
	clock := idgentest.NewClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC))
	layout, _ := snowflake.Preset("twitter")
	g, err := snowflake.New(ctx, snowflake.Config{Layout: layout, Nodes: map[string]int64{"worker": 18}, Clock: clock})
	if err != nil {
		panic(err)
	}
	show := func() {
		id, err := g.Next(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		parts, _ := g.Decompose(id)
		fmt.Println(parts.Time.Format(time.StampMilli), parts.Sequence, clock.Slept())
	}
	show()
	show()
	clock.Add(time.Millisecond)
	show()
	clock.Add(-5 * time.Millisecond)
	show()
	clock.Add(-50 * time.Millisecond)
	show()

	fired := make(chan time.Time, 1)
	clock.AfterFunc(time.Second, func() { fired <- clock.Now() })
	clock.Add(time.Second)
	fmt.Println((<-fired).Format(time.StampMilli), clock.Pending())
	// Output:
	// Jun  1 11:07:00.000 0 0s
	// Jun  1 11:07:00.000 1 0s
	// Jun  1 11:07:00.001 0 0s
	// Jun  1 11:07:00.001 2 5ms
	// idgen: clock moved backwards by 50ms
	// Jun  1 11:07:00.951 0
}

// ColumnText is the text PostgreSQL reads into a scheme's native column
// type: a ULID's uuid column takes it as 8-4-4-4-12 hex.
func ExampleColumnText() {
	for _, tc := range []struct{ spec, text string }{
		{"ulid", "01KZ5Q6A80Q2WJ3RBD4N0M7Y5S"},
		{"snowflake?preset=twitter", "2061404137190924288"},
	} {
		scheme, err := strategies.SchemeOf(strategies.MustParse(tc.spec))
		if err != nil {
			panic(err)
		}
		id := scheme.MustParse(tc.text)
		fmt.Println(id, scheme.Column, idgentest.ColumnText(id))
	}
	// Output:
	// 01KZ5Q6A80Q2WJ3RBD4N0M7Y5S uuid 019fcb73-2900-b8b9-21e1-6d254143f8b9
	// 2061404137190924288 bigint 2061404137190924288
}
