package workerid_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// TestCutStopsEveryHolder cuts the store under four holders and measures
// how long each keeps issuing: every one must fail with ErrLeaseLost
// within LostAfter of the cut (its last renewal started before it).
func TestCutStopsEveryHolder(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			addr, p := b.via(t)
			cfg := fast(32)
			const holders = 4
			gens := make([]*snowflake.Generator, holders)
			for i := range gens {
				s := mustOpen(t, b, addr, cfg)
				// No HighWater store: its writes would go through the cut
				// proxy; the lease alone decides.
				g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s})
				if err != nil {
					t.Fatalf("snowflake.New() = %v", err)
				}
				gens[i] = g
			}
			cut := time.Now()
			p.Cut()
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				worst time.Duration
			)
			for i, g := range gens {
				wg.Go(func() {
					for {
						_, err := g.Next(context.Background())
						if errors.Is(err, idgen.ErrLeaseLost) {
							break
						}
						if err != nil {
							t.Errorf("holder %d: Next() = %v; want an ID or ErrLeaseLost", i, err)
							return
						}
						if time.Since(cut) > cfg.TTL {
							t.Errorf("holder %d still issues %v after the cut (TTL %v)", i, time.Since(cut), cfg.TTL)
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
					mu.Lock()
					worst = max(worst, time.Since(cut))
					mu.Unlock()
				})
			}
			wg.Wait()
			if worst > cfg.LostAfter+100*time.Millisecond {
				t.Fatalf("last holder stopped %v after the cut; want within LostAfter %v", worst, cfg.LostAfter)
			}
			t.Logf("%s: %d holders stopped issuing within %v of the cut (LostAfter %v, TTL %v)", bk.name, holders, worst.Round(time.Millisecond), cfg.LostAfter, cfg.TTL)
		})
	}
}

// TestNoDuplicatesAcrossRestarts restarts nodes on one worker ID, one after
// the other, each issuing a burst: no ID repeats.
func TestNoDuplicatesAcrossRestarts(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.setup(t)
			cfg := fast(1)
			// The generators' clock: the next node waits out the mark the
			// last one left on it at once.
			clk := idgentest.NewClock(time.Now())
			seen := map[idgen.ID]bool{}
			for restart := range 5 {
				s := mustOpen(t, b, b.addr, cfg)
				g, err := snowflake.New(context.Background(), snowflake.Config{Lease: s, HighWater: s, Rollback: snowflake.Wait, Clock: clk})
				if err != nil {
					t.Fatalf("snowflake.New() = %v", err)
				}
				for range 2000 {
					id, err := g.Next(context.Background())
					if err != nil {
						t.Fatalf("restart %d: Next() = %v", restart, err)
					}
					if seen[id] {
						t.Fatalf("restart %d: ID %v issued twice", restart, id)
					}
					seen[id] = true
				}
				if err := s.Close(); err != nil {
					t.Fatalf("Close() = %v", err)
				}
			}
		})
	}
}
