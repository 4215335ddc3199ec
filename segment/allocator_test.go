package segment_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// TestConformance: 8 goroutines × 25,000 IDs cross about 8 segments of
// the doubling step from 1000 (the suite's default 100,000 each crossed
// 10, 4 times as long).
func TestConformance(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			dsn := s.dsn(t)
			tag := uniqueTag(t, dsn)
			initTag(t, dsn, tag, 1000)
			idgentest.Run(t, func(t *testing.T) idgen.Generator { return dial(t, dsn, segment.Config{Tag: tag}) },
				idgentest.Options{PerGoroutine: 25_000})
		})
	}
}

// Four allocators with separate pools, as four processes would have, share
// one tag: 4 × 50,000 IDs, none twice, each allocator's increasing. Each
// fetches 6 segments (1000 doubling to MaxStep 20,000), 24 interleaved
// fetches of one tag (250,000 each took 5 times as long).
func TestFourAllocators(t *testing.T) {
	const per = 50_000
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			dsn := s.dsn(t)
			tag := uniqueTag(t, dsn)
			initTag(t, dsn, tag, 1000)
			ids := make([][]uint64, 4)
			var wg sync.WaitGroup
			for i := range ids {
				a := dial(t, dsn, segment.Config{Tag: tag, MaxStep: 20_000})
				wg.Go(func() {
					out := make([]uint64, 0, per)
					for range per {
						id, err := a.Next(context.Background())
						if err != nil {
							t.Errorf("allocator %d: Next() = %v", i, err)
							return
						}
						v, _ := id.Uint64()
						out = append(out, v)
					}
					ids[i] = out
				})
			}
			wg.Wait()
			for i, l := range ids {
				if len(l) != per {
					t.Fatalf("allocator %d issued %d IDs; want %d", i, len(l), per)
				}
				increasing(t, "allocator", l)
			}
			noDuplicates(t, ids...)
		})
	}
}

// The store goes down mid-run (a proxy in the test cuts every connection):
// the allocator serves what it holds, then ErrUnavailable, then recovers
// without a duplicate.
func TestStoreOutage(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			dsn := s.dsn(t)
			tag := uniqueTag(t, dsn)
			initTag(t, dsn, tag, 500)
			pdsn, p := via(t, dsn)
			var mu sync.Mutex
			var fetchErrs []error
			a := dial(t, pdsn, segment.Config{
				Tag: tag, MinStep: 500, MaxStep: 500, Prefetch: 0.5,
				RetryMin: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, FetchTimeout: 2 * time.Second,
				OnFetch: func(f segment.Fetch) {
					if f.Err != nil {
						mu.Lock()
						fetchErrs = append(fetchErrs, f.Err)
						mu.Unlock()
					}
				},
			})
			before := take(t, a, 1800)
			// Wait for the prefetch to land, so that both segments are full.
			for a.Stats().Remaining < 500 {
				time.Sleep(time.Millisecond)
			}
			held := a.Stats().Remaining
			p.Cut()

			var during []uint64
			var err error
			for {
				var id idgen.ID
				if id, err = a.Next(context.Background()); err != nil {
					break
				}
				v, _ := id.Uint64()
				during = append(during, v)
				if len(during) > 10_000 {
					t.Fatalf("issued %d IDs with the store down; want at most what it held", len(during))
				}
			}
			if !errors.Is(err, idgen.ErrUnavailable) {
				t.Fatalf("Next() with both segments empty = %v; want ErrUnavailable", err)
			}
			if int64(len(during)) < held {
				t.Fatalf("issued %d IDs after the cut; want the %d held in memory", len(during), held)
			}
			if st := a.Stats(); st.Unavailable == 0 || st.FetchErrors == 0 {
				t.Fatalf("Stats() = %+v; want Unavailable and FetchErrors > 0", st)
			}

			p.Restore()
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err = a.Next(context.Background()); err == nil {
					break
				}
				if !errors.Is(err, idgen.ErrUnavailable) || time.Now().After(deadline) {
					t.Fatalf("Next() after restore = %v", err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			after := take(t, a, 3000)
			all := append(append(append([]uint64{}, before...), during...), after...)
			increasing(t, "one allocator across the outage", all)
			noDuplicates(t, all)
			mu.Lock()
			defer mu.Unlock()
			if len(fetchErrs) == 0 || !errors.Is(fetchErrs[0], segment.ErrUnreachable) {
				t.Fatalf("fetch errors during the outage = %v; want ErrUnreachable", fetchErrs)
			}
		})
	}
}

