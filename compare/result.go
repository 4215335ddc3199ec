package compare

import (
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/stats"
)

// A Result is what one strategy's measured phase cost. The package doc
// gives each metric's source and unit. Pointer fields are nil when the
// metric could not be measured; Unavailable names them.
//
// Over several rounds, a Result of Report.Results gives each figure's
// median over its Trials (each one a Result of Report.Trials); the
// intervals and ratios come from the seeded bootstrap of StatsMethod.
type Result struct {
	Engine string `json:"engine"` // "postgres" or "mariadb"
	// Scenario is ScenarioInMemory or ScenarioOutOfMemory; empty on a
	// server given by DSN.
	Scenario string `json:"scenario,omitempty"`
	Strategy string `json:"strategy"` // the spec as given, passwords masked (redact.Spec); Baseline, ClientSeries or Reference
	Scheme   string `json:"scheme"`   // the scheme's name; "bigserial" for both server-filled rows
	Column   string `json:"column"`   // the key's column type
	Method   string `json:"method"`   // "copy", "insert" (batch 1), "insert-select" (Reference) or "insert-select unnest" / "insert-select json_table" (ClientSeries), "multi-row insert" (MariaDB)
	// Round is the round (1, 2, ...) of one trial; 0 in a summary.
	Round int `json:"round,omitempty"`
	// Trials is the number of trials summarized (0 in a trial).
	Trials int `json:"trials"`
	// WorkerKey is the spec key that gave each writer its own worker ID;
	// empty when the strategy has none.
	WorkerKey string `json:"worker_key,omitempty"`

	Rows     int `json:"rows"` // rows in the measured phase
	Writers  int `json:"writers"`
	Batch    int `json:"batch"`
	Preload  int `json:"preload"`
	KeyBytes int `json:"key_bytes"`

	Seconds          float64   `json:"seconds"`
	RowsPerSec       float64   `json:"rows_per_sec"`
	RowsPerSecTenths []float64 `json:"rows_per_sec_tenths"`
	P50Ms            *float64  `json:"p50_ms"`
	P99Ms            *float64  `json:"p99_ms"`

	// RowsPerSecTrials are the trials' rows/s, in round order.
	RowsPerSecTrials []float64 `json:"rows_per_sec_trials,omitempty"`
	// RowsPerSecCI, P50MsCI and P99MsCI are the 95 % intervals of the
	// medians ([lo, hi]), nil in a trial.
	RowsPerSecCI *Interval `json:"rows_per_sec_ci,omitempty"`
	P50MsCI      *Interval `json:"p50_ms_ci,omitempty"`
	P99MsCI      *Interval `json:"p99_ms_ci,omitempty"`
	// RatioToBaseline gives, for rows_per_sec, p50_ms, p99_ms, index_bytes
	// and wal_bytes, the median of the per-round ratios to the Baseline and
	// their 95 % interval. Nil for the Baseline and in a trial.
	RatioToBaseline map[string]Estimate `json:"ratio_to_baseline,omitempty"`
	// Spread gives, for the structural figures (which vary only with the
	// order the writers' keys arrive in), max - min over the trials: in points for the percentages
	// (avg_leaf_density, leaf_fragmentation), in % of the median for the
	// counts and sizes (index_bytes, table_bytes, leaf_pages, page_splits).
	Spread map[string]float64 `json:"spread,omitempty"`

	IndexBytes       int64   `json:"index_bytes"`
	TableBytes       int64   `json:"table_bytes"`
	IndexBytesPerRow float64 `json:"index_bytes_per_row"`

	LeafPages         *int64   `json:"leaf_pages"`
	AvgLeafDensity    *float64 `json:"avg_leaf_density"`
	LeafFragmentation *float64 `json:"leaf_fragmentation"`
	PageSplits        *int64   `json:"page_splits"`
	WALPageSplits     *int64   `json:"wal_page_splits"`

	WALBytes    int64  `json:"wal_bytes"`
	WALFPI      *int64 `json:"wal_fpi"`
	WALFPIBytes *int64 `json:"wal_fpi_bytes"`
	IdxBlksRead *int64 `json:"idx_blks_read"`
	IdxBlksHit  *int64 `json:"idx_blks_hit"`
	// DeviceReads and DeviceWrites are the data pages read from and
	// written to the files over the measured phase, server-wide
	// (PostgreSQL 16 or later: pg_stat_io; InnoDB: Innodb_pages_read and
	// Innodb_pages_written); nil when the server cannot tell. Only with
	// direct I/O (Scenario.DirectIO) are they the device's.
	DeviceReads  *int64 `json:"device_reads,omitempty"`
	DeviceWrites *int64 `json:"device_writes,omitempty"`

	// InnoDB's own figures (engine "mariadb"); nil for PostgreSQL.
	SecondaryIndexBytes    *int64 `json:"secondary_index_bytes,omitempty"`
	PageMerges             *int64 `json:"page_merges,omitempty"`
	BufferPoolReads        *int64 `json:"buffer_pool_reads,omitempty"`
	BufferPoolReadRequests *int64 `json:"buffer_pool_read_requests,omitempty"`
	// LeafFillSource says where avg_leaf_density's data bytes come from
	// (engine "mariadb").
	LeafFillSource string `json:"leaf_fill_source,omitempty"`
	// Reads are the reads after the inserts, by kind (ReadPoint,
	// ReadRecent, ReadRange); nil when they are off, and for the harness
	// check's rows.
	Reads map[string]*Reads `json:"reads,omitempty"`
	// IndexFitsCache reports whether the index (index_bytes) fits in
	// shared_buffers: whether the reads ran with the index in memory. Nil
	// when shared_buffers is unknown.
	IndexFitsCache *bool `json:"index_fits_cache,omitempty"`

	// Facts are what the scheme is, whatever it costs: for the decision
	// table. Nil for the harness check's rows.
	Facts *Facts `json:"facts,omitempty"`

	// Unavailable lists the JSON names of the metrics left nil.
	Unavailable []string `json:"unavailable,omitempty"`
}

