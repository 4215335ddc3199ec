package workerid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
)

// DefaultZKPath is the ZooKeeper node under which a ZK lease keeps its
// nodes when the URL names none.
const DefaultZKPath = "/idgen"

// ZKConfig configures a ZooKeeper lease.
type ZKConfig struct {
	LeaseConfig
	// Servers are the ZooKeeper host:port pairs. Required.
	Servers []string
	// Path is the root node, /idgen/<namespace> when empty.
	Path string
	// Node keys the persistent node that remembers this node's worker ID
	// across restarts, as Leaf's ip:port does. Empty means the hostname.
	Node string
	// DialTimeout bounds the first session at startup. Zero means 5 s.
	DialTimeout time.Duration
	// User and Password, when set, authenticate the session with
	// ZooKeeper's digest scheme, and every node created at or under Path
	// gets the ACL digest:User:<hash>:cdrwa alone: another client (without
	// this user's password) can neither read them nor delete a live
	// worker's claim. An existing workers node whose ACL lets anyone
	// delete is refused (ErrConfig). Empty: the open ACL world:anyone.
	User, Password string
}

// ZK is a Source leasing a worker ID in ZooKeeper. Under the root (Path):
//
//	workers/<id>     ephemeral, the claim: created only if absent, it ends
//	                 with the session (of TTL); data: the owner
//	forever/<node>   persistent, Leaf's scheme: {"worker_id":N,
//	                 "timestamp":ms} written at acquire and at every renewal
//	highwater/<id>   persistent, the high-water mark (RFC 3339)
//
// The generation is the claim's creation zxid, which only goes up. A
// renewal checks that the claim still belongs to this node's session and
// writes the node's time to forever/<node>. On a start without a state file
// the worker ID forever/<node> names is preferred; its timestamp counts as
// a high-water mark of that ID (Leaf's startup clock check: a generator
// whose clock is behind it waits or fails by its rollback policy). The
// high-water mark is written only while the claim is this session's (ZK is
// a snowflake.HighWaterStore).
type ZK struct {
	*lease
}

var _ Source = (*ZK)(nil)

