package segment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTicket is INCRBY n on key "idgen:ticket:{name}", which holds the last
// ticket; the hash "idgen:ticket:{name}:class" keeps the class (fields
// offset and increment). Every ticket's script checks the class and renews
// the client's session in the sorted set "idgen:ticket:{name}:sessions"
// (member: a random id, score: when it lapses, Unix ms), and refuses while
// a reset holds "idgen:ticket:{name}:reset".
type redisTicket struct {
	c        *redis.Client
	dsn      string
	key      string
	class    string
	sessions string
	fenceKey string
	id       string // this client's session
	mu       sync.Mutex
	k, n     int64 // the class read or set; 0 until then
}

// redisSessionTTL is how long after its last ticket a Redis client's
// session counts as live. A client idle for longer may see its server
// renumbered under it; its next ticket then finds the class changed and
// fails (ErrResidue) rather than issue one.
var redisSessionTTL = time.Minute

// redisFenceTTL bounds how long a reset keeps the Redis servers fenced,
// should it die before it releases them.
const redisFenceTTL = time.Minute

func newRedisTicket(c *redis.Client, dsn, name string) *redisTicket {
	key := "idgen:ticket:{" + name + "}"
	var id [8]byte
	rand.Read(id[:])
	return &redisTicket{c: c, dsn: dsn, key: key, class: key + ":class", sessions: key + ":sessions", fenceKey: key + ":reset",
		id: hex.EncodeToString(id[:])}
}

func (t *redisTicket) keys() []string { return []string{t.key, t.class, t.sessions, t.fenceKey} }

// redisTickets renews the session and adds ARGV[3] (the class's increment
// times the tickets wanted) when the class is ARGV[1] of ARGV[2]. It
// returns the last ticket as a string (Lua numbers are doubles, exact only
// up to 2^53), nil when no class is stored, or an error reply: IDGEN_RESET
// while a reset holds the fence, IDGEN_CLASS k n when the class changed.
var redisTickets = redis.NewScript(`
if redis.call('EXISTS', KEYS[4]) == 1 then return redis.error_reply('IDGEN_RESET') end
local c = redis.call('HMGET', KEYS[2], 'offset', 'increment')
if not c[1] or not c[2] then return false end
if c[1] ~= ARGV[1] or c[2] ~= ARGV[2] then return redis.error_reply('IDGEN_CLASS ' .. c[1] .. ' ' .. c[2]) end
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[3], ms + tonumber(ARGV[5]), ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('INCRBY', KEYS[1], ARGV[3])
return redis.call('GET', KEYS[1])`)

func (t *redisTicket) Ticket(ctx context.Context) (int64, error) {
	var v [1]int64
	err := t.Tickets(ctx, v[:])
	return v[0], err
}

// Tickets takes dst in one INCRBY of n·len(dst) per redisTicketBatch.
func (t *redisTicket) Tickets(ctx context.Context, dst []int64) error {
	t.mu.Lock()
	k, n := t.k, t.n
	t.mu.Unlock()
	if n == 0 {
		return fmt.Errorf("%w: key %s has no ticket class on %s; run `idgen ticket init --dsn URL`", errTicketNotInstalled, t.class, t.dsn)
	}
	what := "key " + t.key + " on " + t.dsn
	for len(dst) > 0 {
		m := min(len(dst), redisTicketBatch)
		text, err := redisTickets.Run(ctx, t.c, t.keys(), k, n, n*int64(m), t.id, redisSessionTTL.Milliseconds()).Text()
		switch {
		case errors.Is(err, redis.Nil):
			return fmt.Errorf("%w: key %s has no ticket class on %s; run `idgen ticket init --dsn URL`", errTicketNotInstalled, t.class, t.dsn)
		case err != nil && strings.HasPrefix(err.Error(), "IDGEN_RESET"):
			return fencing(what)
		case err != nil && strings.HasPrefix(err.Error(), "IDGEN_CLASS"):
			var gotK, gotN int64
			fmt.Sscanf(err.Error(), "IDGEN_CLASS %d %d", &gotK, &gotN)
			return classChanged(what, k, n, gotK, gotN)
		case err != nil:
			return storeErr(t.dsn, "ticket", redisErr(err))
		}
		last, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return storeErr(t.dsn, "ticket", serverError{fmt.Errorf("counter %q: %w", text, err)})
		}
		first := last - n*int64(m-1)
		if err := checkResidue(what, first, k, n); err != nil {
			return err
		}
		for j := range m {
			dst[j] = first + n*int64(j)
		}
		dst = dst[m:]
	}
	return nil
}

