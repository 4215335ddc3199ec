package compare

import (
	"strings"

	"github.com/idgenkit/idgen"
)

// Facts are what a scheme is, from its layout, whatever it costs.
type Facts struct {
	KeyBytes int `json:"key_bytes"` // the key column's bytes
	// Ordered reports that keys sort in creation order (across nodes:
	// k-sorted); Sequence that the order is a database sequence's.
	Ordered  bool `json:"ordered"`
	Sequence bool `json:"sequence,omitempty"`
	// Coordination is what generators need to stay unique: "none", "a
	// worker ID" (one per node), "a store" (a database or Redis round trip
	// per segment or ID), or "the database" (its sequence or DEFAULT).
	Coordination string `json:"coordination"`
	// RandomBits are the random bits of each ID (the fields named rand*,
	// random*, payload*): how hard the next ID is to guess.
	RandomBits int `json:"random_bits"`
	// RevealsTime and RevealsWorker report fields that give away the
	// creation time, and the node that issued the ID.
	RevealsTime   bool `json:"reveals_time"`
	RevealsWorker bool `json:"reveals_worker"`
	// JSSafe reports that every ID fits 2^53, so JavaScript's numbers hold
	// it exactly.
	JSSafe bool `json:"js_safe"`
	// ServerDefault is how PostgreSQL can generate the keys itself (a
	// column DEFAULT, with the first version that has it); empty when it
	// cannot.
	ServerDefault string `json:"server_default,omitempty"`
}

// Coordination values of Facts.
const (
	CoordNone     = "none"
	CoordWorker   = "a worker ID"
	CoordStore    = "a store"
	CoordDatabase = "the database"
)

// serverDefaults are the PostgreSQL DEFAULTs of the client schemes the
// server can generate too.
var serverDefaults = map[string]string{
	"uuidv4": "gen_random_uuid() (PostgreSQL 13+)",
	"uuidv7": "uuidv7() (PostgreSQL 18+)",
}

// factsOf returns p's Facts: the Baseline's, a server key's, or from its
// scheme's fields.
func factsOf(p *plan, external bool) *Facts {
	switch {
	case p.series:
		return nil
	case p.scheme == nil: // the Baseline
		return &Facts{KeyBytes: 8, Ordered: true, Sequence: true, Coordination: CoordDatabase, JSSafe: true, ServerDefault: "bigserial (a sequence)"}
	}
	f := &Facts{KeyBytes: p.keyBytes, Ordered: p.ordered(), Coordination: CoordNone, ServerDefault: serverDefaults[p.scheme.Name]}
	switch {
	case p.serverKey != "":
		f.Coordination = CoordDatabase
	case external:
		f.Coordination = CoordStore
	case p.workerKey != "":
		f.Coordination = CoordWorker
	}
	bits := 0
	for _, fd := range p.scheme.Decompose(p.scheme.Zero()) {
		bits += fd.Bits
		n := fd.Name
		switch {
		case strings.HasPrefix(n, "rand"), strings.HasPrefix(n, "payload"):
			f.RandomBits += fd.Bits
		case strings.Contains(n, "time"), strings.HasPrefix(n, "unix_ts"):
			f.RevealsTime = true
		case n == "worker", n == "datacenter", n == "machine", n == "node", n == "shard", n == "process", n == "pid", n == "region":
			f.RevealsWorker = true
		}
	}
	f.JSSafe = p.column == idgen.ColumnBigint && bits <= 53
	return f
}
