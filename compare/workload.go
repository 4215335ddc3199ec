package compare

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
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
// gens is nil for the baseline. A series plan's keys start at first.
func (h *pgEngine) load(ctx context.Context, p *plan, t *table, first int64, n int, onRows func(int)) (phaseResult, error) {
	return fanOut(ctx, p, writersOf(p, len(h.writers)), first, n, onRows, func(ctx context.Context, w int, gen idgen.Generator, bs batches, rec *recorder) ([]float64, error) {
		return h.writer(ctx, h.writers[w], p, gen, t.quoted, bs, rec)
	})
}

// HarnessWriters is the number of writers of the harness check's two rows
// (ClientSeries and Reference), whatever Config.Writers: one on each side.
// One writer's client goroutines and its server backend each get a core on
// any machine of two cores or more, so the ratio measures whether the
// harness keeps a backend busy. With Writers backends and the client on
// fewer cores than Writers + 1, it would measure how the machine shares
// its cores instead (4 writers on 2 cores: about 0.6×), a cost that every
// strategy's rows/s pay alike.
const HarnessWriters = 1

// writersOf is the number of writers that load p's rows: HarnessWriters
// for the harness check's rows, else all of them.
func writersOf(p *plan, all int) int {
	if p.series {
		return min(all, HarnessWriters)
	}
	return all
}

