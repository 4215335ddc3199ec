package workerid

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/storetls"
)

// EtcdConfig configures an etcd lease.
type EtcdConfig struct {
	LeaseConfig
	// Endpoints are the etcd client URLs or host:port pairs, one per
	// member. Required. The lease talks to one member at a time, in this
	// order, and moves to the next after a request fails (a member that
	// does not answer within an attempt, has no leader, or refuses).
	Endpoints []string
	// DialTimeout bounds the first contact at startup, per member: the
	// first that answers is used. Zero means 5 s.
	DialTimeout time.Duration
	// TLS, when not nil, dials the endpoints over TLS with it: its
	// RootCAs verify the servers, its Certificates authenticate this
	// client (etcd's --client-cert-auth).
	TLS *tls.Config
	// Username and Password authenticate with etcd's RBAC (both or
	// neither). With --client-cert-auth and no password, etcd takes the
	// client certificate's common name as the user.
	Username, Password string
}

// Etcd is a Source leasing a worker ID in etcd: the key
// /idgen/<namespace>/workers/<id>, created only if absent (a transaction
// comparing its CreateRevision with 0) and attached to an etcd lease of TTL
// seconds that the Source keeps alive every RenewEvery. The generation is
// the key's create revision, which only goes up. The high-water mark is kept
// under /idgen/<namespace>/highwater/<id>, written only while the worker
// key is attached to this node's lease (Etcd is a snowflake.HighWaterStore).
// Acquire takes the preferred (last) ID if it is free and its mark has passed
// (by this node's clock), else the lowest free ID whose mark has passed, else
// the free ID whose mark is earliest.
//
// The worker key's value is the lease record, JSON
// {"owner":"host-pid-rand","time":"2026-11-23T01:00:00.123Z"}: the holder
// writes its wall time (LeaseConfig.Clock) there at acquire and after every
// renewal, as Leaf's ZooKeeper nodes do. A starting node compares its clock
// with the mean of its live peers' times, each advanced by the time since
// its last renewal (the lease's granted TTL minus its remaining TTL, which
// etcd gives in whole seconds: the estimate is centred, within ±0.5 s),
// and refuses to start beyond MaxSkew (ErrClockSkew). It reads the
// MaxSkewPeers most recently renewed records. A record written by an older
// idgen (the owner alone) has no time and is not counted; with no peer
// time the check passes.
type Etcd struct {
	*lease
}

var _ Source = (*Etcd)(nil)

// OpenEtcd connects to the cluster, checks the local clock against its live
// peers' (see Etcd), and acquires a worker ID before it returns. Errors: a
// cluster that cannot be reached within DialTimeout wraps
// idgen.ErrUnavailable; every ID held, idgen.ErrNoWorkerIDs; a bad
// configuration, ErrConfig; a local clock more than MaxSkew from the mean
// of its peers', ErrClockSkew.
func OpenEtcd(ctx context.Context, cfg EtcdConfig) (*Etcd, error) {
	b, lc, err := dialEtcd(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l, err := open(ctx, b, lc)
	if err != nil {
		return nil, err
	}
	return &Etcd{l}, nil
}

// dialEtcd is OpenEtcd up to the acquire: it returns the backend,
// connected and checked, and the resolved configuration.
func dialEtcd(ctx context.Context, cfg EtcdConfig) (*etcdBackend, LeaseConfig, error) {
	lc, err := cfg.LeaseConfig.resolve()
	if err != nil {
		return nil, lc, err
	}
	if len(cfg.Endpoints) == 0 {
		return nil, lc, fmt.Errorf("%w: etcd: no endpoints", ErrConfig)
	}
	if strings.ContainsAny(lc.Namespace, "/ ") {
		return nil, lc, fmt.Errorf("%w: etcd namespace %q must not contain '/' or spaces", ErrConfig, lc.Namespace)
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return nil, lc, fmt.Errorf("%w: etcd: a user needs a password and a password a user", ErrConfig)
	}
	b := &etcdBackend{prefix: "/idgen/" + lc.Namespace + "/", max: lc.max(), owner: lc.Owner,
		ttl: int64(math.Ceil(lc.TTL.Seconds())), endpoints: cfg.Endpoints, now: lc.now}
	for _, ep := range cfg.Endpoints {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: cfg.DialTimeout, Logger: zap.NewNop(),
			TLS: cfg.TLS, Username: cfg.Username, Password: cfg.Password})
		if err != nil {
			b.close()
			return nil, lc, fmt.Errorf("%w: workerid: etcd %s: %s", idgen.ErrUnavailable, echo.Cut(fmt.Sprint(cfg.Endpoints)), echo.CutN(etcdWhy(err, cfg).Error(), 4*echo.Max))
		}
		b.cs = append(b.cs, c)
	}
	b.hungAt = make([]atomic.Int64, len(b.cs))
	// A first read, bounded, tells an unreachable cluster from a slow one:
	// each member in turn, until one answers.
	for range b.cs {
		rctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
		c := b.cl()
		_, err = c.Get(rctx, b.prefix+"workers/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil {
			err = lc.checkSkew(rctx, b.peerClock)
		} else {
			err = b.unreachable(c, etcdWhy(err, cfg))
		}
		cancel()
		if err == nil || !errors.Is(err, idgen.ErrUnavailable) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		b.close()
		return nil, lc, err
	}
	return b, lc, nil
}

