package workerid_test

import (
	"context"
	"fmt"
	"net"

	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// A Source is a Lease: the Snowflake generator reads its worker ID from it
// on every ID.
func Example() {
	src, err := workerid.NewStatic(18, workerid.Space{Workers: 32, DatacenterID: 4})
	if err != nil {
		panic(err)
	}
	defer src.Close()
	layout, _ := snowflake.Preset("twitter")
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout, Lease: src})
	if err != nil {
		panic(err)
	}
	id, _ := g.NewAt(layout.TickTime(1000)) // NewAt reads no clock
	parts, _ := g.Decompose(id)
	dc, _ := parts.Node("datacenter")
	w, _ := parts.Node("worker")
	fmt.Println(dc, w)
	// Output:
	// 4 18
}

// Open reads a worker source URL, as the worker_source key of a spec takes it.
func ExampleOpen() {
	src, err := workerid.Open(context.Background(), "static:7", workerid.Space{Workers: 1024})
	if err != nil {
		panic(err)
	}
	defer src.Close()
	fmt.Println(src.Identity().WorkerID)

	_, err = workerid.Open(context.Background(), "static:1024", workerid.Space{Workers: 1024})
	fmt.Println(err)
	// Output:
	// 7
	// idgen: value out of range: workerid: static gives worker ID 1024, outside [0, 1023]
}

// IP takes the low bits of the first private IPv4 address, as Sonyflake's
// default does: 10.0.3.7 gives 3<<8 | 7 = 775 of 16 bits.
func ExampleIP() {
	addrs := []net.Addr{
		&net.IPNet{IP: net.IPv4(127, 0, 0, 1), Mask: net.CIDRMask(8, 32)},
		&net.IPNet{IP: net.IPv4(10, 0, 3, 7), Mask: net.CIDRMask(16, 32)},
	}
	src, err := workerid.IP(16, addrs, workerid.Space{Workers: 1 << 16})
	if err != nil {
		panic(err)
	}
	fmt.Println(src.Identity().WorkerID)
	// Output:
	// 775
}