// setClass records the class the tickets must be in.
func (t *redisTicket) setClass(k, n int64) {
	t.mu.Lock()
	t.k, t.n = k, n
	t.mu.Unlock()
}

func (t *redisTicket) state(ctx context.Context, n int64) (ticketState, error) {
	var st ticketState
	var last *redis.StringCmd
	var class *redis.SliceCmd
	_, err := t.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		last = p.Get(ctx, t.key)
		class = p.HMGet(ctx, t.class, "offset", "increment")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return st, storeErr(t.dsn, "read key "+t.key, redisErr(err))
	}
	v, err := last.Int64()
	if err == nil {
		st.Exists, st.High = true, v
	}
	if f := class.Val(); len(f) == 2 && f[0] != nil && f[1] != nil {
		st.Exists = true
		st.Offset, _ = strconv.ParseInt(fmt.Sprint(f[0]), 10, 64)
		st.Increment, _ = strconv.ParseInt(fmt.Sprint(f[1]), 10, 64)
		t.setClass(st.Offset, st.Increment)
	} else if st.Exists {
		// Before the class was stored, ticket = (INCR - 1)·n + k ≤ INCR·n
		// (at most 2^63-1: a larger product has no class above it anyway).
		st.High = v * n
		if v > math.MaxInt64/max(n, 1) {
			st.High = math.MaxInt64
		}
	}
	return st, nil
}

// redisTicketSetup stores the class and the last ticket; unless ARGV[4]
// is "reset", only where no class is stored yet. It returns the stored
// class.
var redisTicketSetup = redis.NewScript(`
if ARGV[4] == 'reset' or redis.call('EXISTS', KEYS[2]) == 0 then
	redis.call('SET', KEYS[1], ARGV[3])
	redis.call('HSET', KEYS[2], 'offset', ARGV[1], 'increment', ARGV[2])
end
return redis.call('HMGET', KEYS[2], 'offset', 'increment')`)

func (t *redisTicket) setup(ctx context.Context, k, n, floor int64, reset bool) (int64, error) {
	next := firstAbove(floor, k, n)
	mode := ""
	if reset {
		mode = "reset"
	}
	v, err := redisTicketSetup.Run(ctx, t.c, []string{t.key, t.class}, k, n, next-n, mode).StringSlice()
	if err != nil {
		return 0, storeErr(t.dsn, "set up key "+t.key, redisErr(err))
	}
	if len(v) != 2 || v[0] != strconv.FormatInt(k, 10) || v[1] != strconv.FormatInt(n, 10) {
		return 0, fmt.Errorf("%w: key %s on %s was set up meanwhile as %v, not class %d of %d", ErrResidue, t.class, t.dsn, v, k, n)
	}
	t.setClass(k, n)
	return next, nil
}

// redisFence drops the lapsed sessions of KEYS[1] and, when none is left,
// sets the fence KEYS[2]. It returns {1} when fenced, {0, live} when live
// sessions refuse it, {-1} when another reset holds the fence.
var redisFence = redis.NewScript(`
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local live = redis.call('ZCARD', KEYS[1])
if live > 0 then return {0, live} end
if not redis.call('SET', KEYS[2], '1', 'PX', ARGV[1], 'NX') then return {-1} end
return {1}`)

func (t *redisTicket) fence(ctx context.Context) (func(), error) {
	v, err := redisFence.Run(ctx, t.c, []string{t.sessions, t.fenceKey}, redisFenceTTL.Milliseconds()).Int64Slice()
	if err != nil {
		return nil, storeErr(t.dsn, "fence key "+t.key, redisErr(err))
	}
	switch v[0] {
	case 0:
		return nil, inUse("key "+t.key+" on "+t.dsn, v[1], fmt.Sprintf("tickets taken within the last %v", redisSessionTTL))
	case -1:
		return nil, fmt.Errorf("%w: key %s on %s: another ticket init --reset is running", ErrInUse, t.key, t.dsn)
	}
	return func() { t.c.Del(context.Background(), t.fenceKey) }, nil
}

// Close ends the client's session, so that a reset need not wait for it to
// lapse, and closes the client.
func (t *redisTicket) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	t.c.ZRem(ctx, t.sessions, t.id) // best effort: a session not removed lapses
	cancel()
	return t.c.Close()
}
func (t *redisTicket) String() string { return t.dsn }