// etcdWhy adds to err, a timeout of the gRPC client which does not say
// why it could not connect, what a TLS handshake with the first endpoint
// says: the server's certificate refused, or this client's.
func etcdWhy(err error, cfg EtcdConfig) error {
	if cfg.TLS == nil || !errors.Is(err, context.DeadlineExceeded) && status.Code(err) != codes.DeadlineExceeded {
		return err
	}
	addr := cfg.Endpoints[0]
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		addr = rest
	}
	if why := storetls.Probe(addr, cfg.TLS, min(cfg.DialTimeout, 2*time.Second)); why != nil {
		return fmt.Errorf("%v: TLS with %s: %w", err, addr, why)
	}
	return err
}

type etcdBackend struct {
	// cs holds a client of each member, in the order of the endpoints;
	// cur is the one in use, until a request fails (unreachable). A client of all
	// members round-robins its requests, so that a member frozen or
	// partitioned away, which keeps its TCP connections, would still get
	// its share of them: each waits out its attempt, and a renewal that
	// keeps landing on it loses the lease with a quorum up.
	cs        []*clientv3.Client
	cur       atomic.Int32
	hungAt    []atomic.Int64 // per member: when a request last gave up waiting on it (Unix ns)
	prefix    string
	max       int64
	owner     string
	ttl       int64 // seconds
	endpoints []string
	now       func() time.Time // the local clock, written into the record

	mu      sync.Mutex
	leaseID clientv3.LeaseID // of the ID held
}

// cl returns the client of the member in use.
func (b *etcdBackend) cl() *clientv3.Client { return b.cs[b.cur.Load()] }

// HungMemberPause is how long an etcd lease passes over a member after a
// request to it gave up waiting (a member frozen or partitioned away),
// while another has not failed that way: moving on after a quick failure
// of the next member (no leader yet, the leader changed) must not lead
// back to the hung one.
const HungMemberPause = 30 * time.Second

// unreachable moves on, if c is still the member in use, to the next one
// that has not hung within HungMemberPause (else simply the next), and
// wraps err: every request that failed to complete (a member that did not
// answer within its attempt, one without a leader, a connection refused)
// goes to another member from then on.
func (b *etcdBackend) unreachable(c *clientv3.Client, err error) error {
	if i := b.cur.Load(); b.cs[i] == c {
		now := time.Now().UnixNano()
		if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			b.hungAt[i].Store(now)
		}
		n := int32(len(b.cs))
		next := (i + 1) % n
		for k := int32(1); k < n; k++ {
			if j := (i + k) % n; b.hungAt[j].Load() == 0 || now-b.hungAt[j].Load() > int64(HungMemberPause) {
				next = j
				break
			}
		}
		b.cur.CompareAndSwap(i, next)
	}
	return fmt.Errorf("%w: workerid: etcd %s: %s", idgen.ErrUnavailable, echo.Cut(fmt.Sprint(b.endpoints)), echo.CutN(err.Error(), 4*echo.Max))
}

// MaxSkewPeers is how many live peers' lease records (the most recently
// renewed) an etcd lease reads for its clock check at start.
const MaxSkewPeers = 32

