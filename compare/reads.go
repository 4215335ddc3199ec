package compare

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/idgenkit/idgen/internal/stats"
	"github.com/jackc/pgx/v5"
)

// Bounds of the reads after the inserts.
const (
	// DefaultReadOps is the most reads of each kind per trial.
	DefaultReadOps = 1000
	// MaxReadOps is the largest Config.ReadOps.
	MaxReadOps = 1_000_000
	// DefaultReadTime bounds each kind's reads per trial.
	DefaultReadTime = 500 * time.Millisecond
	// SampleSize is how many keys of the rows, and how many of the newest
	// 1 % of the rows, the harness keeps for the reads.
	SampleSize = 4096
)

// Kinds of read, the keys of Result.Reads.
const (
	// ReadPoint is a point lookup (SELECT by primary key) of a uniformly
	// random existing key.
	ReadPoint = "point"
	// ReadRecent is a point lookup of a key among the newest 1 % of the
	// rows.
	ReadRecent = "recent"
	// ReadRange reads, by primary key order from a random existing key, as
	// many rows as were created in one second: Rows / the trial's insert
	// seconds, or with Config.Span, rows / the span's seconds. Only for
	// rows whose keys sort in creation order (the Baseline, time-ordered
	// schemes, SwappedV1).
	ReadRange = "range"
)

// ReadKinds returns the kinds of read, in report order, in a new slice.
func ReadKinds() []string { return []string{ReadPoint, ReadRecent, ReadRange} }

// Reads are one kind of read's figures in one trial, or their summary.
type Reads struct {
	Ops       int     `json:"ops"`         // reads done (in a summary, the trials' median)
	OpsPerSec float64 `json:"ops_per_sec"` // reads per second, one connection, one at a time
	// RowsPerOp is the rows each read returned: 1 for the lookups, the
	// range's rows for ReadRange.
	RowsPerOp float64 `json:"rows_per_op"`
	// MissesPerOp are the blocks (8 kB pages) of the index and the table
	// each read found outside shared_buffers (pg_statio_user_tables
	// idx_blks_read + heap_blks_read), and IndexMissesPerOp the index's
	// part; nil when the statistics could not be read. On InnoDB both are
	// the pages (16 kB) read from disk into the buffer pool
	// (Innodb_buffer_pool_reads, server-wide): the clustered index holds
	// the rows.
	MissesPerOp      *float64 `json:"misses_per_op"`
	IndexMissesPerOp *float64 `json:"index_misses_per_op"`
	// HitsPerOp are the blocks each read found in shared_buffers (InnoDB:
	// Innodb_buffer_pool_read_requests less Innodb_buffer_pool_reads).
	HitsPerOp *float64 `json:"hits_per_op"`
	// OpsPerSecTrials, OpsPerSecCI and RatioToBaseline (of ops/s, paired
	// by round) are set in a summary, as for rows/s.
	OpsPerSecTrials []float64 `json:"ops_per_sec_trials,omitempty"`
	OpsPerSecCI     *Interval `json:"ops_per_sec_ci,omitempty"`
	RatioToBaseline *Estimate `json:"ratio_to_baseline,omitempty"`
}

// A readTarget is one table as an engine reads it back. The read workload
// (measureReads) only uses this interface, so that each engine gives its
// own.
type readTarget interface {
	// lookup reads the row of key (the key column's binary form, as the
	// writers sent it) and reports whether it exists.
	lookup(ctx context.Context, key []byte) (bool, error)
	// scan reads up to n rows in primary-key order from key on and returns
	// how many it read.
	scan(ctx context.Context, key []byte, n int) (int, error)
	// blocks returns the table's cumulative page reads from outside the
	// engine's cache (index and table), the index's part of them, and the
	// reads served by the cache; false when the engine cannot tell.
	blocks(ctx context.Context) (misses, indexMisses, hits int64, ok bool)
	close()
}

// A sample holds keys of the rows, chosen before the phases: SampleSize
// rows uniformly among all (preloaded and measured), and SampleSize among
// the newest 1 %. The row count is known in advance, so choosing the rows
// by their number is what a reservoir would hold, at a map lookup per row.
// Writers call keep concurrently.
type sample struct {
	total  int64
	recent int64 // the first row of the newest 1 %
	pick   map[int64]bool
	mu     sync.Mutex
	keys   map[int64][]byte
}

func newSample(total int64, rng *mrand.Rand) *sample {
	s := &sample{total: total, recent: total - max(1, total/100), pick: map[int64]bool{}, keys: map[int64][]byte{}}
	choose := func(lo, hi int64) {
		if hi-lo <= 2*SampleSize {
			for k := lo; k < hi; k++ {
				s.pick[k] = true
			}
			return
		}
		for n := 0; n < SampleSize; {
			if k := lo + rng.Int64N(hi-lo); !s.pick[k] {
				s.pick[k], n = true, n+1
			}
		}
	}
	choose(0, total)
	choose(s.recent, total)
	return s
}