// A restart loses at most the unused rest of the segments, never issues an
// ID twice. FixedPrefetch: the adaptive prefetcher, measuring a fast
// consumer and a slow fetch (a loaded machine), may make the second
// segment so long that 234 IDs do not reach its trigger, and the third is
// never fetched (the test waited forever under load average 20).
func TestRestart(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			dsn := s.dsn(t)
			tag := uniqueTag(t, dsn)
			initTag(t, dsn, tag, 1000)
			a := dial(t, dsn, segment.Config{Tag: tag, FixedPrefetch: true})
			first := take(t, a, 1234) // into the second segment (2,000), past its 10 %
			for deadline := time.Now().Add(30 * time.Second); a.Stats().Segments < 3; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) { // a fetch takes milliseconds
					t.Fatalf("Stats() = %+v 30 s after the second segment's 10 %%; want the third fetched", a.Stats())
				}
			}
			lost := a.Stats().Remaining
			if err := a.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if _, err := a.Next(context.Background()); !errors.Is(err, idgen.ErrClosed) {
				t.Fatalf("Next() after Close = %v; want ErrClosed", err)
			}
			b := dial(t, dsn, segment.Config{Tag: tag})
			second := take(t, b, 1234)
			noDuplicates(t, first, second)
			gap := int64(second[0]) - int64(first[len(first)-1]) - 1
			if gap != lost {
				t.Fatalf("gap after restart = %d IDs; want the %d unused in memory", gap, lost)
			}
		})
	}
}

// The step doubles when a segment lasted under 15 min, halves when over
// 30 min, stays in between, within [MinStep, MaxStep]: Leaf's rule alone
// (the adaptive prefetcher would take the first segment, used up at once on
// the test clock, for a burst and ask for MaxStep).
func TestDynamicStep(t *testing.T) {
	dsn := redisDSN(t)
	tag := uniqueTag(t, dsn)
	initTag(t, dsn, tag, 100)
	clk := idgentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var steps []int64
	a := dial(t, dsn, segment.Config{
		Tag: tag, MinStep: 25, MaxStep: 400, Prefetch: 1, Clock: clk, FixedPrefetch: true,
		OnFetch: func(f segment.Fetch) {
			mu.Lock()
			steps = append(steps, f.Step)
			mu.Unlock()
		},
	})
	phases := []struct {
		name   string
		lasted time.Duration
		want   int64
	}{
		{"1 min doubles", time.Minute, 200},
		{"13 min more (14 in all) doubles", 13 * time.Minute, 400},
		{"0 s doubles up to the max", 0, 400},
		{"20 min keeps", 20 * time.Minute, 400},
		{"31 min halves", 31 * time.Minute, 200},
		{"1 h halves", time.Hour, 100},
		{"1 h halves again", time.Hour, 50},
		{"1 h halves to the min", time.Hour, 25},
		{"1 h stays at the min", time.Hour, 25},
	}
	got := take(t, a, 100) // the first segment, step 0: the tag's 100
	left := 0              // IDs left in the segment being issued
	// Its last ID started the first fetch, in the background. A step
	// follows from how long the segment before lasted since it was fetched,
	// so that fetch must land before the test clock moves: landed after
	// the first minute, the second segment lasted 1 minute less ([0 200
	// 200] at 14 minutes, once in a CI_LOAD=2 run). It takes a Redis round
	// trip, a few ms; the bound is 60 s.
	for deadline := time.Now().Add(time.Minute); a.Stats().Remaining == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first fetch did not land within 60 s: %+v", a.Stats())
		}
	}
	for _, ph := range phases {
		// The last ID of the segment starts the fetch (Prefetch 1); the next
		// Next waits for it. The test counts what is left itself: Stats's
		// Remaining also counts a next segment already fetched, and taking
		// that too would start the following fetch a phase early (steps
		// [0 200 400] at "1 min doubles", when the first fetch had landed
		// before Stats was read).
		clk.Add(ph.lasted)
		got = append(got, take(t, a, left+1)...)
		mu.Lock()
		last := steps[len(steps)-1]
		mu.Unlock()
		if last != ph.want {
			t.Fatalf("%s: step = %d; want %d (steps so far %v)", ph.name, last, ph.want, steps)
		}
		left = int(last) - 1
	}
	increasing(t, "IDs across steps", got)
	if steps[0] != 0 {
		t.Fatalf("first step asked = %d; want 0 (the tag's own)", steps[0])
	}
}