// etcdRecord is the worker key's value. Time is absent from records written
// by idgen before the clock check; such records are not counted.
type etcdRecord struct {
	Owner string    `json:"owner"`
	Time  time.Time `json:"time,omitzero"`
}

// record returns the lease record to write now.
func (b *etcdBackend) record() string {
	v, _ := json.Marshal(etcdRecord{Owner: b.owner, Time: b.now().UTC()})
	return string(v)
}

// parseRecord returns the wall time in a lease record, or ok false for a
// record without one (an older idgen wrote the owner alone).
func parseRecord(v []byte) (t time.Time, ok bool) {
	var r etcdRecord
	if json.Unmarshal(v, &r) != nil || r.Time.IsZero() {
		return time.Time{}, false
	}
	return r.Time, true
}

// peerClock estimates the peers' clock now: the mean of the times in the
// MaxSkewPeers most recently written lease records, each advanced by the
// time since its holder's last renewal (granted minus remaining TTL, less
// half of etcd's one-second rounding). ok is false when no live record has
// a time.
func (b *etcdBackend) peerClock(ctx context.Context) (mean time.Time, clock string, ok bool, err error) {
	c := b.cl()
	resp, err := c.Get(ctx, b.prefix+"workers/", clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(MaxSkewPeers))
	if err != nil {
		return mean, "", false, b.unreachable(c, err)
	}
	var first time.Time
	var sum time.Duration // from first, so that the sum cannot overflow
	n := 0
	for _, kv := range resp.Kvs {
		t, has := parseRecord(kv.Value)
		if !has || kv.Lease == 0 {
			continue
		}
		ttl, err := c.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			return mean, "", false, b.unreachable(c, err)
		}
		if ttl.TTL <= 0 {
			continue // expired since the read
		}
		since := max(time.Duration(ttl.GrantedTTL-ttl.TTL)*time.Second-500*time.Millisecond, 0)
		t = t.Add(since)
		if n == 0 {
			first = t
		}
		sum += t.Sub(first)
		n++
	}
	if n == 0 {
		return mean, "", false, nil
	}
	return first.Add(sum / time.Duration(n)), fmt.Sprintf("the mean of %d live etcd peers' clocks under %v %sworkers/", n, b.endpoints, b.prefix), true, nil
}

func (b *etcdBackend) workerKey(id int64) string {
	return b.prefix + "workers/" + strconv.FormatInt(id, 10)
}
func (b *etcdBackend) markKey(id int64) string {
	return b.prefix + "highwater/" + strconv.FormatInt(id, 10)
}

func (b *etcdBackend) acquire(ctx context.Context, w want, clk idgen.Clock) (id, gen int64, hw time.Time, err error) {
	c := b.cl()
	resp, err := c.Get(ctx, b.prefix+"workers/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, 0, hw, b.unreachable(c, err)
	}
	taken := map[int64]bool{}
	for _, kv := range resp.Kvs {
		n, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), b.prefix+"workers/"), 10, 64)
		if err == nil {
			taken[n] = true
		}
	}
	marks, err := c.Get(ctx, b.prefix+"highwater/", clientv3.WithPrefix())
	if err != nil {
		return 0, 0, hw, b.unreachable(c, err)
	}
	stored := map[int64]time.Time{}
	for _, kv := range marks.Kvs {
		n, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), b.prefix+"highwater/"), 10, 64)
		if m, perr := time.Parse(time.RFC3339Nano, string(kv.Value)); err == nil && perr == nil {
			stored[n] = m
		}
	}
	var free []int64
	for i := int64(0); i <= b.max; i++ {
		if !taken[i] {
			free = append(free, i)
		}
	}
	candidates := acquireOrder(free, stored, w, clk.Now())
	if len(candidates) == 0 {
		return 0, 0, hw, b.full()
	}
	g, err := c.Grant(ctx, b.ttl)
	if err != nil {
		return 0, 0, hw, b.unreachable(c, err)
	}
	for _, id := range candidates {
		key := b.workerKey(id)
		tr, err := c.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, b.record(), clientv3.WithLease(g.ID)), clientv3.OpGet(b.markKey(id))).
			Commit()
		if err != nil {
			b.revoke(g.ID)
			return 0, 0, hw, b.unreachable(c, err)
		}
		if !tr.Succeeded {
			continue
		}
		if kvs := tr.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
			hw, _ = time.Parse(time.RFC3339Nano, string(kvs[0].Value))
		}
		b.mu.Lock()
		b.leaseID = g.ID
		b.mu.Unlock()
		return id, tr.Header.Revision, hw, nil
	}
	b.revoke(g.ID)
	return 0, 0, hw, b.full()
}

