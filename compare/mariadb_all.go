package compare

import (
	"context"
	"fmt"
	"time"
)

// runAll is Run for EngineAll: the same rows on a throwaway PostgreSQL
// cluster, then on a throwaway MariaDB server, with the same seed (the
// same shuffled order in both), merged into one Report whose Results and
// Trials hold PostgreSQL's rows, then MariaDB's, each with its Engine.
// Ratios are to the Baseline of the same engine. The Report's Harness is
// PostgreSQL's; MariaDB's verdict is in the Notes.
func runAll(ctx context.Context, cfg Config) (*Report, error) {
	record := cfg.record()
	cfg.Seed = runSeed(cfg.Seed)
	pcfg, mcfg := cfg, cfg
	pcfg.Engine, mcfg.Engine = EnginePostgres, EngineMariaDB
	pg, err := Run(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	my, err := Run(ctx, mcfg)
	if err != nil {
		return nil, err
	}
	rep := *pg
	rep.Engine = EngineAll
	rep.Config = record
	rep.Server = pg.Server + "; " + my.Server
	rep.ServerVersion = pg.ServerVersion + "; " + my.ServerVersion
	rep.BufferPool = my.BufferPool
	rep.Schema = pg.Schema + "; " + my.Schema
	rep.Trials = append(append([][]Result{}, pg.Trials...), my.Trials...)
	rep.Elapsed = time.Since(pg.Started)
	rep.Notes = append(append([]string{}, pg.Notes...), my.Notes...)
	rep.Summarize()
	if hc := my.Harness; hc != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("MariaDB harness check: %s, %.2f× %s: %s", hc.Verdict, hc.Ratio.Median, ciText(&hc.Ratio.CI, "%.2f"), hc.Meaning))
	}
	return &rep, nil
}

// RowName is how tables and charts name row x: its Strategy, prefixed by
// its engine in a report of both engines ("mariadb uuidv4").
func (r *Report) RowName(x *Result) string {
	if r.Engine == EngineAll {
		return x.Engine + " " + x.Strategy
	}
	return x.Strategy
}

// baselineOf returns the Baseline's Result of x's engine, or nil.
func (r *Report) baselineOf(x *Result) *Result {
	for i := range r.Results {
		if b := &r.Results[i]; b.Strategy == Baseline && b.Engine == x.Engine {
			return b
		}
	}
	return nil
}
