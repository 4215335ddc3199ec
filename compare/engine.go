package compare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/stats"
)

// An engine is one database engine as the run drives it: PostgreSQL
// (pgEngine) or MariaDB/InnoDB (myEngine). Run owns the rounds, the
// trials' phases, the samples and reads, and the summary; an engine only
// speaks to its server.
type engine interface {
	// connect opens the meta connection and the writers' on the server,
	// reads its settings into rep and sc, finds what it can measure and
	// creates the run's schema (PostgreSQL) or database (MariaDB).
	connect(ctx context.Context, rep *Report, sc *Scenario) error
	// warmUp sends a batch of each kind of row per writer into a scratch
	// table, so that the first row measured does not pay for the
	// connections' first statements.
	warmUp(ctx context.Context, rows []*plan) error
	// createTable creates the table name of row p, of the run's shape.
	createTable(ctx context.Context, name string, p *plan) (*table, error)
	// dropTable drops it.
	dropTable(ctx context.Context, t *table) error
	// load inserts n rows into t, keys from first, with every writer
	// (HarnessWriters for the harness check's rows).
	load(ctx context.Context, p *plan, t *table, first int64, n int, onRows func(int)) (phaseResult, error)
	// before starts the measured phase of t (a CHECKPOINT on PostgreSQL)
	// and reads the counters; after reads them again when it is over and
	// fills res's figures from both.
	before(ctx context.Context, t *table) (snapshot, error)
	after(ctx context.Context, t *table, p *plan, b snapshot, res *Result) error
	// target opens t for the reads after the inserts.
	target(ctx context.Context, t *table, p *plan) (readTarget, error)
	// result returns the Result of a trial of p before its figures: the
	// engine's column, method and names.
	result(p *plan) Result
	// close drops the run's schema or database (unless Keep) and closes
	// the connections.
	close()
}

// A table is one row's table in one round.
type table struct {
	name   string // unqualified: t01_snowflake
	quoted string // schema-qualified and quoted, for SQL
	id     ident  // PostgreSQL's OIDs; zero on MariaDB
}

// A snapshot is an engine's counters before a measured phase.
type snapshot interface{}

// A releaser is a snapshot that holds something on the server until it is
// released (PostgreSQL's temporary replication slot): runOne releases it
// when the measured phase fails before after runs, because the server
// drops a temporary slot only when its session has ended, some time after
// the engine closes it. release may run more than once.
type releaser interface{ release() }

// harness holds what every engine's run shares: the Config, the progress,
// the payload, the notes, the seed, the simulated clock and the sample of
// the current trial's keys.
type harness struct {
	cfg     Config
	prog    Progress
	payload []byte
	notes   []string
	noted   map[string]bool
	seed    uint64
	clock   clock   // Config.Span's simulated clock
	sample  *sample // the keys kept for the reads; nil when off
}

func (h *harness) note(format string, args ...any) {
	msg := redact.Spec(fmt.Sprintf(format, args...))
	h.notes = append(h.notes, msg)
	h.prog.Note(msg)
}

func (h *harness) noteOnce(key, format string, args ...any) {
	if !h.noted[key] {
		h.noted[key] = true
		h.note(format, args...)
	}
}

// Run compares the strategies of cfg on each engine (cfg.Engine) and in
// each scenario (cfg.Scenarios): on cfg.DSN, or on throwaway servers it
// starts and removes, and returns the report. Input errors wrap
// ErrBadInput and are returned before any database is touched; an
// unreachable server wraps ErrConnect or ErrConnectMariaDB; missing server
// binaries for a throwaway server wrap ErrNoPostgres or ErrNoMariaDB.
// Metrics a server cannot give are left out with a note, and the run goes
// on. A cancelled ctx ends the run with its cause and every server stopped.
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	defer func() {
		if err != nil && ctx.Err() != nil {
			rep, err = nil, context.Cause(ctx) // cancelled: say only that, not what the cancel broke
		}
	}()
	cfg, err = cfg.resolve()
	if err != nil {
		return nil, err
	}
	prog := cfg.Progress
	if prog == nil {
		prog = nopProgress{}
		cfg.Progress = prog
	}
	plans, notes, err := buildPlans(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closePlans(plans)
	if cfg.DSN == "" {
		if removed, err := removeStale(); len(removed) > 0 || err != nil {
			cfg.logger().Info("removed throwaway servers whose owner is gone", "dirs", removed, "err", err)
		}
	}
	rep = newReport(cfg, prog)
	h := &harness{cfg: cfg, prog: prog, payload: newPayload(), noted: map[string]bool{}, seed: rep.Seed,
		clock: clock{start: rep.Started.Add(-cfg.Span * time.Duration(cfg.Runs)), span: cfg.Span, total: int64(cfg.Preload + cfg.Rows)}}
	if cfg.Span > 0 {
		notes = append(notes, spanNote(plans)...)
	}
	for _, n := range notes {
		h.note("%s", n)
	}
	for _, eng := range cfg.engines() {
		for _, scenario := range cfg.scenarios() {
			if err := h.runScenario(ctx, rep, eng, scenario, plans); err != nil {
				return nil, err
			}
		}
	}
	rep.Summarize()
	rep.Elapsed = time.Since(rep.Started)
	rep.Notes = h.notes
	return rep, nil
}

