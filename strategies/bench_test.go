package strategies_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"
	"github.com/sony/sonyflake/v2"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// Each benchmark runs the raw library and the adapter in the same run;
// compare their ns/op (the adapter's goal: at most 10 % over the library).

func reportIDs(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
}

var (
	sinkID    idgen.ID
	sinkUUID  uuid.UUID
	sinkULID  ulid.ULID
	sinkKSUID ksuid.KSUID
	sinkXID   xid.ID
	sinkInt   int64
)

func benchAdapter(b *testing.B, spec string) {
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		id, err := g.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sinkID = id
	}
	reportIDs(b)
}

func benchAdapterParallel(b *testing.B, spec string) {
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := g.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportIDs(b)
}

func BenchmarkUUIDv4(b *testing.B) {
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u, err := uuid.NewRandom()
			if err != nil {
				b.Fatal(err)
			}
			sinkUUID = u
		}
		reportIDs(b)
	})
	b.Run("adapter", func(b *testing.B) { benchAdapter(b, "uuidv4") })
}

func BenchmarkUUIDv7(b *testing.B) {
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u, err := uuid.NewV7()
			if err != nil {
				b.Fatal(err)
			}
			sinkUUID = u
		}
		reportIDs(b)
	})
	b.Run("adapter", func(b *testing.B) { benchAdapter(b, "uuidv7") })
	b.Run("library-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				uuid.NewV7()
			}
		})
		reportIDs(b)
	})
	b.Run("adapter-parallel", func(b *testing.B) { benchAdapterParallel(b, "uuidv7") })
}

func BenchmarkULID(b *testing.B) {
	b.Run("library", func(b *testing.B) { // ulid.Make: math/rand monotonic entropy
		b.ReportAllocs()
		for b.Loop() {
			sinkULID = ulid.Make()
		}
		reportIDs(b)
	})
	b.Run("adapter", func(b *testing.B) { benchAdapter(b, "ulid") })
	b.Run("library-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = ulid.Make()
			}
		})
		reportIDs(b)
	})
	b.Run("adapter-parallel", func(b *testing.B) { benchAdapterParallel(b, "ulid") })
}

func BenchmarkKSUID(b *testing.B) {
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkKSUID = ksuid.New()
		}
		reportIDs(b)
	})
	b.Run("adapter", func(b *testing.B) { benchAdapter(b, "ksuid") })
	b.Run("adapter-random", func(b *testing.B) { benchAdapter(b, "ksuid?monotonic=false") })
	b.Run("library-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = ksuid.New()
			}
		})
		reportIDs(b)
	})
	b.Run("adapter-parallel", func(b *testing.B) { benchAdapterParallel(b, "ksuid") })
}

func BenchmarkXID(b *testing.B) {
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkXID = xid.New()
		}
		reportIDs(b)
	})
	b.Run("adapter", func(b *testing.B) { benchAdapter(b, "xid") })
}

// Sonyflake with a 1 ms tick and 16 sequence bits, so that no run waits
// for the next tick.
func BenchmarkSonyflake(b *testing.B) {
	b.Run("library", func(b *testing.B) {
		sf, err := sonyflake.New(sonyflake.Settings{BitsSequence: 16, BitsMachineID: 8, TimeUnit: 1e6,
			MachineID: func() (int, error) { return 1, nil }})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			v, err := sf.NextID()
			if err != nil {
				b.Fatal(err)
			}
			sinkInt = v
		}
		reportIDs(b)
	})
	b.Run("adapter", func(b *testing.B) {
		benchAdapter(b, "sonyflake?bits_sequence=16&bits_machine=8&time_unit=1ms&machine=1")
	})
}

// flake128 has no Go library: compare with the Snowflake core it runs on.
func BenchmarkFlake128(b *testing.B) {
	b.Run("snowflake-core", func(b *testing.B) { benchAdapter(b, "snowflake?layout=time:47,sequence:16;epoch=0") })
	b.Run("adapter", func(b *testing.B) { benchAdapter(b, "flake128?worker=1") })
}

// BenchmarkOverhead runs each adapter and its library in alternating chunks
// of 256 IDs (ABBA order), so that load on a shared machine falls on both
// alike, and reports their ns per ID and the ratio adapter/library (goal:
// <= 1.10).
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	adapter := func(spec string) func() {
		g, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		return func() {
			id, err := g.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sinkID = id
		}
	}
	sf, err := sonyflake.New(sonyflake.Settings{BitsSequence: 16, BitsMachineID: 8, TimeUnit: 1e6,
		MachineID: func() (int, error) { return 1, nil }})
	if err != nil {
		b.Fatal(err)
	}
	pairs := []struct {
		name         string
		lib, adapter func()
	}{
		{"uuidv4", func() { sinkUUID, _ = uuid.NewRandom() }, adapter("uuidv4")},
		{"uuidv7", func() { sinkUUID, _ = uuid.NewV7() }, adapter("uuidv7")},
		{"ulid", func() { sinkULID = ulid.Make() }, adapter("ulid")},
		{"ksuid", func() { sinkKSUID = ksuid.New() }, adapter("ksuid")},
		{"ksuid-random", func() { sinkKSUID = ksuid.New() }, adapter("ksuid?monotonic=false")},
		{"xid", func() { sinkXID = xid.New() }, adapter("xid")},
		{"sonyflake", func() { sinkInt, _ = sf.NextID() }, adapter("sonyflake?bits_sequence=16&bits_machine=8&time_unit=1ms&machine=1")},
	}
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) {
			const chunk = 256
			var libT, adT time.Duration
			run := func(f func()) time.Duration {
				t0 := time.Now()
				for range chunk {
					f()
				}
				return time.Since(t0)
			}
			odd := false
			for b.Loop() {
				if odd { // ABBA order: neither side always runs second
					adT += run(p.adapter)
					libT += run(p.lib)
				} else {
					libT += run(p.lib)
					adT += run(p.adapter)
				}
				odd = !odd
			}
			n := float64(b.N * chunk)
			b.ReportMetric(float64(libT.Nanoseconds())/n, "lib-ns/id")
			b.ReportMetric(float64(adT.Nanoseconds())/n, "adapter-ns/id")
			b.ReportMetric(float64(adT)/float64(libT), "ratio")
			b.ReportMetric(n/adT.Seconds(), "ids/s")
		})
	}
}
