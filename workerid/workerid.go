package workerid

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/internal/lazyre"
)

// EnvWorkerID names the environment variable Env reads.
const EnvWorkerID = "IDGEN_WORKER_ID"

// Sentinel errors. Other failures wrap idgen.ErrOutOfRange (a worker ID
// outside the space), idgen.ErrNoWorkerIDs (every worker ID held) or
// idgen.ErrUnavailable (the coordination store cannot be reached).
var (
	// ErrNoOrdinal reports a hostname that does not end in -N.
	ErrNoOrdinal = errclass.Invalid("workerid: hostname has no StatefulSet ordinal")
	// ErrConfig reports an invalid configuration value.
	ErrConfig = errclass.Invalid("workerid: invalid configuration")
	// ErrClockSkew reports a local clock further from the lease store's
	// than LeaseConfig.MaxSkew at start: the node refuses to start.
	ErrClockSkew = errclass.Unavailable("workerid: clock skew beyond max skew")
	// ErrWorkerIDHeld reports a lease pinned to one worker ID
	// (LeaseConfig.Pin, the URL key worker_id=) that a live holder has:
	// the store can tell, so a second holder is refused. It wraps
	// idgen.ErrNoWorkerIDs.
	ErrWorkerIDHeld = fmt.Errorf("%w: workerid: worker ID held by a live lease", idgen.ErrNoWorkerIDs)
)

// A Source yields a node's identity. It is an idgen.Lease: pass it as
// snowflake.Config.Lease.
type Source interface {
	idgen.Lease
	// Lost returns a channel that is closed when the identity held at the
	// time of the call can no longer be trusted. It is nil for sources that
	// never lose their identity (Static, Env, Ordinal), and already closed
	// while no identity is held.
	Lost() <-chan struct{}
	// Close stops renewals and releases the worker ID. Identity returns nil
	// afterwards.
	io.Closer
}

// Space is the worker ID space a Source hands out from.
type Space struct {
	// Workers is the number of worker IDs, 2^bits of the layout's worker
	// field (32 for 5 bits): IDs are 0 to Workers-1. Zero means 1024
	// (10 bits).
	Workers int64
	// DatacenterID is carried in every Identity. Zero means 0.
	DatacenterID int64
}

func (s Space) max() int64 {
	if s.Workers == 0 {
		return 1023
	}
	return s.Workers - 1
}

func (s Space) check(what string, id int64) error {
	if s.Workers < 0 {
		return fmt.Errorf("%w: Workers %d is negative", ErrConfig, s.Workers)
	}
	if id < 0 || id > s.max() {
		return fmt.Errorf("%w: workerid: %s gives worker ID %d, outside [0, %d]", idgen.ErrOutOfRange, what, id, s.max())
	}
	return nil
}

// Static is a Source with a fixed identity: never lost, nothing to release.
type Static struct {
	ident   *idgen.Identity
	warning string // for the operator (HostnameHash)
}

var _ Source = (*Static)(nil)

// NewStatic returns a Static source of workerID. A worker ID outside
// [0, space.Workers-1] wraps idgen.ErrOutOfRange.
func NewStatic(workerID int64, space Space) (*Static, error) {
	if err := space.check("static", workerID); err != nil {
		return nil, err
	}
	return &Static{ident: &idgen.Identity{WorkerID: workerID, DatacenterID: space.DatacenterID}}, nil
}

// Env returns a Static source of the IDGEN_WORKER_ID environment variable,
// read by getenv, which the program passes (its environment's); nil reads nothing:
// the variable is not set. A missing or non-integer value wraps ErrConfig; a
// value outside the space wraps idgen.ErrOutOfRange.
func Env(getenv func(string) string, space Space) (*Static, error) {
	var v string
	if getenv != nil {
		v = strings.TrimSpace(getenv(EnvWorkerID))
	}
	if v == "" {
		return nil, fmt.Errorf("%w: %s is not set; want an integer in [0, %d]", ErrConfig, EnvWorkerID, space.max())
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%q is not an integer in [0, %d]", ErrConfig, EnvWorkerID, v, space.max())
	}
	return NewStatic(n, space)
}

var ordinalRE = lazyre.MustCompile(`-([0-9]+)$`)

// Ordinal returns a Static source of a StatefulSet pod's ordinal plus
// offset: hostname "idgen-3" with offset 10 is worker ID 13. An empty
// hostname means os.Hostname (its first label). A hostname not ending in -N
// wraps ErrNoOrdinal; a sum outside the space wraps idgen.ErrOutOfRange.
func Ordinal(hostname string, offset int64, space Space) (*Static, error) {
	if hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("workerid: reading the hostname: %w", err)
		}
		hostname = h
	}
	host, _, _ := strings.Cut(hostname, ".")
	m := ordinalRE().FindStringSubmatch(host)
	if m == nil {
		return nil, fmt.Errorf("%w: %q; want name-N as a StatefulSet pod has (e.g. idgen-0)", ErrNoOrdinal, hostname)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: ordinal %s too large", ErrNoOrdinal, hostname, m[1])
	}
	return NewStatic(n+offset, space)
}

// Identity returns the fixed identity.
func (s *Static) Identity() *idgen.Identity { return s.ident }

// Lost returns nil: a static identity is never lost.
func (s *Static) Lost() <-chan struct{} { return nil }

// Close does nothing.
func (s *Static) Close() error { return nil }

// readState returns the worker ID remembered in path, or -1.
func readState(path string) int64 {
	if path == "" {
		return -1
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// writeState remembers id in path (temporary file, sync, rename).
func writeState(path string, id int64) error {
	if path == "" {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("workerid: state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(strconv.FormatInt(id, 10) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("workerid: state file: %w", err)
	}
	return nil
}
