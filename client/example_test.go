package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/client"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// A Generator takes its IDs from idgen gRPC servers in blocks and hands them
// out from its buffer. Here one server runs in process, issuing from a
// Snowflake generator of worker 18 on a clock that stands still.
func Example() {
	ctx := context.Background()
	layout, _ := snowflake.Preset("twitter")
	clock := idgentest.NewClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC)) // for reproducible output
	sf, err := snowflake.New(ctx, snowflake.Config{
		Layout: layout,
		Nodes:  map[string]int64{"datacenter": 4, "worker": 18},
		Clock:  clock,
	})
	if err != nil {
		panic(err)
	}
	api, err := grpcapi.New(map[string]idgen.Generator{"orders": sf}, grpcapi.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	gs := api.NewGRPCServer()
	go gs.Serve(ln)
	defer func() { api.Shutdown(); gs.Stop() }()

	// The client side: the servers' addresses, and the block sizes.
	g, err := client.New(ctx, client.Config{Targets: []string{ln.Addr().String()}, Generator: "orders", MinBatch: 100, MaxBatch: 1000})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	fmt.Println(g.Scheme(), g.Scheme().Size, g.Scheme().TimeOrdered)
	for range 3 {
		id, err := g.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Print(id.Time().Format(time.RFC3339))
		for _, f := range g.Scheme().Decompose(id) {
			fmt.Printf(" %s=%d", f.Name, f.Value)
		}
		fmt.Println()
	}
	ids := make([]idgen.ID, 2)
	n, err := g.NextN(ctx, ids)
	fmt.Println(n, err, ids[0].Compare(ids[1]))
	// Output:
	// snowflake 8 true
	// 2026-06-01T11:07:00Z time=491477045343 datacenter=4 worker=18 sequence=0
	// 2026-06-01T11:07:00Z time=491477045343 datacenter=4 worker=18 sequence=1
	// 2026-06-01T11:07:00Z time=491477045343 datacenter=4 worker=18 sequence=2
	// 2 <nil> -1
}
