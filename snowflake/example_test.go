package snowflake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/idgenkit/idgen/snowflake"
)

// fixed is a clock stopped at 2026-06-01T11:07:00Z, for reproducible output.
type fixed struct{}

func (fixed) Now() time.Time { return time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC) }

func Example() {
	layout, _ := snowflake.Preset("twitter")
	g, err := snowflake.New(context.Background(), snowflake.Config{
		Layout: layout,
		Nodes:  map[string]int64{"datacenter": 4, "worker": 18},
		Clock:  fixed{},
	})
	if err != nil {
		panic(err)
	}
	id, _ := g.Next(context.Background())
	parts, _ := g.Decompose(id)
	dc, _ := parts.Node("datacenter")
	w, _ := parts.Node("worker")
	js, _ := json.Marshal(id)
	fmt.Println(id)
	fmt.Println(string(js))
	fmt.Println(parts.Time.Format(time.RFC3339), dc, w, parts.Sequence)
	// Output:
	// 2061404137190924288
	// "2061404137190924288"
	// 2026-06-01T11:07:00Z 4 18 0
}

func ExampleParseLayout() {
	l, err := snowflake.ParseLayout("time:41,region:3,worker:9,sequence:10;tick=1ms;epoch=2026-01-01")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Bits(), l.PerSecond(), l.Nodes())
	fmt.Println(l.End().Format(time.DateOnly))
	// Output:
	// 63 1.024e+06 4096
	// 2095-09-07
}

func ExampleNew_outOfRange() {
	layout, _ := snowflake.Preset("twitter")
	_, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout, Nodes: map[string]int64{"worker": 32}})
	fmt.Println(err)
	// Output:
	// idgen: value out of range: worker 32 outside [0, 31] (5 bits)
}

func ExampleLayout_Spans() {
	l, _ := snowflake.Preset("twitter")
	id := uint64(2061404137190924288)
	for _, s := range l.Spans() {
		fmt.Printf("%-10s bits %2d-%-2d mask %#x value %d\n", s.Name, s.High(), s.Shift, s.Mask, s.Value(id))
	}
	// Output:
	// time       bits 62-22 mask 0x1ffffffffff value 491477045343
	// datacenter bits 21-17 mask 0x1f value 4
	// worker     bits 16-12 mask 0x1f value 18
	// sequence   bits 11-0  mask 0xfff value 0
}
