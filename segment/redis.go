package segment

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/redis/go-redis/v9"

	"github.com/idgenkit/idgen/internal/storetls"
	"github.com/idgenkit/idgen/internal/storetls/redistls"
)

// RedisPrefix starts the keys of the Redis store: biz tag t keeps its
// max_id in "idgen:segment:{t}" and its step in "idgen:segment:{t}:step"
// (one hash slot, for Redis Cluster).
const RedisPrefix = "idgen:segment:"

// Redis is the Redis Store: INCRBY on the tag's key, in a script that
// first checks the tag exists (a plain INCRBY would create any tag). Durable
// only with AOF (appendfsync everysec or always): after a crash, an RDB
// snapshot can hand out the same range again.
type Redis struct {
	c   *redis.Client
	dsn string
}

var _ Store = (*Redis)(nil)

// openRedis connects a client to a redis:// URL and pings it.
func openRedis(ctx context.Context, dsn string) (*redis.Client, error) {
	if _, err := parseDSN(dsn); err != nil {
		return nil, err
	}
	opt, err := redistls.RedisOptions(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrDSN, Redact(dsn), Redact(err.Error()))
	}
	opt.PoolSize = 4
	opt.MaxRetries = -1 // a failed reservation is retried by the allocator, with backoff
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, storedsn.Connect(dsn, ErrUnreachable, storetls.Explain(err, opt.TLSConfig))
	}
	return c, nil
}

// OpenRedis connects to the Redis at dsn (redis://[user@]host:port/db;
// rediss:// for TLS, with tls_ca=, tls_cert=, tls_key=, tls_server_name=
// naming files, and password_file= for the password of the ACL user).
func OpenRedis(ctx context.Context, dsn string) (*Redis, error) {
	c, err := openRedis(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &Redis{c: c, dsn: Redact(dsn)}, nil
}

func (s *Redis) String() string { return s.dsn }

// Close closes the client.
func (s *Redis) Close() error { return s.c.Close() }

func redisKeys(tag string) []string {
	k := RedisPrefix + "{" + tag + "}"
	return []string{k, k + ":step", k + ":description"}
}

var redisInit = redis.NewScript(`
local created = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
	redis.call('SET', KEYS[1], 0)
	redis.call('SET', KEYS[2], ARGV[1])
	if ARGV[2] ~= '' then redis.call('SET', KEYS[3], ARGV[2]) end
	created = 1
end
return {created, redis.call('GET', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or ARGV[1]), redis.call('GET', KEYS[3]) or ''}`)

// Init sets the tag's keys if missing.
func (s *Redis) Init(ctx context.Context, tag string, step int64, description string) (Tag, bool, error) {
	if err := checkTag(tag); err != nil {
		return Tag{}, false, err
	}
	if err := checkStep(step); err != nil {
		return Tag{}, false, err
	}
	v, err := redisInit.Run(ctx, s.c, redisKeys(tag), step, description).Slice()
	if err != nil {
		return Tag{}, false, storeErr(s.dsn, fmt.Sprintf("init biz tag %q", tag), redisErr(err))
	}
	t := Tag{Name: tag, Step: v[2].(int64), Description: v[3].(string)}
	text, _ := v[1].(string) // a string: Lua numbers are exact only up to 2^53
	if t.MaxID, err = strconv.ParseInt(text, 10, 64); err != nil {
		return Tag{}, false, storeErr(s.dsn, fmt.Sprintf("init biz tag %q", tag), serverError{fmt.Errorf("max_id %q: %w", text, err)})
	}
	return t, v[0].(int64) == 1, nil
}

// redisReserve returns the new max_id as a string: Lua numbers are
// doubles, exact only up to 2^53.
var redisReserve = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local step = tonumber(ARGV[1])
if step <= 0 then step = tonumber(redis.call('GET', KEYS[2])) end
redis.call('INCRBY', KEYS[1], step)
return {redis.call('GET', KEYS[1]), step}`)

// Reserve is one round trip: a script around INCRBY. At the top of the ID
// space, where INCRBY would pass 2^63-1, it reserves what is left.
func (s *Redis) Reserve(ctx context.Context, tag string, step int64) (max, added int64, err error) {
	for {
		max, added, err = s.reserve(ctx, tag, step)
		if err == nil || !strings.Contains(err.Error(), "would overflow") {
			return max, added, err
		}
		// INCRBY refused to pass 2^63-1: ask for what is left. Another
		// client may take some first; then INCRBY refuses again.
		keys := redisKeys(tag)
		var cur, rowStep int64
		if cur, err = s.c.Get(ctx, keys[0]).Int64(); err == nil && step == 0 {
			rowStep, err = s.c.Get(ctx, keys[1]).Int64()
		}
		if err != nil {
			return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, redisErr(err))
		}
		if step == 0 {
			step = rowStep
		}
		if step, err = lastStep(s.dsn, tag, cur, step); err != nil {
			return 0, 0, err
		}
	}
}

func (s *Redis) reserve(ctx context.Context, tag string, step int64) (max, added int64, err error) {
	v, err := redisReserve.Run(ctx, s.c, redisKeys(tag), step).Slice()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, 0, fmt.Errorf("%w %q (no key %s) on %s; create it with `idgen segment init --dsn URL --tag %s`", ErrUnknownTag, tag, redisKeys(tag)[0], s.dsn, tag)
	case err != nil:
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, redisErr(err))
	}
	text, _ := v[0].(string)
	if max, err = strconv.ParseInt(text, 10, 64); err != nil {
		return 0, 0, storeErr(s.dsn, "reserve biz tag "+tag, serverError{fmt.Errorf("max_id %q: %w", text, err)})
	}
	return max, v[1].(int64), nil
}

// serverError marks an error the server answered with (Redis), or a fact
// read from it that refuses the request (a MySQL ticket table set up
// meanwhile): not a failure to reach it.
type serverError struct{ error }

func (e serverError) Unwrap() error { return e.error }

func redisErr(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		return serverError{err}
	}
	return err
}
