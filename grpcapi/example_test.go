package grpcapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// A Server serves named generators over gRPC: build its grpc.Server with
// NewGRPCServer, listen, and call it with the generated idgenv1 client.
func Example() {
	ctx := context.Background()
	layout, _ := snowflake.Preset("twitter")
	clock := idgentest.NewClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC)) // for reproducible output
	g, err := snowflake.New(ctx, snowflake.Config{
		Layout: layout,
		Nodes:  map[string]int64{"datacenter": 4, "worker": 18},
		Clock:  clock,
	})
	if err != nil {
		panic(err)
	}
	s, err := grpcapi.New(map[string]idgen.Generator{"orders": g}, grpcapi.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	gs := s.NewGRPCServer()
	go gs.Serve(ln)
	defer func() { s.Shutdown(); gs.Stop() }()

	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer cc.Close()
	c := idgenv1.NewIDServiceClient(cc)

	list, err := c.ListGenerators(ctx, &idgenv1.ListGeneratorsRequest{})
	if err != nil {
		panic(err)
	}
	for _, gen := range list.GetGenerators() {
		fmt.Println(gen.GetName(), gen.GetScheme(), gen.GetSize(), gen.GetTimeOrdered(), gen.GetLayout())
	}
	resp, err := c.Next(ctx, &idgenv1.NextRequest{Generator: "orders", Count: 2})
	if err != nil {
		panic(err)
	}
	for _, id := range resp.GetIds() {
		fmt.Print(id.GetText(), " ", time.UnixMilli(id.GetTimestampMs()).UTC().Format(time.RFC3339))
		for _, f := range id.GetFields() {
			fmt.Printf(" %s=%d", f.GetName(), f.GetValue())
		}
		fmt.Println()
	}
	// A bad ID is InvalidArgument, its message naming the input.
	_, err = c.Decode(ctx, &idgenv1.DecodeRequest{Generator: "orders", Id: "20614041371909242x"})
	fmt.Println(status.Code(err), status.Convert(err).Message())
	// Output:
	// orders snowflake 8 true time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2010-11-04T01:42:54.657Z
	// 2061404137190924288 2026-06-01T11:07:00Z time=491477045343 datacenter=4 worker=18 sequence=0
	// 2061404137190924289 2026-06-01T11:07:00Z time=491477045343 datacenter=4 worker=18 sequence=1
	// InvalidArgument idgen: "20614041371909242x" is not a snowflake ID of generator "orders": idgen: invalid ID syntax: it is not a decimal ID (digits 0-9 only)
}