// A Report is a whole run: its settings, one Result per row (Baseline
// first, then ClientSeries and Reference, the harness check's rows, then
// the strategies in the order given), each the summary of its trials, and
// notes on what could not be measured.
type Report struct {
	Engine        string        `json:"engine"`                // EnginePostgres, EngineMariaDB or EngineAll
	Server        string        `json:"server"`                // version()
	ServerVersion string        `json:"server_version"`        // server_version, e.g. "17.2 (Debian 17.2-1.pgdg120+1)"
	SharedBuffers string        `json:"shared_buffers"`        // the server's setting
	BufferPool    string        `json:"buffer_pool,omitempty"` // innodb_buffer_pool_size (engine "mariadb")
	Throwaway     bool          `json:"throwaway"`             // a cluster provisioned by the run
	Schema        string        `json:"schema"`                // where the tables were
	Rows          int           `json:"rows"`
	Writers       int           `json:"writers"`
	Batch         int           `json:"batch"`
	Preload       int           `json:"preload"`
	Elapsed       time.Duration `json:"elapsed_ns"`
	Results       []Result      `json:"results"`
	Notes         []string      `json:"notes,omitempty"`

	Runs        int          `json:"runs"`
	Seed        uint64       `json:"seed"` // the seed used: Config.Seed, or the random one
	StatsMethod string       `json:"stats_method"`
	Started     time.Time    `json:"started"`
	Config      ConfigRecord `json:"config"`
	Machine     Machine      `json:"machine"`
	// Trials holds every trial, Trials[k] those of Results[k] in round
	// order.
	Trials [][]Result `json:"-"`
	// Harness is the harness check's verdict; nil without its rows.
	Harness *HarnessCheck `json:"harness_check,omitempty"`
	// HarnessChecks are the harness check of each engine and scenario;
	// Harness is the first.
	HarnessChecks []HarnessCheck `json:"harness_checks,omitempty"`
	// Scenarios are the engines and buffers the rows ran in, in run order.
	Scenarios []Scenario `json:"scenarios,omitempty"`
	// Warnings name the figures the trials disagree on: a coefficient of
	// variation above MaxCV (a busy machine or short trials), or a spread above
	// MaxSpread of a structural figure (the order of the writers' keys).
	Warnings []string `json:"warnings,omitempty"`
}

// EnginePostgres is the engine of a PostgreSQL run.
const EnginePostgres = "postgres"

// addServer adds a server's version() and server_version to the report,
// once each ("; " between engines).
func (r *Report) addServer(server, version string) {
	if !strings.Contains(r.Server, server) {
		r.Server = joinNonEmpty(r.Server, server)
		r.ServerVersion = joinNonEmpty(r.ServerVersion, version)
	}
}

// addSchema adds the name of a schema or database the run used.
func (r *Report) addSchema(name string) { r.Schema = joinNonEmpty(r.Schema, name) }

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Interval and Estimate are the statistics' types (internal/stats): a 95 %
// confidence interval [lo, hi], and a median with its interval.
type (
	Interval = stats.Interval
	Estimate = stats.Estimate
)

// Find returns the Result of strategy in the scenario and engine of the
// first Result (see FindIn), or nil.
func (r *Report) Find(strategy string) *Result {
	if len(r.Results) == 0 {
		return nil
	}
	return r.FindIn(r.Results[0].Engine, r.Results[0].Scenario, strategy)
}

// FindIn returns the Result of strategy (a spec as given, with or without
// its passwords masked, Baseline, ClientSeries or Reference) on engine in
// scenario, or nil.
func (r *Report) FindIn(engine, scenario, strategy string) *Result {
	strategy = redact.Spec(strategy)
	for i := range r.Results {
		if x := &r.Results[i]; x.Strategy == strategy && x.Engine == engine && x.Scenario == scenario {
			return x
		}
	}
	return nil
}

// BaselineOf returns the Baseline's Result of x's engine and scenario, or
// nil.
func (r *Report) BaselineOf(x *Result) *Result {
	return r.FindIn(x.Engine, x.Scenario, Baseline)
}

// Groups returns the engine and scenario pairs of the Results, in order.
func (r *Report) Groups() [][2]string {
	var out [][2]string
	for _, x := range r.Results {
		g := [2]string{x.Engine, x.Scenario}
		if len(out) == 0 || out[len(out)-1] != g {
			out = append(out, g)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