// fanOut runs write on each of writers writers, writer w with p's
// generator w (nil for the baseline), sharing n rows from first, and
// returns the phase's timings: the first error cancels the others.
func fanOut(ctx context.Context, p *plan, writers int, first int64, n int, onRows func(int),
	write func(ctx context.Context, w int, gen idgen.Generator, bs batches, rec *recorder) ([]float64, error)) (phaseResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var claimed atomic.Int64
	rec := newRecorder(n, onRows)
	lats := make([][]float64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		var gen idgen.Generator
		if p.gens != nil {
			gen = p.gens[w]
		}
		wg.Go(func() {
			l, err := write(ctx, w, gen, batches{first: first, n: n, claimed: &claimed}, rec)
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

// PipelineDepth is how many COPY batches a writer keeps in flight: while
// the server works on one, the next is already in its socket, so the
// server never waits on the client between batches.
const PipelineDepth = 2

// writer claims batches until n rows are claimed and returns its batch
// latencies in ms.
func (h *pgEngine) writer(ctx context.Context, conn *pgx.Conn, p *plan, gen idgen.Generator, table string, bs batches, rec *recorder) ([]float64, error) {
	switch {
	case p.server:
		return h.seriesWriter(ctx, conn, p, table, bs, rec)
	case p.series && h.cfg.Batch > 1:
		return h.arrayWriter(ctx, conn, p, table, bs, rec)
	case h.cfg.Batch == 1:
		return h.insertWriter(ctx, conn, p, gen, table, bs, rec)
	}
	return h.copyWriter(ctx, conn.PgConn(), p, gen, table, bs, rec)
}

// batches hands out a phase's n rows to the writers, a batch at a time;
// first is the key of row 0 of a series plan.
type batches struct {
	first   int64
	n       int
	claimed *atomic.Int64
}

// claim takes the next batch: the key of its first row (series plans) and
// its row count, 0 when all n are claimed.
func (bs batches) claim(b int) (int64, int) {
	start := int(bs.claimed.Add(int64(b))) - b
	if start >= bs.n {
		return 0, 0
	}
	return bs.first + int64(start), min(b, bs.n-start)
}

// seriesWriter is the server-side half of the harness check: each batch is
// one INSERT ... SELECT of its keys from generate_series, so the server
// generates the rows the harness would send.
func (h *pgEngine) seriesWriter(ctx context.Context, conn *pgx.Conn, p *plan, table string, bs batches, rec *recorder) ([]float64, error) {
	var lo, hi [8]byte
	return h.batchStatement(ctx, conn, p, "SELECT g, now(), $1::bytea FROM generate_series($2::bigint, $3::bigint) g", bs, rec, table,
		func(k int64, cnt int) [][]byte {
			binary.BigEndian.PutUint64(lo[:], uint64(k))
			binary.BigEndian.PutUint64(hi[:], uint64(k+int64(cnt)-1))
			return [][]byte{h.payload, lo[:], hi[:]}
		})
}

// arrayWriter is the harness half of the harness check, in the same shape
// as seriesWriter: the same prepared INSERT ... SELECT, one statement per
// batch, but over the keys the client encodes and sends, a binary int8[]
// (unnest), rather than the server's generate_series. The two differ only
// in where the keys come from, so the ratio measures what the client and
// the wire add per key.
func (h *pgEngine) arrayWriter(ctx context.Context, conn *pgx.Conn, p *plan, table string, bs batches, rec *recorder) ([]float64, error) {
	var arr []byte
	return h.batchStatement(ctx, conn, p, "SELECT k, now(), $1::bytea FROM unnest($2::int8[]) k", bs, rec, table,
		func(k int64, cnt int) [][]byte {
			arr = appendInt8Array(arr[:0], k, cnt)
			return [][]byte{h.payload, arr}
		})
}

// int8OID is PostgreSQL's type OID of bigint (int8).
const int8OID = 20

// appendInt8Array appends the binary form of a one-dimensional bigint
// array holding cnt keys from k (array_send: ndim, has-null flag, element
// type OID, then the dimension's length and lower bound, then each element
// as a 4-byte length and its 8 bytes, all big-endian).
func appendInt8Array(b []byte, k int64, cnt int) []byte {
	b = binary.BigEndian.AppendUint32(b, 1) // ndim
	b = binary.BigEndian.AppendUint32(b, 0) // no NULLs
	b = binary.BigEndian.AppendUint32(b, int8OID)
	b = binary.BigEndian.AppendUint32(b, uint32(cnt))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for i := range int64(cnt) {
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(k+i))
	}
	return b
}

// batchStatement prepares INSERT INTO table (id, created_at, payload)
// followed by sel, then claims batches until none is left, running it once
// per batch with the parameters params gives, and returns the batch round
// trips in ms.
func (h *pgEngine) batchStatement(ctx context.Context, conn *pgx.Conn, p *plan, sel string, bs batches, rec *recorder, table string,
	params func(k int64, cnt int) [][]byte) ([]float64, error) {
	const stmt = "idgen_compare_series"
	sql := "INSERT INTO " + table + " (id, created_at, payload) " + sel
	if _, err := conn.PgConn().Prepare(ctx, stmt, sql, nil); err != nil {
		return nil, fmt.Errorf("%s: prepare insert: %w", p.label, err)
	}
	defer conn.PgConn().Deallocate(context.WithoutCancel(ctx), stmt)
	var lats []float64
	formats := []int16{1, 1, 1}
	for ctx.Err() == nil {
		k, cnt := bs.claim(h.cfg.Batch)
		if cnt == 0 {
			break
		}
		ps := params(k, cnt)
		lat, err := execTimed(ctx, conn, p, stmt, ps, formats[:len(ps)])
		if err != nil {
			return lats, err
		}
		lats = append(lats, lat)
		rec.done(cnt)
	}
	return lats, context.Cause(ctx)
}

// execTimed runs the prepared statement stmt and returns its round trip in
// ms.
func execTimed(ctx context.Context, conn *pgx.Conn, p *plan, stmt string, params [][]byte, formats []int16) (float64, error) {
	t0 := time.Now()
	_, err := conn.PgConn().ExecPrepared(ctx, stmt, params, formats, nil).Close()
	lat := time.Since(t0)
	if err != nil {
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		return 0, insertError(p, err)
	}
	return float64(lat) / float64(time.Millisecond), nil
}

// insertWriter sends single-row autocommit INSERTs of a prepared statement,
// one at a time; its latency is the round trip.
func (h *pgEngine) insertWriter(ctx context.Context, conn *pgx.Conn, p *plan, gen idgen.Generator, table string, bs batches, rec *recorder) ([]float64, error) {
	const stmt = "idgen_compare_insert"
	sql := "INSERT INTO " + table + " (created_at, payload) VALUES ($1, $2)"
	if gen != nil || p.series {
		sql = "INSERT INTO " + table + " (id, created_at, payload) VALUES ($1, $2, $3)"
	}
	if _, err := conn.PgConn().Prepare(ctx, stmt, sql, nil); err != nil {
		return nil, fmt.Errorf("%s: prepare insert: %w", p.label, err)
	}
	defer conn.PgConn().Deallocate(context.WithoutCancel(ctx), stmt)
	var lats []float64
	var key []byte
	params := make([][]byte, 0, 3)
	formats := []int16{1, 1, 1}
	for ctx.Err() == nil {
		k, cnt := bs.claim(1)
		if cnt == 0 {
			break
		}
		params = params[:0]
		if p.series {
			key = binary.BigEndian.AppendUint64(key[:0], uint64(k))
			params = append(params, key)
		} else if gen != nil {
			var id [1]idgen.ID
			if err := h.issue(ctx, p, gen, id[:], k); err != nil {
				return lats, err
			}
			var err error
			if key, err = storeKey(key[:0], id[0], p); err != nil {
				return lats, fmt.Errorf("%s: %w", p.label, err)
			}
			h.sample.keep(k-1, key)
			params = append(params, key)
		}
		ts := timestamptz(time.Now())
		params = append(params, ts[:], h.payload)
		lat, err := execTimed(ctx, conn, p, stmt, params, formats[:len(params)])
		if err != nil {
			return lats, err
		}
		lats = append(lats, lat)
		rec.done(1)
	}
	return lats, context.Cause(ctx)
}

// A sentBatch is a COPY batch sent and not yet acknowledged.
type sentBatch struct {
	rows int
	at   time.Time
}

// copyWriter sends each batch as one binary COPY FROM STDIN, in a single
// write: the query, the data and CopyDone (pgconn's CopyFrom waits for
// CopyInResponse before sending the data, a second round trip per batch).
// Up to PipelineDepth batches are in flight; a reader goroutine takes the
// replies. The protocol allows both: messages are processed in order, and
// after an error the server drops the CopyData and CopyDone that follow.
//
// A batch's latency runs from when the server could start it (its send,
// or the previous batch's acknowledgement if later) to its
// acknowledgement: the server's time for it, not its wait in the pipeline.
func (h *pgEngine) copyWriter(ctx context.Context, pc *pgconn.PgConn, p *plan, gen idgen.Generator, table string, bs batches, rec *recorder) ([]float64, error) {
	cols := "(created_at, payload)"
	if gen != nil || p.series {
		cols = "(id, created_at, payload)"
	}
	query := &pgproto3.Query{String: "COPY " + table + " " + cols + " FROM STDIN (FORMAT binary)"}
	if err := pc.SyncConn(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Unblock the socket when the phase is cancelled; the run is then over.
	stop := context.AfterFunc(ctx, func() { pc.Conn().SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fe := pc.Frontend()

	slots := make(chan struct{}, PipelineDepth)
	sent := make(chan sentBatch, PipelineDepth)
	var lats []float64
	readerDone := make(chan struct{})
	go func() { // the reader: owned by this writer, which waits for it
		defer close(readerDone)
		prev := time.Time{}
		for b := range sent {
			var qerr error
			for {
				msg, err := fe.Receive()
				if err != nil {
					cancel(err)
					return
				}
				if m, ok := msg.(*pgproto3.ErrorResponse); ok {
					qerr = pgconn.ErrorResponseToPgError(m)
				}
				if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
					break
				}
			}
			done := time.Now()
			if qerr != nil {
				cancel(insertError(p, qerr))
				return
			}
			begin := b.at
			if prev.After(begin) {
				begin = prev
			}
			prev = done
			lats = append(lats, float64(done.Sub(begin))/float64(time.Millisecond))
			rec.done(b.rows)
			<-slots
		}
	}()

	ids := make([]idgen.ID, h.cfg.Batch)
	var buf, key []byte
	err := func() error {
		for {
			first, cnt := bs.claim(h.cfg.Batch)
			if cnt == 0 {
				return nil
			}
			if gen != nil {
				if err := h.issue(ctx, p, gen, ids[:cnt], first); err != nil {
					return err
				}
			}
			ts := timestamptz(time.Now())
			buf = append(buf[:0], copyHeader...)
			for i := range cnt {
				var k []byte
				if p.series {
					key = binary.BigEndian.AppendUint64(key[:0], uint64(first+int64(i)))
					k = key
				} else if gen != nil {
					var err error
					if key, err = storeKey(key[:0], ids[i], p); err != nil {
						return fmt.Errorf("%s: %w", p.label, err)
					}
					k = key
					h.sample.keep(first-1+int64(i), key)
				}
				buf = appendRow(buf, k, ts, h.payload)
			}
			buf = append(buf, copyTrailer...)
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			fe.Send(query)
			fe.Send(&pgproto3.CopyData{Data: buf})
			fe.Send(&pgproto3.CopyDone{})
			at := time.Now()
			if err := fe.Flush(); err != nil {
				return err
			}
			sent <- sentBatch{cnt, at}
		}
	}()
	close(sent)
	if err != nil {
		cancel(err)
	}
	<-readerDone
	return lats, context.Cause(ctx)
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
		return fmt.Errorf("%s issued a duplicate ID%s (%s): %w", p.label, hint, strings.TrimSuffix(pe.Detail, "."), err)
	}
	return fmt.Errorf("%s: insert: %w", p.label, err)
}
