package strategies

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen/snowflake"
)

// KeyspaceKey is the spec key every strategy takes to name the keyspace
// its IDs must be unique in: generators of one config whose IDs never meet
// (separate tables, separate services) may issue the same IDs when their
// keyspaces differ. It changes no ID; Keyspace and config.Load read it.
const KeyspaceKey = "keyspace"

// KeyspaceDoc documents KeyspaceKey.
const KeyspaceDoc = "name of the keyspace the IDs must be unique in (default: the one every generator of a config shares); " +
	"generators of different keyspaces may issue the same IDs"

// Keyspace is Options.Keyspace with zero Options.
func Keyspace(spec Spec) (string, error) { return Options{}.Keyspace(spec) }

// Keyspace describes the IDs spec's generator can issue, to tell whether
// two generators built apart would issue the same IDs: two specs whose
// Keyspace texts are equal and not "" would, each counting its own
// sequence over the same layout, epoch and node values, however the specs
// write them (a preset or its layout text, worker=1 or
// worker_source=static:1, Options.WorkerID overriding both), in the same
// keyspace (KeyspaceKey). The text reads as
//
//	layout time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z, datacenter 0, worker 1
//
// prefixed by `keyspace "NAME": ` when the spec names one. It is "" where
// two generators' IDs cannot meet: random bits (uuidv4, uuidv7, ULID,
// KSUID, TypeID, a layout with a random field), a process-wide counter
// (xid, uuidv1, uuidv6), a store that hands each generator its own IDs
// (segment, ticket, instagram), a worker ID leased from a store. Nothing is
// built and no store is contacted; errors are the spec's, as New gives them.
func (o Options) Keyspace(spec Spec) (string, error) {
	s, p, err := o.Resolve(spec)
	if err != nil {
		return "", err
	}
	if s.Keyspace == nil {
		return "", nil
	}
	space, err := s.Keyspace(p)
	if err != nil || space == "" {
		return "", err
	}
	if name := p.String(KeyspaceKey, ""); name != "" {
		space = fmt.Sprintf("keyspace %q: %s", name, space)
	}
	return space, nil
}

// leaseSchemes are the worker sources that lease a worker ID from a store,
// which hands each generator its own.
var leaseSchemes = []string{"postgres", "postgresql", "mysql", "redis", "rediss", "etcd", "zk"}

// sourceNode returns the node value p's worker_source gives, as Keyspace
// compares it: N for static:N, Options.WorkerID for env, the source itself
// for one that reads the host (ordinal, ip, hostname-hash: the same for
// two generators of one process); leased is true for a store's lease.
func (p *Params) sourceNode() (value string, leased bool) {
	src := p.String("worker_source", "")
	scheme, rest, _ := strings.Cut(src, ":")
	switch {
	case scheme == "static":
		return canonicalNode(rest), false
	case src == "env":
		return canonicalNode(p.opts.WorkerID), false
	case strings.Contains(src, "://") && slices.Contains(leaseSchemes, scheme):
		return "", true
	}
	return "from worker_source=" + src, false
}

// canonicalNode writes a decimal node value as Keyspace compares it (03 is
// 3); other text (mac, ip) stays as it is.
func canonicalNode(v string) string {
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return strconv.FormatUint(n, 10)
	}
	return v
}

// layoutKeyspace is Keyspace's text for a Snowflake-family layout whose
// node fields hold nodes (the worker field from p's worker_source, when it
// sets one): "" for a random field or a leased worker ID.
func layoutKeyspace(p *Params, l snowflake.Layout, nodes map[string]string) string {
	if _, ok := l.Field(snowflake.FieldRandom); ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("layout " + l.WithDefaults().String())
	worker, _, _ := l.WorkerField()
	for _, f := range l.Fields {
		if !slices.Contains(snowflake.NodeFields(), f.Name) {
			continue
		}
		v, ok := nodes[f.Name]
		if !ok {
			v = "0"
		}
		if f.Name == worker && p.Has("worker_source") {
			src, leased := p.sourceNode()
			if leased {
				return ""
			}
			v = src
		}
		fmt.Fprintf(&b, ", %s %s", f.Name, canonicalNode(v))
	}
	return b.String()
}
