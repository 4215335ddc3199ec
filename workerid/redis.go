package workerid

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idgenkit/idgen"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/storetls"
	"github.com/idgenkit/idgen/internal/storetls/redistls"
)

// Redis is a Source leasing a worker ID in Redis, as CosId's and yitter's
// distributors do: the key idgen:{<namespace>}:worker:<id>, set with
// SET NX PX TTL to a token (the owner and the generation), renewed by a Lua
// script that extends the key only while it still holds this node's token,
// and deleted on release by the same compare. The generation (fencing
// token) is INCR idgen:{<namespace>}:generation, taken at every acquire.
// The high-water mark is kept under idgen:{<namespace>}:highwater:<id>
// (Unix nanoseconds), written only while the worker key holds this node's
// token (Redis is a snowflake.HighWaterStore). Acquire reads every worker
// key and mark, then takes the free IDs in the backend interface's order.
// The keys of a namespace share one hash slot ({<namespace>}).
//
// Durability: Redis replicates asynchronously and, by default, does not
// sync writes to disk. A failover to a replica, or a restart from an old
// snapshot, can lose a lease write: the new primary may not have the
// worker key at all, and a second node then takes a worker ID that is
// still in use, for up to a TTL. Use it only on a single Redis without
// failover (or with appendfsync always and no replica promotion), and
// prefer PostgreSQL, MariaDB, etcd or ZooKeeper where duplicate IDs would
// cost more than an outage.
type Redis struct {
	*lease
}

var _ Source = (*Redis)(nil)

// RedisConfig configures a Redis lease.
type RedisConfig struct {
	LeaseConfig
}

// OpenRedis connects to the Redis at rawURL (redis://[user:pass@]host:port/db,
// with go-redis's URL options; rediss:// for TLS, with tls_ca=, tls_cert=,
// tls_key=, tls_server_name= naming files, and password_file= for the
// password of the URL's ACL user) and acquires a worker ID before it returns.
// Errors: a server that cannot be reached wraps idgen.ErrUnavailable; every
// ID held, idgen.ErrNoWorkerIDs; a bad configuration, ErrConfig.
func OpenRedis(ctx context.Context, rawURL string, cfg RedisConfig) (*Redis, error) {
	b, lc, err := dialRedis(ctx, rawURL, cfg)
	if err != nil {
		return nil, err
	}
	l, err := open(ctx, b, lc)
	if err != nil {
		return nil, err
	}
	return &Redis{l}, nil
}

// dialRedis is OpenRedis up to the acquire: it returns the backend,
// connected and checked, and the resolved configuration.
func dialRedis(ctx context.Context, rawURL string, cfg RedisConfig) (*redisBackend, LeaseConfig, error) {
	lc, err := cfg.LeaseConfig.resolve()
	if err != nil {
		return nil, lc, err
	}
	if strings.ContainsAny(lc.Namespace, "{} ") {
		return nil, lc, fmt.Errorf("%w: Redis namespace %q must not contain '{', '}' or spaces", ErrConfig, lc.Namespace)
	}
	opt, err := redistls.RedisOptions(rawURL)
	if err != nil {
		return nil, lc, fmt.Errorf("%w: Redis URL %q: %v", ErrConfig, redact.Spec(rawURL), redact.Spec(err.Error()))
	}
	opt.PoolSize = 2
	opt.MaxRetries = -1              // the lease retries, within its deadline
	opt.ContextTimeoutEnabled = true // a renewal ends at its deadline
	c := redis.NewClient(opt)
	b := &redisBackend{c: c, prefix: "idgen:{" + lc.Namespace + "}:", max: lc.max(), owner: lc.Owner, ttl: lc.TTL, url: redact.Spec(rawURL)}
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, lc, b.unreachable(storetls.Explain(err, opt.TLSConfig))
	}
	return b, lc, nil
}

type redisBackend struct {
	c      *redis.Client
	prefix string
	max    int64
	owner  string
	ttl    time.Duration
	url    string
}

// Compare-and-act scripts: KEYS[1] is the worker key, ARGV[1] the token.
var (
	renewScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)
	releaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1]) end
return 0`)
	// The mark is 19 zero-padded digits, so strings compare as numbers.
	markScript = redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local cur = redis.call('GET', KEYS[2])
if not cur or ARGV[2] > cur then redis.call('SET', KEYS[2], ARGV[2]) end
return 1`)
	// settleScript is releaseScript that also sets the mark (KEYS[2]) to
	// ARGV[2], even below the stored one; empty deletes it.
	settleScript = redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2]) end