// redisDSN is the store of tests that need one store only: the fastest.
func redisDSN(t testing.TB) string { return testenv.RedisURL(t) }

func TestNextN(t *testing.T) {
	dsn := redisDSN(t)
	tag := uniqueTag(t, dsn)
	initTag(t, dsn, tag, 300)
	a := dial(t, dsn, segment.Config{Tag: tag, MinStep: 300, MaxStep: 300})
	var all []uint64
	for _, n := range []int{1, 299, 1000, 7, 2500} {
		dst := make([]idgen.ID, n)
		got, err := a.NextN(context.Background(), dst)
		if err != nil || got != n {
			t.Fatalf("NextN(%d) = %d, %v; want %d, nil", n, got, err, n)
		}
		for _, id := range dst {
			v, _ := id.Uint64()
			all = append(all, v)
		}
	}
	increasing(t, "NextN", all)
	// One allocator alone on its tag hands out 1, 2, 3, ... without a gap.
	for i, v := range all {
		if v != uint64(i+1) {
			t.Fatalf("NextN: ID #%d = %d; want %d", i, v, i+1)
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, s := range stores {
		t.Run(s.name+"/unknown tag", func(t *testing.T) {
			dsn := s.dsn(t)
			initTag(t, dsn, uniqueTag(t, dsn), 50) // the table, on an empty database too
			tag := uniqueTag(t, dsn)
			_, err := segment.Dial(ctx, dsn, segment.Config{Tag: tag})
			if !errors.Is(err, segment.ErrUnknownTag) || !strings.Contains(err.Error(), tag) {
				t.Fatalf("Dial(tag %q) = %v; want ErrUnknownTag naming the tag", tag, err)
			}
		})
		t.Run(s.name+"/auto create", func(t *testing.T) {
			dsn := s.dsn(t)
			initTag(t, dsn, uniqueTag(t, dsn), 50) // the table: auto_create makes the tag only
			tag := uniqueTag(t, dsn)
			a := dial(t, dsn, segment.Config{Tag: tag, AutoCreate: true, Step: 50})
			if got := take(t, a, 3); got[0] != 1 || got[2] != 3 {
				t.Fatalf("auto-created tag issued %v; want 1, 2, 3", got)
			}
		})
		t.Run(s.name+"/init step", func(t *testing.T) {
			dsn := s.dsn(t)
			st, err := segment.Open(ctx, dsn)
			if err != nil {
				t.Fatalf("Open(%q) = %v", dsn, err)
			}
			defer st.Close()
			for _, step := range []int64{0, -5, 1 << 31} {
				_, _, err := st.Init(ctx, "never_created", step, "")
				if !errors.Is(err, segment.ErrConfig) || !strings.Contains(err.Error(), "step "+strconv.FormatInt(step, 10)) {
					t.Fatalf("Init(step %d) = %v; want ErrConfig naming the step", step, err)
				}
			}
		})
	}
	dsn := redisDSN(t)
	tag := uniqueTag(t, dsn)
	initTag(t, dsn, tag, 10)
	configs := []struct {
		name string
		cfg  segment.Config
		want string
	}{
		{"negative step", segment.Config{Tag: tag, Step: -1}, "step -1"},
		{"step above max step", segment.Config{Tag: tag, Step: 500, MaxStep: 100}, "step 500 above max step 100"},
		{"min above max", segment.Config{Tag: tag, MinStep: 9, MaxStep: 8}, "min step 9"},
		{"prefetch", segment.Config{Tag: tag, Prefetch: 1.5}, "prefetch 1.5"},
		{"negative rate", segment.Config{Tag: tag, Rate: -1}, "rate -1"},
		{"NaN rate", segment.Config{Tag: tag, Rate: math.NaN()}, "rate NaN"},
		{"empty tag", segment.Config{}, `biz tag ""`},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			_, err := segment.Dial(ctx, dsn, c.cfg)
			if !errors.Is(err, segment.ErrConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Dial(%+v) = %v; want ErrConfig containing %q", c.cfg, err, c.want)
			}
		})
	}
	dsns := []struct {
		name, dsn string
		want      error
		mention   string
	}{
		{"does not parse", "postgres://host:port:x/db", segment.ErrDSN, "host:port:x"},
		{"unknown scheme", "oracle://127.0.0.1/x", segment.ErrDSN, `"oracle"`},
		{"no host", "redis:///0", segment.ErrDSN, "redis:///0"},
		{"bad mysql param", "mysql://root@127.0.0.1:3306/test?parseTime=maybe", segment.ErrDSN, "mysql://root@127.0.0.1:3306/test"},
		// An unreachable store is migrate's one line: engine, address, user, database, cause.
		{"postgres unreachable", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2", segment.ErrUnreachable,
			"cannot connect to PostgreSQL at 127.0.0.1:1 (user u, database db): connection refused"},
		{"mysql unreachable", "mysql://root@127.0.0.1:1/test", segment.ErrUnreachable,
			"cannot connect to MySQL at 127.0.0.1:1 (user root, database test): connection refused"},
		{"redis unreachable", "redis://127.0.0.1:1/0", segment.ErrUnreachable,
			"cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused"},
	}
	for _, c := range dsns {
		t.Run(c.name, func(t *testing.T) {
			_, err := segment.Open(ctx, c.dsn)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mention) || strings.Contains(err.Error(), "secret") ||
				errors.Is(c.want, segment.ErrUnreachable) && (err.Error() != c.mention || !errors.Is(err, idgen.ErrUnavailable)) {
				t.Fatalf("Open(%q) = %v; want %v naming %q, no password", c.dsn, err, c.want, c.mention)
			}
		})
	}
}

