package snowflake_test

import (
	"context"
	"testing"
	"time"

	bw "github.com/bwmarrin/snowflake"
	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// unbound is a layout whose 22-bit sequence (4,194,304 IDs per ms) no
// goroutine exhausts, so Next's CPU cost shows rather than the cap.
var unbound = snowflake.Layout{Fields: []snowflake.LayoutField{{Name: "time", Bits: 41}, {Name: "sequence", Bits: 22}}}

func newGen(b *testing.B, cfg snowflake.Config) *snowflake.Generator {
	g, err := snowflake.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func reportRate(b *testing.B, ids int) {
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(ids)/s, "ids/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(ids), "ns/id")
}

// BenchmarkCapTwitter runs Next on the twitter layout, whose cap is 4,096
// IDs per ms per worker (4,096,000 ids/s); cap% is the share reached.
func BenchmarkCapTwitter(b *testing.B) {
	l, _ := snowflake.Preset("twitter")
	g := newGen(b, snowflake.Config{Layout: l})
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := g.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/4_096_000*100, "cap%")
}

// BenchmarkCapBwmarrin is github.com/bwmarrin/snowflake v0.3.0 on the same
// layout, for comparison in the same run.
func BenchmarkCapBwmarrin(b *testing.B) {
	n, err := bw.NewNode(3)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n.Generate()
	}
	reportRate(b, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/4_096_000*100, "cap%")
}

func benchUnbound(b *testing.B, clk snowflake.Clock) {
	g := newGen(b, snowflake.Config{Layout: unbound, Clock: clk})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, b.N)
}

// BenchmarkNextCPU measures the CPU cost per ID where the sequence cannot
// bind. Run with -cpu 1,2 for one and two goroutines.
func BenchmarkNextCPU(b *testing.B) {
	b.Run("clock=system", func(b *testing.B) { benchUnbound(b, nil) })
	b.Run("clock=coarse", func(b *testing.B) {
		c := snowflake.NewCoarseClock(nil, time.Millisecond)
		defer c.Close()
		benchUnbound(b, c)
	})
}

// BenchmarkNextN4096 takes 4,096 IDs per call.
func BenchmarkNextN4096(b *testing.B) {
	g := newGen(b, snowflake.Config{Layout: unbound})
	dst := make([]idgen.ID, 4096)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.NextN(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N*len(dst))
}