// runScenario runs every round of rows on engine eng in one scenario, on
// a throwaway server started for it or on cfg.DSN, and appends the trials
// and the scenario to rep.
func (h *harness) runScenario(ctx context.Context, rep *Report, eng, scenario string, plans []*plan) error {
	sc := &Scenario{Engine: eng, Name: scenario}
	rows := reportRows(plans, eng)
	var e engine
	var stop func()
	var err error
	switch eng {
	case EngineMariaDB:
		e, stop, err = h.startMariaDB(ctx, rep, sc)
	default:
		e, stop, err = h.startPostgres(ctx, rep, sc, rows)
	}
	if err != nil {
		return err
	}
	defer stop()
	defer e.close()
	if err := e.connect(ctx, rep, sc); err != nil {
		return err
	}
	rows, err = h.serverRows(rows, sc)
	if err != nil {
		return err
	}
	if err := e.warmUp(ctx, rows); err != nil {
		return err
	}
	h.checkDirectIO(sc)
	rep.Scenarios = append(rep.Scenarios, *sc)
	trials, err := h.runRounds(ctx, e, sc, rows)
	if err != nil {
		return err
	}
	rep.Trials = append(rep.Trials, trials...)
	return nil
}

// reportRows returns the rows of a run on eng in report order: the
// Baseline (plans[0]), the harness check's two rows, then the strategies
// (the server-generated rows only on PostgreSQL).
func reportRows(plans []*plan, eng string) []*plan {
	rows := []*plan{plans[0],
		{spec: ClientSeries, label: ClientSeries, name: ClientSeries, column: idgen.ColumnBigint, keyBytes: 8, series: true},
		{spec: Reference, label: Reference, name: Reference, column: idgen.ColumnBigint, keyBytes: 8, series: true, server: true}}
	for _, p := range plans[1:] {
		if p.serverKey != "" && eng != EnginePostgres {
			continue
		}
		rows = append(rows, p)
	}
	return rows
}

// runRounds runs Runs rounds of rows on e, each in an order shuffled by the
// PCG generator seeded with the seed, and returns the trials of each row
// in round order. Every engine and scenario gets the same orders.
func (h *harness) runRounds(ctx context.Context, e engine, sc *Scenario, rows []*plan) ([][]Result, error) {
	trials := make([][]Result, len(rows))
	rng := mrand.New(mrand.NewPCG(h.seed, 0))
	for round := 1; round <= h.cfg.Runs; round++ {
		order := rng.Perm(len(rows))
		names := make([]string, len(order))
		for i, k := range order {
			names[i] = rows[k].label
		}
		h.prog.Status(fmt.Sprintf("%s round %d of %d: %s", sc.label(), round, h.cfg.Runs, strings.Join(names, ", ")))
		for _, k := range order {
			res, err := h.runOne(ctx, e, round, max(0, k-2), rows[k])
			if err != nil {
				return nil, err
			}
			res.Round, res.Scenario = round, sc.Name
			h.cfg.logger().Debug("trial measured", "row", res.Strategy, "engine", res.Engine, "scenario", sc.Name, "round", round, "rows_per_sec", res.RowsPerSec)
			trials[k] = append(trials[k], res)
		}
	}
	return trials, nil
}

// runOne measures one trial of p on a fresh table: preload, the measured
// phase between the engine's counters, then the reads.
func (h *harness) runOne(ctx context.Context, e engine, round, i int, p *plan) (Result, error) {
	cfg := h.cfg
	h.clock.round = round
	res := e.result(p)
	res.Strategy, res.WorkerKey, res.KeyBytes, res.Facts = p.label, p.workerKey, p.keyBytes, factsOf(p, p.external)
	res.Rows, res.Writers, res.Batch, res.Preload = cfg.Rows, writersOf(p, cfg.Writers), cfg.Batch, cfg.Preload
	t, err := e.createTable(ctx, tableName(i, round, p.name), p)
	if err != nil {
		return res, fmt.Errorf("%s: creating table: %w", p.label, err)
	}
	if !cfg.Keep {
		defer func() {
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := e.dropTable(c, t); err != nil && ctx.Err() == nil {
				h.prog.Note(fmt.Sprintf("dropping %s: %v", t.quoted, err))
			}
		}()
	}
	h.sample = h.startSample(p, round, i)
	defer func() { h.sample = nil }()
	if cfg.Preload > 0 {
		h.prog.Phase(p.label, "preload", cfg.Preload)
		ph, err := e.load(ctx, p, t, 1, cfg.Preload, h.prog.Rows)
		if err != nil {
			return res, err
		}
		h.prog.PhaseDone(ph.elapsed)
	}
	before, err := e.before(ctx, t)
	if err != nil {
		return res, fmt.Errorf("%s: %w", p.label, err)
	}
	if r, ok := before.(releaser); ok {
		defer r.release()
	}
	h.prog.Phase(p.label, "measure", cfg.Rows)
	ph, err := e.load(ctx, p, t, int64(cfg.Preload)+1, cfg.Rows, h.prog.Rows)
	if err != nil {
		return res, err
	}
	h.prog.PhaseDone(ph.elapsed)
	res.Seconds = ph.elapsed.Seconds()
	res.RowsPerSec = float64(cfg.Rows) / ph.elapsed.Seconds()
	res.RowsPerSecTenths = ph.tenths
	if len(ph.latencies) > 0 {
		res.P50Ms = ptr(stats.Percentile(ph.latencies, 0.50))
		res.P99Ms = ptr(stats.Percentile(ph.latencies, 0.99))
	}
	if err := e.after(ctx, t, p, before, &res); err != nil {
		return res, fmt.Errorf("%s: %w", p.label, err)
	}
	res.IndexBytesPerRow = float64(res.IndexBytes) / float64(cfg.Preload+cfg.Rows)
	if err := h.readBack(ctx, p, &res, round, i, func() (readTarget, error) { return e.target(ctx, t, p) }); err != nil {
		return res, err
	}
	res.Unavailable = unavailable(&res)
	return res, nil
}