func (b *etcdBackend) full() error {
	return fmt.Errorf("%w: workerid: all %d worker IDs under etcd %sworkers/ are leased", idgen.ErrNoWorkerIDs, b.max+1, b.prefix)
}

func (b *etcdBackend) revoke(id clientv3.LeaseID) {
	c := b.cl()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Revoke(ctx, id)
}

func (b *etcdBackend) lease() clientv3.LeaseID {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.leaseID
}

// renew keeps the lease alive, then writes the wall time into the lease
// record (for the clock check of nodes that start).
func (b *etcdBackend) renew(ctx context.Context, id, gen int64) error {
	c := b.cl()
	lid := b.lease()
	resp, err := c.KeepAliveOnce(ctx, lid)
	if leaseNotFound(err) || (err == nil && resp.TTL <= 0) {
		return errGone
	}
	if err != nil {
		return b.unreachable(c, err)
	}
	key := b.workerKey(id)
	tr, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", lid), clientv3.Compare(clientv3.CreateRevision(key), "=", gen)).
		Then(clientv3.OpPut(key, b.record(), clientv3.WithLease(lid))).
		Commit()
	switch {
	case err != nil:
		return b.unreachable(c, err)
	case !tr.Succeeded:
		return errGone
	}
	return nil
}

// release revokes the lease, which deletes the worker key. With settle, a
// transaction first sets the mark and deletes the worker key while it is
// still this lease's: a mark write cut short (a Txn the server applies
// after its client gave up) compares the key's lease and fails after it.
func (b *etcdBackend) release(ctx context.Context, id, gen int64, settle *time.Time) error {
	c := b.cl()
	lid := b.lease()
	if lid == 0 {
		return nil
	}
	freed := false
	if settle != nil {
		key := b.workerKey(id)
		mark := clientv3.OpDelete(b.markKey(id))
		if !settle.IsZero() {
			mark = clientv3.OpPut(b.markKey(id), settle.UTC().Format(time.RFC3339Nano))
		}
		tr, err := c.Txn(ctx).
			If(clientv3.Compare(clientv3.LeaseValue(key), "=", lid), clientv3.Compare(clientv3.CreateRevision(key), "=", gen)).
			Then(mark, clientv3.OpDelete(key)).
			Commit()
		if err != nil {
			return b.unreachable(c, err)
		}
		freed = tr.Succeeded
	}
	_, err := c.Revoke(ctx, lid)
	if leaseNotFound(err) || freed {
		err = nil // the ID is free; a lease left holding no key expires
	}
	if err == nil {
		b.mu.Lock()
		if b.leaseID == lid {
			b.leaseID = 0
		}
		b.mu.Unlock()
	}
	return err
}

func (b *etcdBackend) storeMark(ctx context.Context, id, gen int64, mark time.Time) error {
	c := b.cl()
	key := b.workerKey(id)
	tr, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", b.lease()), clientv3.Compare(clientv3.CreateRevision(key), "=", gen)).
		Then(clientv3.OpPut(b.markKey(id), mark.UTC().Format(time.RFC3339Nano))).
		Commit()
	if err != nil {
		return b.unreachable(c, err)
	}
	if !tr.Succeeded {
		return errGone
	}
	return nil
}

func (b *etcdBackend) close() {
	for _, c := range b.cs {
		c.Close()
	}
}

// leaseNotFound reports etcd's "requested lease not found"
// (rpctypes.ErrLeaseNotFound, which the client returns as an EtcdError),
// matched by its gRPC code and text, as the client builds it.
func leaseNotFound(err error) bool {
	var e interface {
		Code() codes.Code
		error
	}
	return errors.As(err, &e) && e.Code() == codes.NotFound && e.Error() == "etcdserver: requested lease not found"
}
