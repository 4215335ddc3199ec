package strategies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// DefaultLeaseWorkers bounds the worker IDs a lease hands out when the URL
// has no workers key: a layout's worker space or 1024, whichever is smaller.
const DefaultLeaseWorkers = workerid.DefaultLeaseWorkers

// WorkerSourceDoc describes the worker source URLs, for key docs and flags.
const WorkerSourceDoc = workerid.Doc

// OpenWorkerSource opens the worker ID source a URL names, for a worker
// space of space.Workers IDs, with workerid.Open (which lists the URLs; its
// env source reads nothing: Options.WorkerID gives it under a spec's
// worker_source). Errors are workerid.Open's; a malformed URL or a hostname
// without an ordinal also wraps ErrSpec.
func OpenWorkerSource(ctx context.Context, rawURL string, space workerid.Space) (workerid.Source, error) {
	return openSource(ctx, rawURL, space, nil)
}

// openSource is OpenWorkerSource, with workerid.OpenWith's getenv.
func openSource(ctx context.Context, rawURL string, space workerid.Space, getenv func(string) string) (workerid.Source, error) {
	src, err := workerid.OpenWith(ctx, rawURL, space, getenv)
	if errors.Is(err, workerid.ErrNoOrdinal) || errors.Is(err, workerid.ErrConfig) {
		err = fmt.Errorf("%w: %w", ErrSpec, err) // bad input, as a bad key is
	}
	return src, err
}

// underSource opens p's worker_source for space and builds a generator
// under it, which owns the source (closes it in Close); the source is
// closed when build fails. A source's warning (a hostname hash that can
// collide) goes to the Options' Warn.
func underSource[G any](ctx context.Context, p *Params, space workerid.Space, build func(workerid.Source) (G, error)) (G, error) {
	var zero G
	getenv := func(name string) string {
		if name == workerid.EnvWorkerID {
			return p.opts.WorkerID
		}
		return ""
	}
	src, err := openSource(ctx, p.String("worker_source", ""), space, getenv)
	if err != nil {
		return zero, p.keyError("worker_source", err)
	}
	g, err := build(src)
	if err != nil {
		src.Close()
		return zero, err
	}
	if w, ok := src.(workerid.Warner); ok && w.Warning() != "" && p.opts.Warn != nil {
		p.opts.Warn(w.Warning())
	}
	return g, nil
}

// sourceMark returns the high-water store under a worker source: the
// source's own (a PostgreSQL, etcd, MySQL, Redis or ZooKeeper lease keeps
// the worker ID's mark) and hw (the high_water file) both, when both are
// there; else the one there is.
func sourceMark(src workerid.Source, hw snowflake.HighWaterStore) snowflake.HighWaterStore {
	s, ok := src.(snowflake.HighWaterStore)
	switch {
	case !ok:
		return hw
	case hw == nil:
		return s
	}
	if f, ok := hw.(snowflake.ClockSeqStore); ok {
		return bothMarksSeq{bothMarks{lease: s, local: hw}, f}
	}
	return bothMarks{lease: s, local: hw}
}

// bothMarks keeps the high-water mark in the lease store and a local
// store: Load returns the later of the two, Store writes the local one,
// then the lease's, and returns the first error.
type bothMarks struct {
	lease, local snowflake.HighWaterStore
}

func (b bothMarks) Load(ctx context.Context) (time.Time, error) {
	l, err := b.local.Load(ctx)
	if err != nil {
		return time.Time{}, err
	}
	s, err := b.lease.Load(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return later(l, s), nil
}

func (b bothMarks) Store(ctx context.Context, mark time.Time) error {
	return errors.Join(b.local.Store(ctx, mark), b.lease.Store(ctx, mark))
}

// bothMarksSeq is bothMarks whose local store keeps the clockseq value
// (the lease stores keep the mark only).
type bothMarksSeq struct {
	bothMarks
	seq snowflake.ClockSeqStore
}

func (b bothMarksSeq) LoadClockSeq(ctx context.Context) (time.Time, uint64, error) {
	l, cs, err := b.seq.LoadClockSeq(ctx)
	if err != nil {
		return time.Time{}, 0, err
	}
	s, err := b.lease.Load(ctx)
	if err != nil {
		return time.Time{}, 0, err
	}
	return later(l, s), cs, nil
}

func (b bothMarksSeq) StoreClockSeq(ctx context.Context, mark time.Time, clockseq uint64) error {
	return errors.Join(b.seq.StoreClockSeq(ctx, mark, clockseq), b.lease.Store(ctx, mark))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// layoutSpace returns the worker space of a layout: its worker field (or
// machine, where it has no worker field) and the datacenter ID of nodes.
func layoutSpace(l snowflake.Layout, nodes map[string]int64) (workerid.Space, error) {
	_, bits, ok := l.WorkerField()
	if !ok {
		return workerid.Space{}, fmt.Errorf("%w: worker_source: layout %s has no worker or machine field", ErrSpec, l)
	}
	return workerid.Space{Workers: 1 << bits, DatacenterID: nodes[snowflake.FieldDatacenter]}, nil
}

// coreSonyflake is a SonyflakeGenerator on the Snowflake core (under a
// worker source), with the core's counters.
type coreSonyflake struct{ *SonyflakeGenerator }

// SequenceWaits counts the waits for the next tick after a tick's sequence
// was used up.
func (g coreSonyflake) SequenceWaits() uint64 { return g.core.SequenceWaits() }

// ClockRollbackWaits counts the waits out of a clock rollback.
func (g coreSonyflake) ClockRollbackWaits() uint64 { return g.core.ClockRollbackWaits() }

// ClockRollbackFailures counts the IDs refused for a clock rollback.
func (g coreSonyflake) ClockRollbackFailures() uint64 { return g.core.ClockRollbackFailures() }

var _ idgen.Generator = coreSonyflake{}
