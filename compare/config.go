package compare

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/idgenkit/idgen/strategies"
)

// Defaults of Config's zero values.
const (
	DefaultRows          = 1_000_000
	DefaultWriters       = 4
	DefaultBatch         = 1000
	DefaultSharedBuffers = "128MB"
)

// Limits on Config's numbers, refused with ErrBadInput beyond them.
const (
	MaxWriters = 256
	MaxBatch   = 1_000_000
)

// Names of the two rows that are not strategies.
const (
	// Baseline is the bigserial identity baseline: the server fills the key
	// from a sequence. Every run includes it; ratios are relative to it.
	Baseline = "bigserial"
	// Reference is the plain INSERT ... SELECT generate_series of the same
	// rows into a bigserial table, timed in the same run.
	Reference = "generate_series"
)

// Errors. Each is wrapped with the input or server at fault.
var (
	// ErrBadInput reports a Config the run refuses before touching any
	// database: rows ≤ 0, an unknown strategy or key, a bad size.
	ErrBadInput = errors.New("compare: invalid input")
	// ErrConnect reports a PostgreSQL server that cannot be reached.
	ErrConnect = errors.New("compare: cannot connect to PostgreSQL")
	// ErrNoPostgres reports that the PostgreSQL server binaries (initdb,
	// pg_ctl, postgres) needed for the throwaway cluster are not installed.
	ErrNoPostgres = errors.New("compare: PostgreSQL server binaries not found")
)

// Config configures Run. Every zero value is usable.
type Config struct {
	// Strategies are the specs to compare, as for strategies.New
	// ("snowflake?preset=twitter", "uuidv7"). Nil or empty means
	// DefaultStrategies(). The Baseline is always run first, whether listed
	// or not.
	Strategies []string
	// Rows is the number of rows of the measured phase. Zero means
	// DefaultRows (1,000,000); negative is refused.
	Rows int
	// Writers is the number of concurrent writers, each with its own
	// connection, generator and worker ID. Zero means DefaultWriters (4);
	// at most MaxWriters.
	Writers int
	// Batch is the number of rows per COPY; 1 means single-row autocommit
	// INSERTs. Zero means DefaultBatch (1000); at most MaxBatch.
	Batch int
	// Preload is the number of rows inserted before CHECKPOINT and the
	// measured phase. Zero means none.
	Preload int
	// DSN names an existing PostgreSQL server (URL or key=value form).
	// Empty means a throwaway cluster provisioned by StartCluster.
	DSN string
	// Schema names the schema the run creates for its tables; it must not
	// exist. Empty means "idgen_compare_" and a random suffix.
	Schema string
	// Keep keeps the tables (and, without a DSN, the cluster's directory)
	// after the run. False drops each table once measured and the schema at
	// the end.
	Keep bool
	// SharedBuffers is the throwaway cluster's shared_buffers, in
	// PostgreSQL's units ("128MB", "1GB"). Empty means DefaultSharedBuffers.
	// It must be empty with a DSN: the server's own setting applies.
	SharedBuffers string
	// Progress follows the run. Nil means silent.
	Progress Progress
}

// DefaultStrategies returns the specs of every registered strategy that
// needs no external store, sorted by name: the default set of a run.
func DefaultStrategies() []string {
	var specs []string
	for _, s := range strategies.List() {
		if !s.External {
			specs = append(specs, s.Name)
		}
	}
	return specs
}

var sizeRE = regexp.MustCompile(`^[0-9]+(kB|MB|GB|TB)?$`)
var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func badInput(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, args...))
}

// resolve checks cfg's numbers and fills the defaults.
func (cfg Config) resolve() (Config, error) {
	if cfg.Rows == 0 {
		cfg.Rows = DefaultRows
	}
	if cfg.Writers == 0 {
		cfg.Writers = DefaultWriters
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultBatch
	}
	switch {
	case cfg.Rows < 0:
		return cfg, badInput("rows %d: want a positive number of rows", cfg.Rows)
	case cfg.Writers < 0 || cfg.Writers > MaxWriters:
		return cfg, badInput("writers %d: want 1 to %d", cfg.Writers, MaxWriters)
	case cfg.Batch < 0 || cfg.Batch > MaxBatch:
		return cfg, badInput("batch %d: want 1 to %d rows", cfg.Batch, MaxBatch)
	case cfg.Preload < 0:
		return cfg, badInput("preload %d: want 0 or more rows", cfg.Preload)
	case cfg.DSN != "" && cfg.SharedBuffers != "":
		return cfg, badInput("shared buffers %q: only the throwaway cluster's can be set; with a DSN the server's setting applies", cfg.SharedBuffers)
	case cfg.SharedBuffers != "" && !sizeRE.MatchString(cfg.SharedBuffers):
		return cfg, badInput("shared buffers %q: want a size such as 128MB or 1GB (units kB, MB, GB, TB)", cfg.SharedBuffers)
	case cfg.Schema != "" && !schemaRE.MatchString(cfg.Schema):
		return cfg, badInput("schema %q: want a lower-case identifier (a-z, 0-9, _; at most 63)", cfg.Schema)
	}
	if cfg.DSN == "" && cfg.SharedBuffers == "" {
		cfg.SharedBuffers = DefaultSharedBuffers
	}
	if len(cfg.Strategies) == 0 {
		cfg.Strategies = DefaultStrategies()
	}
	var specs []string
	for _, s := range cfg.Strategies {
		s = strings.TrimSpace(s)
		switch s {
		case "":
			return cfg, badInput("empty strategy spec in %q", strings.Join(cfg.Strategies, ","))
		case Baseline:
			continue // always run first
		case Reference:
			return cfg, badInput("%q is the reference row, always run; not a strategy", Reference)
		}
		specs = append(specs, s)
	}
	cfg.Strategies = specs
	return cfg, nil
}

// SplitSpecs splits a comma-separated list of specs, as the --strategies
// flag gives it. A comma inside a spec's query, as in a layout
// ("snowflake?layout=time:41,worker:10,sequence:12"), stays in the spec:
// after a '?', a comma starts a new spec only when a strategy name (or
// Baseline) follows it.
func SplitSpecs(list string) []string {
	var specs []string
	for seg := range strings.SplitSeq(list, ",") {
		if n := len(specs); n > 0 && strings.Contains(specs[n-1], "?") && !startsWithName(seg) {
			specs[n-1] += "," + seg
			continue
		}
		specs = append(specs, seg)
	}
	return specs
}

func startsWithName(seg string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(seg), "?")
	if name == Baseline {
		return true
	}
	_, ok := strategies.Lookup(name)
	return ok
}
