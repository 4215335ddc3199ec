package strategies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// WorkerSourceDoc describes the worker source URLs, for key docs and flags
// (package workerid's Open takes them).
const WorkerSourceDoc = "worker ID source: static:N, env (IDGEN_WORKER_ID), ordinal[:offset] (hostname name-N), " +
	"postgres://...[?namespace=&table=&ttl=&workers=&worker_id=&state_file=], etcd://[user@]host:port[,host:port][/namespace][?ttl=&workers=&worker_id=&state_file=&password_file=&tls_ca=&tls_cert=&tls_key=], " +
	"mysql://user@host:3306/db[?namespace=&table=&ttl=&workers=&worker_id=&state_file=&password_file=&tls_ca=&tls_cert=&tls_key=], " +
	"redis://[user@]host:6379/db[?namespace=&ttl=&workers=&worker_id=&state_file=&password_file=] (rediss:// with tls_ca=&tls_cert=&tls_key=), " +
	"zk://[user@]host:port[,host:port][/path][?node=&namespace=&ttl=&workers=&worker_id=&state_file=&password_file=], ip[:bits] (low bits of a private IPv4), " +
	"hostname-hash?accept_collisions=true"

// WorkerSourceKey is the spec key that names a worker ID source
// (WorkerSourceDoc), which snowflake, sonyflake and flake128 take.
const WorkerSourceKey = "worker_source"

// TakesWorkerSource reports whether spec's strategy takes WorkerSourceKey
// and spec does not set it: where a program's default worker source
// (idgen's $IDGEN_WORKER_SOURCE) applies. An unknown strategy takes none.
func TakesWorkerSource(spec Spec) bool {
	s, ok := registry[spec.Name()]
	if !ok || !slices.ContainsFunc(s.Keys, func(k Key) bool { return k.Name == WorkerSourceKey }) {
		return false
	}
	_, set := spec.Get(WorkerSourceKey)
	return !set
}

// WithWorkerSource returns spec with WorkerSourceKey set to source, a
// worker source a program takes beside the spec (idgen's
// --worker-source). A spec that sets the key already is refused, wrapping
// ErrSpec; a strategy that does not take the key refuses it when the spec
// is built, as it does any unknown key.
func WithWorkerSource(spec Spec, source string) (Spec, error) {
	if _, set := spec.Get(WorkerSourceKey); set {
		return Spec{}, fmt.Errorf("%w: %s: the spec already sets %s", ErrSpec, spec.Name(), WorkerSourceKey)
	}
	return spec.With(WorkerSourceKey, source), nil
}

// A WorkerSource is a node's worker ID source, as package workerid opens
// them: an idgen.Lease (a snowflake.Config.Lease) that Close releases. A
// source that holds a high-water mark beside its lease is also a
// snowflake.HighWaterStore; one whose identity can collide has a
// Warning() string method.
type WorkerSource interface {
	idgen.Lease
	io.Closer
}

// A WorkerSpace is the worker ID space a source hands out from: Workers
// IDs, 0 to Workers-1, and the datacenter ID every identity carries.
type WorkerSpace struct {
	Workers      int64
	DatacenterID int64
}

// A WorkerSourceOpener opens the worker ID source a URL names (see
// WorkerSourceDoc) for space; getenv gives the env source the value of
// EnvWorkerID. Errors for a malformed URL wrap ErrSpec.
type WorkerSourceOpener func(ctx context.Context, rawURL string, space WorkerSpace, getenv func(string) string) (WorkerSource, error)

var workerSources WorkerSourceOpener

// RegisterWorkerSources sets the opener of worker_source URLs, as
// database/sql's drivers register: package workerid registers its Open
// from init, so that a program links the lease stores (pgx, MySQL, Redis,
// etcd, ZooKeeper) only when it imports workerid; idgen's CLI imports it
// for this side effect. Without it, a spec's worker_source is refused.
func RegisterWorkerSources(open WorkerSourceOpener) { workerSources = open }

// OpenWorkerSource opens the worker ID source a URL names, for space, with
// the registered opener (package workerid's Open; its env source reads
// nothing: Options.WorkerID gives it under a spec's worker_source).
// Errors are the opener's; a malformed URL or a hostname without an
// ordinal wraps ErrSpec, as does a program that links no opener.
func OpenWorkerSource(ctx context.Context, rawURL string, space WorkerSpace) (WorkerSource, error) {
	return openSource(ctx, rawURL, space, nil)
}

// openSource is OpenWorkerSource, with the env source's getenv.
func openSource(ctx context.Context, rawURL string, space WorkerSpace, getenv func(string) string) (WorkerSource, error) {
	if workerSources == nil {
		return nil, fmt.Errorf("%w: worker_source: no worker ID source is linked (import package workerid)", ErrSpec)
	}
	return workerSources(ctx, rawURL, space, getenv)
}

// underSource opens p's worker_source for space and builds a generator
// under it, which owns the source (closes it in Close); the source is
// closed when build fails. A source's warning (a hostname hash that can
// collide) goes to the Options' Warn.
func underSource[G any](ctx context.Context, p *Params, space WorkerSpace, build func(WorkerSource) (G, error)) (G, error) {
	var zero G
	getenv := func(name string) string {
		if name == EnvWorkerID {
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
	if w, ok := src.(interface{ Warning() string }); ok && w.Warning() != "" && p.opts.Warn != nil {
		p.opts.Warn(w.Warning())
	}
	return g, nil
}

// sourceMark returns the high-water store under a worker source: the
// source's own (a PostgreSQL, etcd, MySQL, Redis or ZooKeeper lease keeps
// the worker ID's mark) and hw (the high_water file) both, when both are
// there; else the one there is.
func sourceMark(src WorkerSource, hw snowflake.HighWaterStore) snowflake.HighWaterStore {
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

// layoutSpace returns the worker space of a layout: its
// snowflake.Layout.WorkerField and the datacenter ID of nodes.
func layoutSpace(l snowflake.Layout, nodes map[string]int64) (WorkerSpace, error) {
	_, bits, ok := l.WorkerField()
	if !ok {
		return WorkerSpace{}, fmt.Errorf("%w: worker_source: layout %s has no node field to hold the worker ID (worker, machine, process, shard, region or datacenter)", ErrSpec, l)
	}
	return WorkerSpace{Workers: 1 << bits, DatacenterID: nodes[snowflake.FieldDatacenter]}, nil
}

// coreSonyflake is a SonyflakeGenerator on the Snowflake core (under a
// worker source): its IDs are the core's, in the sonyflake scheme.
type coreSonyflake struct{ *SonyflakeGenerator }

// Unwrap returns the Snowflake core whose IDs it issues, so that a server
// reads the core's Stats (idgen.StatsOf): its clock, its counters and the
// lease of the worker source.
func (g coreSonyflake) Unwrap() idgen.Generator { return g.core }

var _ idgen.Generator = coreSonyflake{}