// OpenZK connects to the ensemble and acquires a worker ID before it
// returns. Errors: an ensemble that cannot be reached within DialTimeout
// wraps idgen.ErrUnavailable; every ID held, idgen.ErrNoWorkerIDs; a bad
// configuration, or a session timeout the server grants below TTL
// (its maxSessionTimeout), ErrConfig.
func OpenZK(ctx context.Context, cfg ZKConfig) (*ZK, error) {
	lc, err := cfg.LeaseConfig.resolve()
	if err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%w: ZooKeeper: no servers", ErrConfig)
	}
	for _, srv := range cfg.Servers {
		if _, _, err := net.SplitHostPort(srv); err != nil || strings.Contains(srv, "@") {
			return nil, fmt.Errorf("%w: ZooKeeper server %q: want host:port", ErrConfig, echo.Cut(redact.Spec(srv)))
		}
	}
	if cfg.Path == "" {
		cfg.Path = DefaultZKPath + "/" + lc.Namespace
	}
	if !strings.HasPrefix(cfg.Path, "/") || path.Clean(cfg.Path) != cfg.Path || cfg.Path == "/" {
		return nil, fmt.Errorf("%w: ZooKeeper path %q: want an absolute node path such as /idgen/default", ErrConfig, cfg.Path)
	}
	if cfg.Node == "" {
		cfg.Node, _ = os.Hostname()
	}
	if cfg.Node == "" || strings.Contains(cfg.Node, "/") {
		return nil, fmt.Errorf("%w: ZooKeeper node key %q: want ip:port or a hostname, without '/'", ErrConfig, cfg.Node)
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if (cfg.User == "") != (cfg.Password == "") || strings.Contains(cfg.User, ":") {
		return nil, fmt.Errorf("%w: ZooKeeper digest user %q: want a user without ':' and a password, or neither", ErrConfig, cfg.User)
	}
	b := &zkBackend{root: cfg.Path, node: cfg.Node, max: lc.max(), owner: lc.Owner, servers: cfg.Servers, acl: zk.WorldACL(zk.PermAll)}
	if cfg.User != "" {
		b.acl = zk.DigestACL(zk.PermAll, cfg.User, cfg.Password)
	}
	sess := make(chan struct{}, 1)
	c, _, err := zk.Connect(cfg.Servers, lc.TTL, zk.WithLogger(b), zk.WithEventCallback(func(ev zk.Event) {
		if ev.State == zk.StateHasSession {
			select {
			case sess <- struct{}{}:
			default:
			}
		}
	}))
	if err != nil {
		return nil, fmt.Errorf("%w: ZooKeeper servers %s: %s", ErrConfig, echo.Cut(fmt.Sprint(cfg.Servers)), echo.Cut(err.Error()))
	}
	b.c = c
	select {
	case <-sess:
	case <-time.After(cfg.DialTimeout):
		c.Close()
		return nil, b.unreachable(fmt.Errorf("no session within %v", cfg.DialTimeout))
	case <-ctx.Done():
		c.Close()
		return nil, b.unreachable(ctx.Err())
	}
	// The client sends the session event before it logs the granted
	// timeout (Printf below): wait a moment for the log line.
	for wait := time.Now().Add(time.Second); b.timeout() == 0 && time.Now().Before(wait); {
		time.Sleep(time.Millisecond)
	}
	if got := b.timeout(); got > 0 && got < lc.TTL {
		c.Close()
		return nil, fmt.Errorf("%w: ZooKeeper granted a session timeout of %v, below the TTL %v: lower ttl or raise the servers' maxSessionTimeout", ErrConfig, got, lc.TTL)
	}
	if cfg.User != "" {
		if err := c.AddAuth("digest", []byte(cfg.User+":"+cfg.Password)); err != nil {
			c.Close()
			return nil, b.unreachable(fmt.Errorf("digest auth as %q: %v", cfg.User, err))
		}
	}
	err = b.do(ctx, func() error {
		for _, p := range []string{b.root + "/workers", b.root + "/forever", b.root + "/highwater"} {
			if err := b.mkdirs(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && cfg.User != "" {
		err = b.checkACL()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	l, err := open(ctx, b, lc)
	if err != nil {
		return nil, err
	}
	return &ZK{l}, nil
}

type zkBackend struct {
	c       *zk.Conn
	root    string
	node    string
	max     int64
	owner   string
	servers []string
	acl     []zk.ACL // of the nodes created at or under root

	mu      sync.Mutex
	granted time.Duration // the session timeout the server granted

	// markMu is held by a mark write for as long as it runs, even past its
	// context: do returns at the context's end but the ZooKeeper calls run
	// on, so without it a mark written ahead and cut short by Close could
	// land after the true mark Close writes back.
	markMu sync.Mutex

	// orphans are the claims (worker ID → generation) this node gave up
	// but could not delete (the release failed, the store away): the
	// session may have outlived the cut, and its ephemeral node with it.
	// acquire deletes them first, or the node would find its own old claim
	// in the way for as long as its session lives. Guarded by mu.
	orphans map[int64]int64
}

// Printf receives the client's log lines: it keeps the session timeout the
// server granted and prints nothing (a library does not print).
func (b *zkBackend) Printf(format string, args ...any) {
	if strings.HasPrefix(format, "authenticated:") && len(args) == 2 {
		if ms, ok := args[1].(int32); ok {
			b.mu.Lock()
			b.granted = time.Duration(ms) * time.Millisecond
			b.mu.Unlock()
		}
	}
}

func (b *zkBackend) timeout() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.granted
}

func (b *zkBackend) unreachable(err error) error {
	return fmt.Errorf("%w: workerid: ZooKeeper %s: %s", idgen.ErrUnavailable, echo.Cut(fmt.Sprint(b.servers)), echo.CutN(err.Error(), 4*echo.Max))
}

// do runs f, which calls the client (whose calls take no context), and
// returns at ctx's end if f has not returned by then. Errors other than
// errGone and idgen.ErrNoWorkerIDs wrap idgen.ErrUnavailable.
func (b *zkBackend) do(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil || errors.Is(err, errGone) || errors.Is(err, idgen.ErrNoWorkerIDs) {
		return err
	}
	if errors.Is(err, zk.ErrNoAuth) {
		err = fmt.Errorf("%w (the nodes' ACL does not admit this client: check the user and password_file)", err)
	}
	return b.unreachable(err)
}

func (b *zkBackend) mkdirs(p string) error {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		acl := b.acl
		if strings.HasPrefix(b.root, cur+"/") {
			acl = zk.WorldACL(zk.PermAll) // above the root: others keep their own paths
		}
		_, err := b.c.Create(cur, nil, 0, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// checkACL refuses a workers node (made before, without this user) whose
// ACL lets any client delete the claims under it.
func (b *zkBackend) checkACL() error {
	p := b.root + "/workers"
	acl, _, err := b.c.GetACL(p)
	if err != nil {
		return b.unreachable(err)
	}
	for _, a := range acl {
		if a.Scheme == "world" && a.Perms&zk.PermDelete != 0 {
			return fmt.Errorf("%w: ZooKeeper node %s has the ACL world:%s: any client could delete a live worker's claim; set its ACL to this user's (zkCli setAcl) or use a new path", ErrConfig, p, a.ID)
		}
	}
	return nil
}

func (b *zkBackend) workerPath(id int64) string {
	return b.root + "/workers/" + strconv.FormatInt(id, 10)
}
func (b *zkBackend) markPath(id int64) string {
	return b.root + "/highwater/" + strconv.FormatInt(id, 10)
}
func (b *zkBackend) foreverPath() string { return b.root + "/forever/" + b.node }

// endpoint is the data of forever/<node>, Leaf's Endpoint with the worker
// ID it holds.
type endpoint struct {
	WorkerID  int64 `json:"worker_id"`
	Timestamp int64 `json:"timestamp"` // Unix milliseconds
}

// putForever writes id and the time to forever/<node>.
func (b *zkBackend) putForever(id int64) error {
	data, _ := json.Marshal(endpoint{WorkerID: id, Timestamp: time.Now().UnixMilli()})
	_, err := b.c.Set(b.foreverPath(), data, -1)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = b.c.Create(b.foreverPath(), data, 0, b.acl)
		if errors.Is(err, zk.ErrNodeExists) { // another process of this node created it meanwhile
			_, err = b.c.Set(b.foreverPath(), data, -1)
		}
	}
	return err
}

func (b *zkBackend) acquire(ctx context.Context, w want, clk idgen.Clock) (id, gen int64, hw time.Time, err error) {
	err = b.do(ctx, func() error {
		if err := b.dropOrphans(); err != nil {
			return err
		}
		var last *endpoint
		if data, _, err := b.c.Get(b.foreverPath()); err == nil {
			var e endpoint
			if json.Unmarshal(data, &e) == nil {
				last = &e
			}
		} else if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		if w.id < 0 && !w.only && last != nil {
			w.id = last.WorkerID
		}
		held, _, err := b.c.Children(b.root + "/workers")
		if err != nil {
			return err
		}
		taken := map[int64]bool{}
		for _, name := range held {
			if n, err := strconv.ParseInt(name, 10, 64); err == nil {
				taken[n] = true
			}
		}
		names, _, err := b.c.Children(b.root + "/highwater")
		if err != nil {
			return err
		}
		marks := map[int64]time.Time{}
		for _, name := range names {
			n, err := strconv.ParseInt(name, 10, 64)
			if err != nil || n > b.max || taken[n] {
				continue
			}
			data, _, err := b.c.Get(b.markPath(n))
			if err != nil {
				continue
			}
			if m, err := time.Parse(time.RFC3339Nano, string(data)); err == nil {
				marks[n] = m
			}
		}
		var free []int64
		for i := int64(0); i <= b.max; i++ {
			if !taken[i] {
				free = append(free, i)
			}
		}
		for _, cand := range acquireOrder(free, marks, w, clk.Now()) {
			_, err := b.c.Create(b.workerPath(cand), []byte(b.owner), zk.FlagEphemeral, b.acl)
			if errors.Is(err, zk.ErrNodeExists) {
				continue
			}
			if err != nil {
				return err
			}
			_, st, err := b.c.Exists(b.workerPath(cand))
			if err != nil {
				return err
			}
			id, gen = cand, st.Czxid
			if ctx.Err() != nil { // given up on: do not leave a claim behind
				b.c.Delete(b.workerPath(cand), -1)
				return ctx.Err()
			}
			if data, _, err := b.c.Get(b.markPath(id)); err == nil {
				hw, _ = time.Parse(time.RFC3339Nano, string(data))
			}
			if last != nil && last.WorkerID == id {
				// Leaf's startup check: this node last wrote its time here.
				if ts := time.UnixMilli(last.Timestamp); ts.After(hw) {
					hw = ts
				}
			}
			return b.putForever(id)
		}
		return fmt.Errorf("%w: workerid: all %d worker IDs under ZooKeeper %s/workers are leased", idgen.ErrNoWorkerIDs, b.max+1, b.root)
	})
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	return id, gen, hw, nil
}

// mine returns the claim's version if id's claim is this session's of
// generation gen, else errGone.
func (b *zkBackend) mine(id, gen int64) (int32, error) {
	_, st, err := b.c.Get(b.workerPath(id))
	if errors.Is(err, zk.ErrNoNode) {
		return 0, errGone
	}
	if err != nil {
		return 0, err
	}
	if st.Czxid != gen || st.EphemeralOwner != b.c.SessionID() {
		return 0, errGone
	}
	return st.Version, nil
}

func (b *zkBackend) renew(ctx context.Context, id, gen int64) error {
	return b.do(ctx, func() error {
		if _, err := b.mine(id, gen); err != nil {
			return err
		}
		return b.putForever(id)
	})
}

func (b *zkBackend) release(ctx context.Context, id, gen int64, settle *time.Time) error {
	err := b.do(ctx, func() error {
		b.markMu.Lock()
		defer b.markMu.Unlock()
		v, err := b.mine(id, gen)
		if err != nil {
			return err
		}
		if settle == nil {
			return b.c.Delete(b.workerPath(id), v)
		}
		if err := b.ensureMark(id); err != nil {
			return err
		}
		var data []byte // empty: none
		if !settle.IsZero() {
			data = []byte(settle.UTC().Format(time.RFC3339Nano))
		}
		// One transaction: a mark write that read the claim before it
		// fails its check of the claim's version after.
		_, err = b.c.Multi(
			&zk.SetDataRequest{Path: b.markPath(id), Data: data, Version: -1},
			&zk.DeleteRequest{Path: b.workerPath(id), Version: v},
		)
		return err
	})
	if errors.Is(err, errGone) || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
		return nil
	}
	if err != nil {
		b.mu.Lock()
		if b.orphans == nil {
			b.orphans = map[int64]int64{}
		}
		b.orphans[id] = gen
		b.mu.Unlock()
	}
	return err
}

// dropOrphans deletes the claims in orphans that are still this session's
// (same generation); a claim gone or another's is forgotten.
func (b *zkBackend) dropOrphans() error {
	b.mu.Lock()
	orphans := maps.Clone(b.orphans)
	b.mu.Unlock()
	for id, gen := range orphans {
		v, err := b.mine(id, gen)
		if err == nil {
			err = b.c.Delete(b.workerPath(id), v)
		}
		if err != nil && !errors.Is(err, errGone) && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return err
		}
		b.mu.Lock()
		if b.orphans[id] == gen {
			delete(b.orphans, id)
		}
		b.mu.Unlock()
	}
	return nil
}

func (b *zkBackend) storeMark(ctx context.Context, id, gen int64, mark time.Time) error {
	return b.putMark(ctx, id, gen, mark)
}

// ensureMark creates id's mark node if missing.
func (b *zkBackend) ensureMark(id int64) error {
	_, err := b.c.Create(b.markPath(id), nil, 0, b.acl)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// putMark writes mark beside the claim while it is this node's, unless the
// stored mark is at or above it.
func (b *zkBackend) putMark(ctx context.Context, id, gen int64, mark time.Time) error {
	return b.do(ctx, func() error {
		b.markMu.Lock()
		defer b.markMu.Unlock()
		v, err := b.mine(id, gen)
		if err != nil {
			return err
		}
		data, st, err := b.c.Get(b.markPath(id))
		if errors.Is(err, zk.ErrNoNode) {
			if err := b.ensureMark(id); err != nil {
				return err
			}
			data, st, err = b.c.Get(b.markPath(id))
		}
		if err != nil {
			return err
		}
		if cur, perr := time.Parse(time.RFC3339Nano, string(data)); perr == nil && !mark.After(cur) {
			return nil
		}
		_, err = b.c.Multi(
			&zk.CheckVersionRequest{Path: b.workerPath(id), Version: v},
			&zk.SetDataRequest{Path: b.markPath(id), Data: []byte(mark.UTC().Format(time.RFC3339Nano)), Version: st.Version},
		)
		if errors.Is(err, zk.ErrNoNode) {
			return errGone
		}
		return err
	})
}

func (b *zkBackend) close() { b.c.Close() }