// keep keeps key when row k (0-based) is in the sample.
func (s *sample) keep(k int64, key []byte) {
	if s == nil || !s.pick[k] {
		return
	}
	s.mu.Lock()
	s.keys[k] = append([]byte(nil), key...)
	s.mu.Unlock()
}

// sequential keeps the keys of a sequence 1..total (the Baseline's
// bigserial): row k's key is k+1.
func (s *sample) sequential() {
	for k := range s.pick {
		s.keys[k] = binary.BigEndian.AppendUint64(nil, uint64(k+1))
	}
}

// rows returns the kept rows' numbers in [lo, hi), sorted.
func (s *sample) rows(lo, hi int64) []int64 {
	var out []int64
	for k := range s.keys {
		if k >= lo && k < hi {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// pgTarget reads a PostgreSQL table back on one connection, with prepared
// statements in the binary format.
type pgTarget struct {
	conn  *pgx.Conn
	id    ident
	meta  *pgx.Conn
	flush func(context.Context)
}

const (
	stmtLookup = "idgen_compare_lookup"
	stmtScan   = "idgen_compare_scan"
)

func (h *pgEngine) pgTarget(ctx context.Context, table string, id ident) (readTarget, error) {
	c := h.writers[0]
	if _, err := c.PgConn().Prepare(ctx, stmtLookup, "SELECT id, created_at, payload FROM "+table+" WHERE id = $1", nil); err != nil {
		return nil, err
	}
	if _, err := c.PgConn().Prepare(ctx, stmtScan, "SELECT id, created_at, payload FROM "+table+" WHERE id >= $1 ORDER BY id LIMIT $2", nil); err != nil {
		return nil, err
	}
	return &pgTarget{conn: c, id: id, meta: h.meta, flush: h.flushStats}, nil
}

func (t *pgTarget) rows(ctx context.Context, stmt string, params [][]byte) (int, error) {
	rr := t.conn.PgConn().ExecPrepared(ctx, stmt, params, []int16{1, 1}[:len(params)], []int16{1})
	n := 0
	for rr.NextRow() {
		n++
	}
	_, err := rr.Close()
	return n, err
}

func (t *pgTarget) lookup(ctx context.Context, key []byte) (bool, error) {
	n, err := t.rows(ctx, stmtLookup, [][]byte{key})
	return n == 1, err
}

func (t *pgTarget) scan(ctx context.Context, key []byte, n int) (int, error) {
	return t.rows(ctx, stmtScan, [][]byte{key, binary.BigEndian.AppendUint64(nil, uint64(n))})
}

func (t *pgTarget) blocks(ctx context.Context) (misses, indexMisses, hits int64, ok bool) {
	t.flush(ctx)
	err := t.meta.QueryRow(ctx, `SELECT coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0), coalesce(idx_blks_read, 0),
		coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0) FROM pg_statio_user_tables WHERE relid = $1`, t.id.table).Scan(&misses, &indexMisses, &hits)
	return misses, indexMisses, hits, err == nil
}

func (t *pgTarget) close() {
	ctx := context.Background()
	t.conn.PgConn().Deallocate(ctx, stmtLookup)
	t.conn.PgConn().Deallocate(ctx, stmtScan)
}

// startSample starts the sample of p's keys for a trial, or returns nil
// when there are no reads (Config.NoReads, the harness check's rows, and
// the rows whose keys the server generates: the harness keeps the keys it
// sends, and it sends none of theirs).
func (h *harness) startSample(p *plan, round, i int) *sample {
	if h.cfg.NoReads || p.series || p.serverKey != "" {
		return nil
	}
	rng := mrand.New(mrand.NewPCG(h.seed, uint64(round)<<32|uint64(i)))
	s := newSample(int64(h.cfg.Preload+h.cfg.Rows), rng)
	if p.scheme == nil {
		s.sequential()
	}
	return s
}

// readBack runs the reads of a trial of p that kept a sample (h.sample)
// on the target open prepares, into res.Reads; nothing without a sample.
func (h *harness) readBack(ctx context.Context, p *plan, res *Result, round, i int, open func() (readTarget, error)) error {
	if h.sample == nil {
		return nil
	}
	t, err := open()
	if err != nil {
		return fmt.Errorf("%s: preparing the reads: %w", p.label, err)
	}
	defer t.close()
	res.Reads, err = h.measureReads(ctx, p, t, h.sample, res.Seconds, round, i)
	return err
}

// measureReads runs each kind of read on t with the keys of s, after the
// inserts of a trial of p that took seconds: at most Config.ReadOps reads
// and Config.ReadTime per kind, one at a time on one connection.
func (h *harness) measureReads(ctx context.Context, p *plan, t readTarget, s *sample, seconds float64, round, i int) (map[string]*Reads, error) {
	rng := mrand.New(mrand.NewPCG(h.seed^0x5eed, uint64(round)<<32|uint64(i)))
	perSecond := float64(h.cfg.Rows) / seconds
	if h.cfg.Span > 0 {
		perSecond = float64(s.total) / h.cfg.Span.Seconds()
	}
	span := int64(min(math.Ceil(perSecond), float64(s.total)))
	out := map[string]*Reads{}
	for _, kind := range ReadKinds() {
		var rows []int64
		switch kind {
		case ReadPoint:
			rows = s.rows(0, s.total)
		case ReadRecent:
			rows = s.rows(s.recent, s.total)
		case ReadRange:
			if !p.ordered() {
				continue
			}
			// Ranges that end at the last row; when one second's rows are
			// the whole table, the range from the oldest key kept.
			if rows = s.rows(0, s.total-span+1); len(rows) == 0 {
				rows = s.rows(0, s.total)[:1]
			}
		}
		if len(rows) == 0 {
			continue
		}
		h.prog.Phase(p.label, "read "+kind, h.cfg.ReadOps)
		r, err := readKind(ctx, t, kind, rows, s, span, rng, h.cfg.ReadOps, h.cfg.ReadTime, h.prog.Rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %s reads: %w", p.label, kind, err)
		}
		h.prog.PhaseDone(time.Duration(float64(r.Ops) / r.OpsPerSec * float64(time.Second)))
		out[kind] = r
	}
	return out, nil
}

func readKind(ctx context.Context, t readTarget, kind string, rows []int64, s *sample, span int64, rng *mrand.Rand,
	ops int, limit time.Duration, onOps func(int)) (*Reads, error) {
	m0, i0, h0, ok0 := t.blocks(ctx)
	start := time.Now()
	r := &Reads{}
	got := 0
	for r.Ops < ops && (r.Ops == 0 || time.Since(start) < limit) {
		key := s.keys[rows[rng.IntN(len(rows))]]
		if kind == ReadRange {
			n, err := t.scan(ctx, key, int(span))
			if err != nil {
				return nil, err
			}
			got += n
		} else {
			found, err := t.lookup(ctx, key)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, fmt.Errorf("key %x not found: the harness kept a key it did not insert", key)
			}
			got++
		}
		r.Ops++
		if onOps != nil {
			onOps(1)
		}
	}
	elapsed := time.Since(start)
	m1, i1, h1, ok1 := t.blocks(ctx)
	r.OpsPerSec = float64(r.Ops) / elapsed.Seconds()
	r.RowsPerOp = float64(got) / float64(r.Ops)
	if ok0 && ok1 {
		n := float64(r.Ops)
		r.MissesPerOp, r.IndexMissesPerOp, r.HitsPerOp = ptr(float64(m1-m0)/n), ptr(float64(i1-i0)/n), ptr(float64(h1-h0)/n)
	}
	return r, nil
}

// summarizeReads fills s.Reads from its trials: per kind, the medians, the
// interval of ops/s and its per-round ratio to the Baseline's.
func summarizeReads(s *Result, trials, base []Result, seed uint64) {
	s.Reads = nil
	for _, kind := range ReadKinds() {
		get := func(f func(*Reads) *float64) figure {
			return figure{kind + "_reads", func(r *Result) (float64, bool) {
				if x := r.Reads[kind]; x != nil {
					if v := f(x); v != nil {
						return *v, true
					}
				}
				return 0, false
			}}
		}
		ops := readOps(kind)
		xs, ok := ops.values(trials)
		if !ok {
			continue
		}
		med := func(f figure) *float64 {
			if v, ok := f.values(trials); ok {
				return ptr(stats.Median(v))
			}
			return nil
		}
		r := &Reads{OpsPerSec: stats.Median(xs), OpsPerSecTrials: xs, OpsPerSecCI: ptr(stats.BootstrapCI(xs, seed)),
			RowsPerOp:        *med(get(func(x *Reads) *float64 { return &x.RowsPerOp })),
			MissesPerOp:      med(get(func(x *Reads) *float64 { return x.MissesPerOp })),
			IndexMissesPerOp: med(get(func(x *Reads) *float64 { return x.IndexMissesPerOp })),
			HitsPerOp:        med(get(func(x *Reads) *float64 { return x.HitsPerOp })),
		}
		r.Ops = int(*med(get(func(x *Reads) *float64 { v := float64(x.Ops); return &v })))
		if base != nil && s.Strategy != Baseline {
			if bs, ok := ops.values(base); ok {
				if rs := stats.Ratios(xs, bs); len(rs) > 0 {
					r.RatioToBaseline = ptr(stats.EstimateOf(rs, seed))
				}
			}
		}
		if s.Reads == nil {
			s.Reads = map[string]*Reads{}
		}
		s.Reads[kind] = r
	}
}

// readOps is the figure of one kind's ops/s ("point_reads_per_sec").
func readOps(kind string) figure {
	return figure{kind + "_reads_per_sec", func(r *Result) (float64, bool) {
		if x := r.Reads[kind]; x != nil {
			return x.OpsPerSec, true
		}
		return 0, false
	}}
}

// readOpsFigures are the ops/s of every kind, for the noise warnings.
func readOpsFigures() []figure {
	var out []figure
	for _, k := range ReadKinds() {
		out = append(out, readOps(k))
	}
	return out
}