// tableName names the table of row i (0 for the Baseline and the harness
// check) in round (1, 2, ...): t01_snowflake, then t01_r2_snowflake.
func tableName(i, round int, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t%02d_", i)
	if round > 1 {
		fmt.Fprintf(&b, "r%d_", round)
	}
	for _, r := range strings.ToLower(name) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// newReport starts the Report of a run: its settings, the seed (cfg.Seed,
// or a random one, printed) and the start time.
func newReport(cfg Config, prog Progress) *Report {
	seed := runSeed(cfg.Seed)
	rep := &Report{Engine: cfg.Engine, Rows: cfg.Rows, Writers: cfg.Writers, Batch: cfg.Batch, Preload: cfg.Preload,
		Runs: cfg.Runs, Seed: seed, StatsMethod: StatsMethod, Started: time.Now(), Config: cfg.record(), Machine: ThisMachine()}
	cfg.recordReads(&rep.Config)
	prog.Status(fmt.Sprintf("%s, seed %d (%s %d repeats the order)", plural(cfg.Runs, "round"), seed, cfg.name("Config.Seed"), seed))
	return rep
}

// plural writes n and noun, with an s unless n is 1: "1 round", "3 rounds".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// startThrowaway starts a run's throwaway server (what: "PostgreSQL
// cluster", "MariaDB server"; setting: its cache setting) with start,
// printing what it starts, and returns it with the function that stops
// it: a failure to stop is logged and noted, the run's result stands.
func startThrowaway[S interface {
	Dir() string
	Stop() error
}](cfg Config, what, setting string, start func() (S, error)) (S, func(), error) {
	cfg.Progress.Status(fmt.Sprintf("starting a throwaway %s (%s)", what, setting))
	srv, err := start()
	if err != nil {
		var none S
		return none, nil, err
	}
	cfg.logger().Info("throwaway "+what+" started", "dir", srv.Dir(), "setting", setting)
	return srv, func() {
		if err := srv.Stop(); err != nil {
			cfg.logger().Warn("stopping the throwaway "+what, "dir", srv.Dir(), "err", err)
			cfg.Progress.Note(err.Error())
		}
	}, nil
}

// createUnique creates the run's schema or database (what) with create:
// named fixed (Config.Schema), refused when it exists, or
// "idgen_compare_" and a random suffix, tried three times.
func createUnique(fixed, what string, create func(name string) (exists bool, err error)) (string, error) {
	for try := 0; ; try++ {
		name := fixed
		if fixed == "" {
			var b [4]byte
			rand.Read(b[:])
			name = "idgen_compare_" + hex.EncodeToString(b[:])
		}
		exists, err := create(name)
		switch {
		case exists && fixed != "":
			return "", badInput("%s %q already exists; the run only uses a %s it creates", what, name, what)
		case exists && try < 3:
			continue
		case err != nil:
			return "", fmt.Errorf("compare: creating %s %s: %w", what, name, err)
		}
		return name, nil
	}
}

// A rowShape is how an engine names a row's key column and loading
// method: the column of the strategies' keys and of the Baseline's, the
// method of batches (Batch > 1) and of the harness check's ClientSeries.
type rowShape struct {
	engine, column, baselineColumn, method, seriesMethod string
}

// newResult returns the Result of a trial of p on an engine of shape s,
// before its figures.
func (h *harness) newResult(p *plan, s rowShape) Result {
	res := Result{Engine: s.engine, Scheme: p.name, Column: s.column, Method: s.method}
	switch {
	case p.series:
		res.Scheme = "bigint"
	case p.scheme == nil:
		res.Scheme, res.Column = Baseline, s.baselineColumn
	default:
		res.Scheme = p.scheme.Name
	}
	switch {
	case p.server:
		res.Method = "insert-select"
	case h.cfg.Batch == 1:
		res.Method = "insert"
	case p.series:
		res.Method = s.seriesMethod
	}
	return res
}
