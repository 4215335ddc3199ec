package public_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/snowflake"
)

// A Generator wraps an inner generator and encrypts its IDs: the public text
// hides the issue time, worker and order, and only a holder of the key reads
// them back. The key here is fixed for reproducible output; a real one comes
// from a secret store (64 hex digits of random bytes).
func Example() {
	ctx := context.Background()
	layout, _ := snowflake.Preset("twitter")
	clock := idgentest.NewClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC))
	inner, err := snowflake.New(ctx, snowflake.Config{
		Layout: layout,
		Nodes:  map[string]int64{"datacenter": 4, "worker": 18},
		Clock:  clock,
	})
	if err != nil {
		panic(err)
	}
	keys, err := public.ParseKeys("IDGEN_PUBLIC_KEY", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil {
		panic(err)
	}
	g, err := public.New(inner, public.Config{Keys: keys})
	if err != nil {
		panic(err)
	}
	for range 2 {
		id, err := g.Next(ctx)
		if err != nil {
			panic(err)
		}
		in, _ := public.Inner(id)
		fmt.Println(id, in)
	}

	// Whoever holds the key parses the text back and takes it apart.
	id, err := g.Scheme().Parse("04NKTTZ7FFZHDD")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Time().Format(time.RFC3339), g.Scheme().Decompose(id))
	// Output:
	// 07GD848WQJXPV7 2061404137190924288
	// 04NKTTZ7FFZHDD 2061404137190924289
	// 2026-06-01T11:07:00Z [{key_id 0 8} {time 491477045343 41} {datacenter 4 5} {worker 18 5} {sequence 1 12}]
}

// AppendNext writes public IDs into a buffer the caller reuses, without
// allocating. A tweak gives each type of object its own public IDs: the
// same inner IDs under the tweak "order" read differently, and only a
// scheme with that tweak reads them back.
func ExampleGenerator_AppendNext() {
	ctx := context.Background()
	layout, _ := snowflake.Preset("twitter")
	keys, err := public.ParseKeys("IDGEN_PUBLIC_KEY", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil {
		panic(err)
	}
	for _, tweak := range []string{"", "order"} {
		inner, err := snowflake.New(ctx, snowflake.Config{
			Layout: layout,
			Nodes:  map[string]int64{"datacenter": 4, "worker": 18},
			Clock:  idgentest.NewClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC)),
		})
		if err != nil {
			panic(err)
		}
		g, err := public.New(inner, public.Config{Keys: keys, Tweak: []byte(tweak)})
		if err != nil {
			panic(err)
		}
		buf := make([]byte, 0, 64)
		for range 2 {
			if buf, err = g.AppendNext(ctx, buf[:0]); err != nil {
				panic(err)
			}
			id, _ := g.Scheme().Parse(string(buf))
			in, _ := public.Inner(id)
			fmt.Printf("tweak %q: %s %s\n", tweak, buf, in)
		}
	}
	// Output:
	// tweak "": 07GD848WQJXPV7 2061404137190924288
	// tweak "": 04NKTTZ7FFZHDD 2061404137190924289
	// tweak "order": 0DQRDX3ABX7JYN 2061404137190924288
	// tweak "order": 09DS309C3ZMQHW 2061404137190924289
}

// An Encoding writes any ID's bytes as text of a fixed width.
func ExampleLookupEncoding() {
	for _, name := range []string{"crockford-check", "base58", "base62"} {
		e, err := public.LookupEncoding(name)
		if err != nil {
			panic(err)
		}
		b := []byte{0x1c, 0x9b, 0x94, 0x24, 0x17, 0xc9, 0x20, 0x00} // 2061404137190924288
		fmt.Println(name, string(e.AppendText(nil, b)), e.Width(len(b)))
	}
	_, err := public.LookupEncoding("base64")
	fmt.Println(err)
	// Output:
	// crockford-check 1S6WM4GBWJ8008 14
	// base58 5nXneABj2FZ 11
	// base62 2SHFfpfRXpA 11
	// public: invalid encoding: "base64"; want one of crockford, crockford-check, base58, base62, base36, hex, bwmarrin-base2, bwmarrin-base32, bwmarrin-base36, bwmarrin-base58, bwmarrin-base64
}