return redis.call('DEL', KEYS[1])`)
)

func (b *redisBackend) unreachable(err error) error {
	if !storedsn.Answered(err) {
		return storedsn.Connect(b.url, nil, err)
	}
	return fmt.Errorf("%w: workerid: Redis %s: %v", idgen.ErrUnavailable, b.url, err)
}

func (b *redisBackend) workerKey(id int64) string {
	return b.prefix + "worker:" + strconv.FormatInt(id, 10)
}
func (b *redisBackend) markKey(id int64) string {
	return b.prefix + "highwater:" + strconv.FormatInt(id, 10)
}
func (b *redisBackend) token(gen int64) string { return b.owner + " " + strconv.FormatInt(gen, 10) }

func parseMark(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

func (b *redisBackend) acquire(ctx context.Context, w want, clk idgen.Clock) (id, gen int64, hw time.Time, err error) {
	var free []int64
	marks := map[int64]time.Time{}
	const batch = 1024
	for lo := int64(0); lo <= b.max; lo += batch {
		hi := min(lo+batch-1, b.max)
		keys := make([]string, 0, 2*(hi-lo+1))
		for i := lo; i <= hi; i++ {
			keys = append(keys, b.workerKey(i))
		}
		for i := lo; i <= hi; i++ {
			keys = append(keys, b.markKey(i))
		}
		vals, err := b.c.MGet(ctx, keys...).Result()
		if err != nil {
			return 0, 0, hw, b.unreachable(err)
		}
		n := hi - lo + 1
		for i := range n {
			if vals[i] == nil {
				free = append(free, lo+i)
			}
			if m, ok := parseMark(vals[n+i]); ok {
				marks[lo+i] = m
			}
		}
	}
	candidates := acquireOrder(free, marks, w, clk.Now())
	if len(candidates) > 0 {
		gen, err = b.c.Incr(ctx, b.prefix+"generation").Result()
		if err != nil {
			return 0, 0, hw, b.unreachable(err)
		}
	}
	for _, id := range candidates {
		ok, err := b.c.SetNX(ctx, b.workerKey(id), b.token(gen), b.ttl).Result()
		if err != nil {
			return 0, 0, hw, b.unreachable(err)
		}
		if !ok {
			continue // taken meanwhile
		}
		// Read the mark after the claim: the previous holder can no
		// longer store one.
		v, err := b.c.Get(ctx, b.markKey(id)).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			b.release(context.WithoutCancel(ctx), id, gen, nil)
			return 0, 0, hw, b.unreachable(err)
		}
		hw, _ = parseMark(v)
		return id, gen, hw, nil
	}
	return 0, 0, hw, fmt.Errorf("%w: workerid: all %d worker IDs under Redis keys %sworker:* are leased", idgen.ErrNoWorkerIDs, b.max+1, b.prefix)
}

// run runs a compare-and-act script on id's worker key: errGone when the
// key no longer holds this node's token.
func (b *redisBackend) run(ctx context.Context, s *redis.Script, id, gen int64, keys []string, args ...any) error {
	n, err := s.Run(ctx, b.c, append([]string{b.workerKey(id)}, keys...), append([]any{b.token(gen)}, args...)...).Int64()
	if err != nil {
		return b.unreachable(err)
	}
	if n == 0 {
		return errGone
	}
	return nil
}

func (b *redisBackend) renew(ctx context.Context, id, gen int64) error {
	return b.run(ctx, renewScript, id, gen, nil, b.ttl.Milliseconds())
}

func (b *redisBackend) release(ctx context.Context, id, gen int64, settle *time.Time) error {
	var err error
	if settle == nil {
		err = b.run(ctx, releaseScript, id, gen, nil)
	} else {
		mark := "" // the zero time: settleScript deletes the mark
		if !settle.IsZero() {
			mark = fmt.Sprintf("%019d", settle.UnixNano())
		}
		err = b.run(ctx, settleScript, id, gen, []string{b.markKey(id)}, mark)
	}
	if errors.Is(err, errGone) {
		return nil
	}
	return err
}

func (b *redisBackend) storeMark(ctx context.Context, id, gen int64, mark time.Time) error {
	return b.run(ctx, markScript, id, gen, []string{b.markKey(id)}, fmt.Sprintf("%019d", mark.UnixNano()))
}

func (b *redisBackend) close() { b.c.Close() }
