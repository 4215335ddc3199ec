package strategies

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

// DefaultLeaseWorkers bounds the worker IDs a PostgreSQL or etcd lease hands
// out when the URL has no workers key: a layout's worker space or 1024,
// whichever is smaller.
const DefaultLeaseWorkers = 1024

// WorkerSourceDoc describes the worker source URLs, for key docs and flags.
const WorkerSourceDoc = "worker ID source: static:N, env (IDGEN_WORKER_ID), ordinal[:offset] (hostname name-N), " +
	"postgres://...[?namespace=&table=&ttl=&workers=&state_file=], etcd://host:port[,host:port][/namespace][?ttl=&workers=&state_file=]"

// OpenWorkerSource opens the worker ID source a URL names, for a worker
// space of space.Workers IDs:
//
//	static:N                       worker ID N
//	env                            IDGEN_WORKER_ID
//	ordinal[:offset]               the N of hostname name-N, plus offset
//	postgres://user@host/db?...    a lease row; extra keys namespace, table
//	                               (default idgen_workers), ttl (default 30s),
//	                               state_file
//	etcd://host:port[,host:port][/namespace]?ttl=30s&state_file=PATH
//
// A lease is acquired before it returns. Errors: a malformed URL wraps
// ErrSpec; a worker ID outside the space, idgen.ErrOutOfRange; a hostname
// without an ordinal, workerid.ErrNoOrdinal; a store that cannot be reached,
// idgen.ErrUnavailable; a full space, idgen.ErrNoWorkerIDs. A hostname
// without an ordinal or an unset IDGEN_WORKER_ID also wraps ErrSpec.
func OpenWorkerSource(ctx context.Context, rawURL string, space workerid.Space) (workerid.Source, error) {
	src, err := openWorkerSource(ctx, rawURL, space)
	if errors.Is(err, workerid.ErrNoOrdinal) || errors.Is(err, workerid.ErrConfig) {
		err = fmt.Errorf("%w: %w", ErrSpec, err) // bad input, as a bad key is
	}
	return src, err
}

func openWorkerSource(ctx context.Context, rawURL string, space workerid.Space) (workerid.Source, error) {
	bad := func(why string) error {
		// why may quote rawURL too (url.Parse's errors do).
		return fmt.Errorf("%w: %s", ErrSpec, redact.Spec(fmt.Sprintf("worker_source %q: %s; want %s", rawURL, why, WorkerSourceDoc)))
	}
	scheme, rest, _ := strings.Cut(rawURL, ":")
	switch scheme {
	case "static":
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, bad("static:N needs an integer N")
		}
		return workerid.NewStatic(n, space)
	case "env":
		if rest != "" {
			return nil, bad("env takes no argument")
		}
		return workerid.Env(nil, space)
	case "ordinal":
		var off int64
		if rest != "" {
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				return nil, bad("ordinal:offset needs an integer offset")
			}
			off = n
		}
		return workerid.Ordinal("", off, space)
	case "postgres", "postgresql":
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, bad(err.Error())
		}
		cfg := workerid.PostgresConfig{LeaseConfig: workerid.LeaseConfig{Space: space}}
		q := u.Query()
		if err := leaseKeys(q, &cfg.LeaseConfig); err != nil {
			return nil, bad(err.Error())
		}
		cfg.Table = q.Get("table")
		q.Del("table")
		u.RawQuery = q.Encode()
		return workerid.OpenPostgres(ctx, u.String(), cfg)
	case "etcd":
		// Parsed by hand: net/url refuses several [IPv6]:port hosts.
		hosts, tail, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
		hosts, path, _ := strings.Cut(hosts, "/")
		if !strings.HasPrefix(rest, "//") || hosts == "" {
			return nil, bad("no host:port")
		}
		q, err := url.ParseQuery(tail)
		if err != nil {
			return nil, bad(err.Error())
		}
		cfg := workerid.EtcdConfig{LeaseConfig: workerid.LeaseConfig{Space: space}, Endpoints: strings.Split(hosts, ",")}
		cfg.Namespace = strings.Trim(path, "/")
		if err := leaseKeys(q, &cfg.LeaseConfig); err != nil {
			return nil, bad(err.Error())
		}
		if len(q) > 0 {
			return nil, bad(fmt.Sprintf("unknown key %q", firstKey(q)))
		}
		return workerid.OpenEtcd(ctx, cfg)
	}
	return nil, bad("unknown source")
}

