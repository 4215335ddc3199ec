package compare

import (
	"context"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
)

// reportRows returns the rows of a run in report order: the Baseline
// (plans[0]), the harness check's two rows, then the strategies.
func reportRows(plans []*plan) []*plan {
	rows := []*plan{plans[0],
		{spec: ClientSeries, label: ClientSeries, name: ClientSeries, column: idgen.ColumnBigint, keyBytes: 8, series: true},
		{spec: Reference, label: Reference, name: Reference, column: idgen.ColumnBigint, keyBytes: 8, series: true, server: true}}
	return append(rows, plans[1:]...)
}

// runRounds runs runs rounds of rows, each in an order shuffled by the
// PCG generator seeded with seed, and returns the trials of each row in
// round order. runOne measures one row on a fresh table; its table index
// is 0 for the first three rows (Baseline and harness check).
func runRounds(ctx context.Context, prog Progress, log *slog.Logger, runs int, seed uint64, rows []*plan,
	runOne func(ctx context.Context, round, i int, p *plan) (Result, error)) ([][]Result, error) {
	index := func(k int) int { return max(0, k-2) }
	trials := make([][]Result, len(rows))
	rng := mrand.New(mrand.NewPCG(seed, 0))
	for round := 1; round <= runs; round++ {
		order := rng.Perm(len(rows))
		names := make([]string, len(order))
		for i, k := range order {
			names[i] = rows[k].label
		}
		prog.Status(fmt.Sprintf("round %d of %d: %s", round, runs, strings.Join(names, ", ")))
		for _, k := range order {
			res, err := runOne(ctx, round, index(k), rows[k])
			if err != nil {
				return nil, err
			}
			res.Round = round
			log.Debug("trial measured", "row", res.Strategy, "engine", res.Engine, "round", round, "rows_per_sec", res.RowsPerSec)
			trials[k] = append(trials[k], res)
		}
	}
	return trials, nil
}

// newReport starts the Report of a run on engine: its settings, the seed
// (cfg.Seed, or a random one, printed) and the start time.
func newReport(cfg Config, engine string, prog Progress) *Report {
	seed := runSeed(cfg.Seed)
	rep := &Report{Engine: engine, Rows: cfg.Rows, Writers: cfg.Writers, Batch: cfg.Batch, Preload: cfg.Preload,
		Runs: cfg.Runs, Seed: seed, StatsMethod: StatsMethod, Started: time.Now(), Config: cfg.record(), Machine: ThisMachine()}
	cfg.recordReads(&rep.Config)
	prog.Status(fmt.Sprintf("%d rounds, seed %d (Config.Seed %d repeats the order)", cfg.Runs, seed, seed))
	return rep
}

// startThrowaway starts a run's throwaway server (what: "PostgreSQL
// cluster", "MariaDB server"; setting: its cache setting) with start,
// printing what it starts, and returns it with the function that stops
// it: a failure to stop is logged and noted, the run's result stands.
func startThrowaway[S interface {
	Dir() string
	Stop() error
}](cfg Config, prog Progress, what, setting string, start func() (S, error)) (S, func(), error) {
	prog.Status(fmt.Sprintf("starting a throwaway %s (%s)", what, setting))
	srv, err := start()
	if err != nil {
		var none S
		return none, nil, err
	}
	cfg.logger().Info("throwaway "+what+" started", "dir", srv.Dir(), "setting", setting)
	return srv, func() {
		if err := srv.Stop(); err != nil {
			cfg.logger().Warn("stopping the throwaway "+what, "dir", srv.Dir(), "err", err)
			prog.Note(err.Error())
		}
	}, nil
}

// newHarness builds a run's harness: the payload, the seed and start of
// rep, the clock that Span runs on, and the run's notes, printed (with the
// span's when Span is set).
func newHarness(cfg Config, prog Progress, rep *Report, plans []*plan, notes []string) *harness {
	h := &harness{cfg: cfg, prog: prog, payload: newPayload(), noted: map[string]bool{}, seed: rep.Seed,
		clock: clock{start: rep.Started.Add(-cfg.Span * time.Duration(cfg.Runs)), span: cfg.Span, total: int64(cfg.Preload + cfg.Rows)}}
	if cfg.Span > 0 {
		notes = append(notes, spanNote(plans)...)
	}
	for _, n := range notes {
		h.note("%s", n)
	}
	return h
}

// finish runs the rounds of rows with runOne and completes rep: the
// trials, their summary, the run's wall time and its notes.
func (h *harness) finish(ctx context.Context, rep *Report, rows []*plan,
	runOne func(ctx context.Context, round, i int, p *plan) (Result, error)) (*Report, error) {
	trials, err := runRounds(ctx, h.prog, h.cfg.logger(), h.cfg.Runs, rep.Seed, rows, runOne)
	if err != nil {
		return nil, err
	}
	rep.Trials = trials
	rep.Summarize()
	rep.Elapsed = time.Since(rep.Started)
	rep.Notes = h.notes
	return rep, nil
}