// setMaxID sets tag's max_id in the store at dsn, with the drivers directly.
func setMaxID(t testing.TB, dsn, tag string, v int64) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch {
	case strings.HasPrefix(dsn, "postgres"):
		var c *pgx.Conn
		if c, err = pgx.Connect(ctx, dsn); err == nil {
			_, err = c.Exec(ctx, `UPDATE idgen_segments SET max_id = $1 WHERE biz_tag = $2`, v, tag)
			c.Close(ctx)
		}
	case strings.HasPrefix(dsn, "mysql"):
		err = withMySQL(ctx, dsn, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, `UPDATE idgen_segments SET max_id = ? WHERE biz_tag = ?`, v, tag)
			return err
		})
	default:
		err = withRedis(dsn, func(c *redis.Client) error {
			return c.Set(ctx, segment.RedisPrefix+"{"+tag+"}", v, 0).Err()
		})
	}
	if err != nil {
		t.Fatalf("set max_id of %q to %d: %v", tag, v, err)
	}
}

// drain calls Next until it fails and returns the IDs and the error.
func drain(t testing.TB, g idgen.Generator, limit int) ([]uint64, error) {
	t.Helper()
	var out []uint64
	for {
		id, err := g.Next(context.Background())
		if err != nil {
			return out, err
		}
		v, _ := id.Uint64()
		out = append(out, v)
		if len(out) > limit {
			t.Fatalf("issued %d IDs; want at most %d", len(out), limit)
		}
	}
}

