package compare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A phaseResult is what one load phase measured.
type phaseResult struct {
	elapsed   time.Duration
	tenths    []float64 // rows/s per tenth of the rows
	latencies []float64 // ms, one per batch, sorted
}

// recorder counts the rows in, marks each tenth and feeds Progress.
// Writers call done concurrently.
type recorder struct {
	mu     sync.Mutex
	total  int
	rows   int
	start  time.Time
	marks  []mark
	onRows func(n int)
}

type mark struct {
	rows int
	at   time.Time
}

func newRecorder(total int, onRows func(int)) *recorder {
	return &recorder{total: total, start: time.Now(), onRows: onRows}
}

func (r *recorder) done(n int) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows += n
	for len(r.marks) < 10 && r.rows >= threshold(r.total, len(r.marks)+1) {
		r.marks = append(r.marks, mark{r.rows, now})
	}
	if r.onRows != nil {
		r.onRows(n)
	}
}

// threshold is the row count that completes tenth k (1..10).
func threshold(total, k int) int { return (total*k + 9) / 10 }

// tenths turns the marks into rows/s per tenth. A batch that completes
// several tenths at once gives them all its rate.
func (r *recorder) tenths() []float64 {
	out := make([]float64, 0, 10)
	prev := mark{0, r.start}
	rate := 0.0
	for _, m := range r.marks {
		if dt := m.at.Sub(prev.at).Seconds(); dt > 0 && m.rows > prev.rows {
			rate = float64(m.rows-prev.rows) / dt
			prev = m
		}
		out = append(out, rate)
	}
	// Back-fill tenths completed within the first batch.
	for i := len(out) - 1; i > 0; i-- {
		if out[i-1] == 0 {
			out[i-1] = out[i]
		}
	}
	return out
}

// load inserts n rows into table with every writer and returns the timings.
// gens is nil for the baseline.
func (h *harness) load(ctx context.Context, p *plan, table pgx.Identifier, n int, onRows func(int)) (phaseResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var claimed atomic.Int64
	rec := newRecorder(n, onRows)
	lats := make([][]float64, len(h.writers))
	var wg sync.WaitGroup
	for w, conn := range h.writers {
		var gen idgen.Generator
		if p.gens != nil {
			gen = p.gens[w]
		}
		wg.Go(func() {
			l, err := h.writer(ctx, conn, p, gen, table, n, &claimed, rec)
			lats[w] = l
			if err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(rec.start)
	if err := context.Cause(ctx); err != nil {
		return phaseResult{}, err
	}
	all := slices.Concat(lats...)
	slices.Sort(all)
	return phaseResult{elapsed: elapsed, tenths: rec.tenths(), latencies: all}, nil
}

// writer claims batches until n rows are claimed and returns its batch
// latencies in ms.
func (h *harness) writer(ctx context.Context, conn *pgx.Conn, p *plan, gen idgen.Generator, table pgx.Identifier, n int, claimed *atomic.Int64, rec *recorder) ([]float64, error) {
	b := h.cfg.Batch
	var lats []float64
	ids := make([]idgen.ID, b)
	var buf, key []byte
	cols := "(created_at, payload)"
	if gen != nil {
		cols = "(id, created_at, payload)"
	}
	copySQL := "COPY " + table.Sanitize() + " " + cols + " FROM STDIN (FORMAT binary)"
	stmt := ""
	if b == 1 {
		stmt = "idgen_compare_insert"
		sql := "INSERT INTO " + table.Sanitize() + " (created_at, payload) VALUES ($1, $2)"
		if gen != nil {
			sql = "INSERT INTO " + table.Sanitize() + " (id, created_at, payload) VALUES ($1, $2, $3)"
		}
		if _, err := conn.PgConn().Prepare(ctx, stmt, sql, nil); err != nil {
			return nil, fmt.Errorf("%s: prepare insert: %w", p.spec, err)
		}
		defer conn.PgConn().Deallocate(context.WithoutCancel(ctx), stmt)
	}
	params := make([][]byte, 0, 3)
	formats := []int16{1, 1, 1}
	for ctx.Err() == nil {
		start := int(claimed.Add(int64(b))) - b
		if start >= n {
			break
		}
		cnt := min(b, n-start)
		if gen != nil {
			if _, err := idgen.NextN(ctx, gen, ids[:cnt]); err != nil {
				return lats, fmt.Errorf("%s: generating IDs: %w", p.spec, err)
			}
		}
		ts := timestamptz(time.Now())
		var t0 time.Time
		var err error
		if b == 1 {
			params = params[:0]
			if gen != nil {
				if key, err = keyBytes(key[:0], ids[0], p.column); err != nil {
					return lats, fmt.Errorf("%s: %w", p.spec, err)
				}
				params = append(params, key)
			}
			params = append(params, ts[:], h.payload)
			t0 = time.Now()
			_, err = conn.PgConn().ExecPrepared(ctx, stmt, params, formats[:len(params)], nil).Close()
		} else {
			buf = append(buf[:0], copyHeader...)
			for i := range cnt {
				var k []byte
				if gen != nil {
					if key, err = keyBytes(key[:0], ids[i], p.column); err != nil {
						return lats, fmt.Errorf("%s: %w", p.spec, err)
					}
					k = key
				}
				buf = appendRow(buf, k, ts, h.payload)
			}
			buf = append(buf, copyTrailer...)
			t0 = time.Now()
			_, err = conn.PgConn().CopyFrom(ctx, bytes.NewReader(buf), copySQL)
		}
		lat := time.Since(t0)
		if err != nil {
			if ctx.Err() != nil {
				return lats, context.Cause(ctx)
			}
			return lats, insertError(p, err)
		}
		lats = append(lats, float64(lat)/float64(time.Millisecond))
		rec.done(cnt)
	}
	return lats, nil
}

// insertError explains a failed insert; a unique violation means the
// strategy issued the same ID twice.
func insertError(p *plan, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		hint := ""
		if p.workerKey == "" && len(p.gens) > 1 {
			hint = " (its writers have no worker key to tell them apart)"
		}
		return fmt.Errorf("%s issued a duplicate ID%s: %s: %w", p.spec, hint, pe.Detail, err)
	}
	return fmt.Errorf("%s: insert: %w", p.spec, err)
}

// percentile returns the nearest-rank q-quantile of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