// underSource opens p's worker_source for space and builds a generator
// under it; the source is closed when build fails.
func underSource[G any](ctx context.Context, p *Params, space workerid.Space, build func(workerid.Source) (G, error)) (G, workerid.Source, error) {
	var zero G
	src, err := OpenWorkerSource(ctx, p.String("worker_source", ""), space)
	if err != nil {
		return zero, nil, err
	}
	g, err := build(src)
	if err != nil {
		src.Close()
		return zero, nil, err
	}
	return g, src, nil
}

// sourceMark returns hw, or, when it is nil, the source's own store: a
// PostgreSQL lease row or etcd key keeps the worker ID's high-water mark.
func sourceMark(src workerid.Source, hw snowflake.HighWaterStore) snowflake.HighWaterStore {
	if s, ok := src.(snowflake.HighWaterStore); ok && hw == nil {
		return s
	}
	return hw
}

// leaseKeys moves namespace, ttl, workers and state_file from q into cfg.
// A lease space holds min(the layout's space, DefaultLeaseWorkers) IDs
// unless workers says otherwise.
func leaseKeys(q url.Values, cfg *workerid.LeaseConfig) error {
	space := cfg.Workers
	cfg.Workers = min(space, DefaultLeaseWorkers)
	if v := q.Get("workers"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > min(space, workerid.MaxLeaseWorkers) {
			return fmt.Errorf("workers %q: want an integer in [1, %d]", v, min(space, workerid.MaxLeaseWorkers))
		}
		cfg.Workers = n
	}
	q.Del("workers")
	if v := q.Get("namespace"); v != "" {
		cfg.Namespace = v
	}
	if v := q.Get("ttl"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 3*time.Second {
			return fmt.Errorf("ttl %q: want a duration of at least 3s", v)
		}
		cfg.TTL = d
	}
	cfg.StateFile = q.Get("state_file")
	for _, k := range []string{"namespace", "ttl", "state_file"} {
		q.Del(k)
	}
	return nil
}

func firstKey(q url.Values) string {
	for k := range q {
		return k
	}
	return ""
}

// layoutSpace returns the worker space of a layout: its worker field (or
// machine, where it has no worker field) and the datacenter ID of nodes.
func layoutSpace(l snowflake.Layout, nodes map[string]int64) (workerid.Space, error) {
	bits, ok := l.Field("worker")
	if !ok {
		bits, ok = l.Field("machine")
	}
	if !ok {
		return workerid.Space{}, fmt.Errorf("%w: worker_source: layout %s has no worker or machine field", ErrSpec, l)
	}
	return workerid.Space{Workers: 1 << bits, DatacenterID: nodes["datacenter"]}, nil
}

// LeasedSnowflake is a snowflake.Generator whose worker ID comes from a
// workerid.Source (the worker_source key). It owns the source: Close
// releases the worker ID and stops its renewals.
type LeasedSnowflake struct {
	*snowflake.Generator
	src workerid.Source
}

// Source returns the worker ID source.
func (g *LeasedSnowflake) Source() workerid.Source { return g.src }

// Close releases the worker ID; Next then fails with idgen.ErrLeaseLost.
func (g *LeasedSnowflake) Close() error { return g.src.Close() }

// LeasedFlake128 is a Flake128Generator whose worker ID comes from a
// workerid.Source (the worker_source key). It owns the source: Close
// releases the worker ID and stops its renewals.
type LeasedFlake128 struct {
	*Flake128Generator
	src workerid.Source
}

// Source returns the worker ID source.
func (g *LeasedFlake128) Source() workerid.Source { return g.src }

// Close releases the worker ID; Next then fails with idgen.ErrLeaseLost.
func (g *LeasedFlake128) Close() error { return g.src.Close() }

// LeasedSonyflake is a SonyflakeGenerator whose machine ID comes from a
// workerid.Source (the worker_source key), on the Snowflake core. It owns
// the source: Close releases the machine ID and stops its renewals.
type LeasedSonyflake struct {
	*SonyflakeGenerator
	src workerid.Source
}

// Source returns the worker ID source.
func (g *LeasedSonyflake) Source() workerid.Source { return g.src }

// Close releases the machine ID; Next then fails with idgen.ErrLeaseLost.
func (g *LeasedSonyflake) Close() error { return g.src.Close() }

// SequenceWaits counts the waits for the next tick after a tick's sequence
// was used up.
func (g *LeasedSonyflake) SequenceWaits() uint64 { return g.core.SequenceWaits() }

// ClockRollbackWaits counts the waits out of a clock rollback.
func (g *LeasedSonyflake) ClockRollbackWaits() uint64 { return g.core.ClockRollbackWaits() }

// ClockRollbackFailures counts the IDs refused for a clock rollback.
func (g *LeasedSonyflake) ClockRollbackFailures() uint64 { return g.core.ClockRollbackFailures() }

var _ idgen.Generator = (*LeasedSonyflake)(nil)
