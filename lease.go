package idgen

import "time"

// An Identity is what a node holds while its lease is good: the worker ID
// and, where the layout has one, the datacenter ID. Identities are
// immutable; a lease that changes hands or IDs returns a new *Identity.
type Identity struct {
	WorkerID     int64
	DatacenterID int64
	// Generation is the fencing counter: it goes up at every acquire, so a
	// later holder of the same worker ID has a higher generation.
	Generation int64
}

// A Lease holds a node's Identity for as long as it can be trusted: a
// static value, an environment variable, or a lease in PostgreSQL, MySQL,
// etcd, ZooKeeper or Redis (package workerid). Generators that take a Lease read it on every ID and
// fail with ErrLeaseLost while it returns nil, so that no ID is issued under
// a lease that may have passed to another node.
type Lease interface {
	// Identity returns the identity held now, or nil while the lease is
	// lost or not yet acquired. It must be cheap (an atomic load): it is
	// called on every ID.
	Identity() *Identity
}

// A LeaseStatus is a snapshot of a renewed lease, for metrics and alerts:
// whether it holds an identity, how long ago its last successful renewal
// (or the acquire) started, and LostAfter, the age at which the holder
// stops trusting it. A holder whose SinceRenewal nears LostAfter is about
// to stop issuing (idgen.ErrLeaseLost).
type LeaseStatus struct {
	Held         bool
	SinceRenewal time.Duration
	LostAfter    time.Duration
}

// A LeaseStatusReporter is a Lease that is renewed against a store
// (package workerid's PostgreSQL, MySQL, etcd, Redis and ZooKeeper leases)
// and can tell its LeaseStatus. Static sources are not.
type LeaseStatusReporter interface {
	LeaseStatus() LeaseStatus
}