// A biz tag 2,500 below 2^63-1: two allocators hand out exactly the IDs
// left, none above 2^63-1 and none twice, then fail with ErrExhausted; a
// NextN larger than what is left fails whole and keeps what it held.
func TestTopOfRange(t *testing.T) {
	const top = math.MaxInt64
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			dsn := s.dsn(t)
			tag := uniqueTag(t, dsn)
			initTag(t, dsn, tag, 1000)
			setMaxID(t, dsn, tag, top-2500)
			st, err := segment.Open(context.Background(), dsn)
			if err != nil {
				t.Fatalf("Open(%q) = %v", dsn, err)
			}
			row, created, err := st.Init(context.Background(), tag, 1000, "")
			st.Close()
			if err != nil || created || row.MaxID != top-2500 {
				t.Fatalf("Init(existing tag) = %+v, %t, %v; want max_id %d exactly", row, created, err, int64(top-2500))
			}
			cfg := segment.Config{Tag: tag, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}
			a, b := dial(t, dsn, cfg), dial(t, dsn, cfg)
			dst := make([]idgen.ID, 3000)
			n, err := a.NextN(context.Background(), dst)
			if n != 0 || !errors.Is(err, segment.ErrExhausted) || !strings.Contains(err.Error(), "biz tag exhausted") {
				v, _ := dst[0].Uint64()
				t.Fatalf("NextN(3000) with 2500 left = %d (first %d), %v; want 0, ErrExhausted", n, v, err)
			}
			var all []uint64
			for _, g := range []*segment.Allocator{a, b} {
				ids, err := drain(t, g, 2500)
				if !errors.Is(err, segment.ErrExhausted) || errors.Is(err, idgen.ErrUnavailable) {
					t.Fatalf("Next() after the last ID = %v; want ErrExhausted, not ErrUnavailable", err)
				}
				increasing(t, "one allocator at the top", ids)
				all = append(all, ids...)
			}
			noDuplicates(t, all)
			slices.Sort(all)
			if len(all) != 2500 || all[0] != top-2499 || all[len(all)-1] != top {
				t.Fatalf("IDs issued at the top: %d from %d to %d; want the 2500 from %d to %d", len(all), all[0], all[len(all)-1], uint64(top-2499), uint64(top))
			}
			if _, err := segment.Dial(context.Background(), dsn, cfg); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("Dial(exhausted tag) = %v; want ErrExhausted", err)
			}
		})
	}
}

// During a store outage, a NextN larger than what the allocator holds
// fails with ErrUnavailable and keeps every ID it held: smaller requests
// still get them, in order.
func TestOutageKeepsHeld(t *testing.T) {
	dsn := redisDSN(t)
	tag := uniqueTag(t, dsn)
	initTag(t, dsn, tag, 500)
	pdsn, p := via(t, dsn)
	a := dial(t, pdsn, segment.Config{Tag: tag, MinStep: 500, MaxStep: 500, Prefetch: 0.5,
		RetryMin: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, FetchTimeout: time.Second})
	before := take(t, a, 800) // past the second segment's 50 %: the third is fetched
	for a.Stats().Remaining < 500 {
		time.Sleep(time.Millisecond) // the prefetch lands: both segments hold IDs
	}
	held := a.Stats().Remaining
	p.Cut()
	dst := make([]idgen.ID, held+1000)
	if n, err := a.NextN(context.Background(), dst); n != 0 || !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("NextN(%d) with %d held and the store down = %d, %v; want 0, ErrUnavailable", len(dst), held, n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := a.NextN(ctx, dst); n != 0 || err == nil {
		t.Fatalf("NextN(%d, cancelled ctx) with the store down = %d, %v; want 0 and an error", len(dst), n, err)
	}
	if got := a.Stats().Remaining; got != held {
		t.Fatalf("Stats().Remaining after the failed NextN = %d; want the %d held before", got, held)
	}
	during, err := drain(t, a, int(held))
	if int64(len(during)) != held || !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("Next() after the failed NextN gave %d IDs, then %v; want the %d held, then ErrUnavailable", len(during), err, held)
	}
	all := append(before, during...)
	increasing(t, "IDs across the failed NextN", all)
	noDuplicates(t, all)
}

// TestStaleKickFetchesNothing: a kick left over from the segment before (a
// segment's trigger and then its switch both kick the fetcher) must not
// fetch the next segment before the current one passes its trigger. It
// did, on a busy machine, when the switch came before the fetcher read the
// leftover kick: the step followed from the current segment's life so far,
// next to nothing, and doubled (TestDynamicStep: steps [... 100 50 100]
// where the 1 h phase wanted 25).
func TestStaleKickFetchesNothing(t *testing.T) {
	dsn := redisDSN(t)
	tag := uniqueTag(t, dsn)
	initTag(t, dsn, tag, 100)
	var mu sync.Mutex
	var steps []int64
	a := dial(t, dsn, segment.Config{
		Tag: tag, MinStep: 25, MaxStep: 400, Prefetch: 1, FixedPrefetch: true,
		Clock: idgentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		OnFetch: func(f segment.Fetch) {
			mu.Lock()
			steps = append(steps, f.Step)
			mu.Unlock()
		},
	})
	take(t, a, 10) // the first segment's trigger is its last ID, 99
	if !a.StaleKick() {
		t.Fatal("the fetcher did not handle a kick within a minute")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(steps, []int64{0}) {
		t.Fatalf("steps fetched after a kick before the trigger = %v; want [0], the first segment alone", steps)
	}
}
