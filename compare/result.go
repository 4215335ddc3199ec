package compare

import (
	"time"

	"github.com/idgenkit/idgen/internal/redact"
)

// A Result is what one strategy's measured phase cost. The package doc
// gives each metric's source and unit. Pointer fields are nil when the
// metric could not be measured; Unavailable names them.
type Result struct {
	Strategy string `json:"strategy"` // the spec as given, passwords masked (redact.Spec); Baseline or Reference
	Scheme   string `json:"scheme"`   // the scheme's name; "bigserial" for both server-filled rows
	Column   string `json:"column"`   // the key's column type
	Method   string `json:"method"`   // "copy", "insert" (batch 1) or "insert-select" (Reference)
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

	// Unavailable lists the JSON names of the metrics left nil.
	Unavailable []string `json:"unavailable,omitempty"`
}

// A Report is a whole run: its settings, one Result per row (Baseline
// first, then Reference, then the strategies in the order given) and notes
// on what could not be measured.
type Report struct {
	Server        string        `json:"server"`         // version()
	SharedBuffers string        `json:"shared_buffers"` // the server's setting
	Throwaway     bool          `json:"throwaway"`      // a cluster provisioned by the run
	Schema        string        `json:"schema"`         // where the tables were
	Rows          int           `json:"rows"`
	Writers       int           `json:"writers"`
	Batch         int           `json:"batch"`
	Preload       int           `json:"preload"`
	Elapsed       time.Duration `json:"elapsed_ns"`
	Results       []Result      `json:"results"`
	Notes         []string      `json:"notes,omitempty"`
}

// Find returns the Result of strategy (a spec as given, with or without
// its passwords masked, Baseline or Reference), or nil.
func (r *Report) Find(strategy string) *Result {
	strategy = redact.Spec(strategy)
	for i := range r.Results {
		if r.Results[i].Strategy == strategy {
			return &r.Results[i]
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
