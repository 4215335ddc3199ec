package workerid

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/storetls"
	"github.com/idgenkit/idgen/strategies"
)

// DefaultLeaseWorkers bounds the worker IDs a lease hands out when the URL
// has no workers key: the space's size or 1024, whichever is smaller.
const DefaultLeaseWorkers = 1024

// Doc describes the worker source URLs Open takes, for key docs and flags;
// it is strategies.WorkerSourceDoc.
const Doc = strategies.WorkerSourceDoc

// The worker sources register with package strategies, as database/sql's
// drivers do: a spec's worker_source opens with Open once this package is
// linked.
func init() { strategies.RegisterWorkerSources(openForSpec) }

// openForSpec is OpenWith as a strategies.WorkerSourceOpener: a malformed
// URL or a hostname without an ordinal is bad spec input, and wraps
// strategies.ErrSpec too.
func openForSpec(ctx context.Context, rawURL string, space strategies.WorkerSpace, getenv func(string) string) (strategies.WorkerSource, error) {
	src, err := OpenWith(ctx, rawURL, Space{Workers: space.Workers, DatacenterID: space.DatacenterID}, getenv)
	if errors.Is(err, ErrNoOrdinal) || errors.Is(err, ErrConfig) {
		return nil, fmt.Errorf("%w: %w", strategies.ErrSpec, err)
	}
	if err != nil {
		return nil, err
	}
	return src, nil
}

// sourceKinds names the sources Open knows, for an unknown one.
const sourceKinds = "static:N, env, ordinal[:offset], postgres://, mysql://, redis://, etcd://, zk://, ip[:bits], hostname-hash"

// The keys each kind of source takes, for an unknown one: an error names
// the bad key and its kind's keys alone, not every kind's URL form.
const (
	leaseKeyNames = "namespace, ttl, workers, worker_id, state_file"
	etcdKeys      = leaseKeyNames + ", password_file, tls, tls_ca, tls_cert, tls_key, tls_server_name"
	zkKeys        = "node, " + leaseKeyNames + ", password_file"
)

// keylessKinds are the sources that take no keys, by kind, with their form.
var keylessKinds = map[string]string{"static": "static:N", "env": "env", "ordinal": "ordinal[:offset]", "ip": "ip[:bits]"}

// Open opens the worker ID source a URL names, for a worker space of
// space.Workers IDs:
//
//	static:N                       worker ID N
//	env                            IDGEN_WORKER_ID
//	ordinal[:offset]               the N of hostname name-N, plus offset
//	postgres://user@host/db?...    a lease row; extra keys namespace, table
//	                               (default idgen_workers), ttl (default 30s),
//	                               workers, state_file
//	etcd://[user@]host:port[,host:port][/namespace]?ttl=30s&workers=N&state_file=PATH
//	                               with password_file=PATH (etcd RBAC; a
//	                               password in the URL is masked), and TLS
//	                               with tls_ca=, tls_cert=, tls_key=,
//	                               tls_server_name= (files) or tls=true
//	mysql://user@host:3306/db?...  a MariaDB/MySQL lease row; the keys of
//	                               postgres://, the rest the driver's
//	redis://host:6379/db?...       a Redis key (SET NX PX); keys namespace,
//	                               ttl, workers, state_file (see Redis for
//	                               its durability limits)
//	zk://[user@]host:port[,host:port][/path]?node=ip:port&ttl=30s&workers=N&state_file=PATH&password_file=PATH
//	                               a ZooKeeper ephemeral node; path default
//	                               /idgen/<namespace>, node (Leaf's ip:port
//	                               key) default the hostname; with user@
//	                               and password_file, digest auth and
//	                               nodes under the user's ACL alone
//	ip[:bits]                      the low bits (default 16, at most the
//	                               field's) of the first private IPv4
//	hostname-hash?accept_collisions=true
//	                               a hash of the hostname, with a Warning
//
// Every lease URL also takes worker_id=N: take worker ID N or fail with
// ErrWorkerIDHeld while a live lease holds it (LeaseConfig.Pin).
//
// A lease is acquired before it returns. Errors: a malformed URL wraps
// ErrConfig; a worker ID outside the space, idgen.ErrOutOfRange; a hostname
// without an ordinal, ErrNoOrdinal; a store that cannot be reached,
// idgen.ErrUnavailable; a full space, idgen.ErrNoWorkerIDs. Passwords in the
// URL are masked in every error. The env source reads nothing: OpenWith
// gives it the environment.
func Open(ctx context.Context, rawURL string, space Space) (Source, error) {
	return OpenWith(ctx, rawURL, space, nil)
}

// OpenWith is Open, the env source reading IDGEN_WORKER_ID with getenv
// (as Env does: the program passes its environment's, or the value it resolved;
// nil reads nothing).
func OpenWith(ctx context.Context, rawURL string, space Space, getenv func(string) string) (Source, error) {
	bad := func(why string) error {
		// why may quote rawURL too (url.Parse's errors do): it is cut to
		// a few echoes' length, passwords masked first.
		return fmt.Errorf("%w: worker_source %s: %s", ErrConfig, echo.Quote(redact.Spec(rawURL)), echo.CutN(redact.Spec(why), 4*echo.Max))
	}
	scheme, rest, _ := strings.Cut(rawURL, ":")
	if tail, ok := strings.CutPrefix(rawURL, "hostname-hash"); ok {
		scheme, rest = "hostname-hash", tail
	}
	if base, query, ok := strings.Cut(rawURL, "?"); ok && !strings.Contains(base, "//") {
		kind, _, _ := strings.Cut(base, ":")
		if form, ok := keylessKinds[kind]; ok {
			key, _, _ := strings.Cut(query, "=")
			return nil, bad(fmt.Sprintf("unknown key %s: %s takes no keys", quoteKey(key), form))
		}
	}
	switch scheme {
	case "static":
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, bad("static:N needs an integer N")
		}
		return NewStatic(n, space)
	case "env":
		if rest != "" {
			return nil, bad("env takes no argument")
		}
		return Env(getenv, space)
	case "ordinal":
		var off int64
		if rest != "" {
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				return nil, bad("ordinal:offset needs an integer offset")
			}
			off = n
		}
		return Ordinal("", off, space)
	case "postgres", "postgresql", "mysql", "redis", "rediss":
		// The store's own URL, less the lease keys (and table).
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, bad(err.Error())
		}
		lc := LeaseConfig{Space: space}
		q := u.Query()
		if err := leaseKeys(q, &lc); err != nil {
			return nil, bad(err.Error())
		}
		table := q.Get("table")
		if scheme != "redis" && scheme != "rediss" {
			q.Del("table")
		}
		u.RawQuery = q.Encode()
		switch scheme {
		case "mysql":
			return OpenMySQL(ctx, u.String(), MySQLConfig{LeaseConfig: lc, Table: table})
		case "redis", "rediss":
			return OpenRedis(ctx, u.String(), RedisConfig{LeaseConfig: lc})
		}
		return OpenPostgres(ctx, u.String(), PostgresConfig{LeaseConfig: lc, Table: table})
	case "ip":
		var n int
		if rest != "" {
			v, err := strconv.Atoi(rest)
			if err != nil {
				return nil, bad("ip:bits needs an integer number of bits")
			}
			if v == 0 {
				return nil, bad("ip:0: want at least 8 bits")
			}
			n = v
		}
		return IP(n, nil, space)
	case "hostname-hash":
		v, err := url.ParseQuery(strings.TrimPrefix(rest, "?"))
		if err != nil || (rest != "" && !strings.HasPrefix(rest, "?")) {
			return nil, bad("want hostname-hash?accept_collisions=true")
		}
		opt := v.Get("accept_collisions")
		v.Del("accept_collisions")
		if len(v) > 0 {
			return nil, bad(fmt.Sprintf("unknown key %s: hostname-hash takes accept_collisions=true", quoteKey(firstKey(v))))
		}
		if opt != "" && opt != "true" {
			return nil, bad("want hostname-hash?accept_collisions=true")
		}
		return HostnameHash("", opt == "true", space)
	case "zk", "zookeeper":
		hosts, q, err := hostList(rest)
		if err != nil {
			return nil, bad(err.Error())
		}
		hosts, p, _ := strings.Cut(hosts, "/")
		cfg := ZKConfig{LeaseConfig: LeaseConfig{Space: space}}
		if err := zkAuth(hosts, q, &cfg); err != nil {
			return nil, bad(err.Error())
		}
		if p != "" {
			cfg.Path = "/" + strings.TrimSuffix(p, "/")
		}
		if err := leaseKeys(q, &cfg.LeaseConfig); err != nil {
			return nil, bad(err.Error())
		}
		cfg.Node = q.Get("node")
		q.Del("node")
		if len(q) > 0 {
			return nil, bad(fmt.Sprintf("unknown key %s: zk:// takes %s", quoteKey(firstKey(q)), zkKeys))
		}
		return OpenZK(ctx, cfg)
	case "etcd":
		hosts, q, err := hostList(rest)
		if err != nil {
			return nil, bad(err.Error())
		}
		hosts, path, _ := strings.Cut(hosts, "/")
		cfg := EtcdConfig{LeaseConfig: LeaseConfig{Space: space}}
		cfg.Namespace = strings.Trim(path, "/")
		if err := leaseKeys(q, &cfg.LeaseConfig); err != nil {
			return nil, bad(err.Error())
		}
		if err := etcdAuth(hosts, q, &cfg); err != nil {
			return nil, bad(err.Error())
		}
		if len(q) > 0 {
			return nil, bad(fmt.Sprintf("unknown key %s: etcd:// takes %s", quoteKey(firstKey(q)), etcdKeys))
		}
		return OpenEtcd(ctx, cfg)
	}
	return nil, bad("unknown source; want one of " + sourceKinds)
}

// etcdAuth fills cfg's endpoints and credentials from the hosts part of an
// etcd:// URL, [user[:password]@]host:port[,host:port], and the keys
// storetls takes from q: the password from the URL or password_file, TLS
// when tls_ca, tls_cert or tls_server_name is given or tls=true.
func etcdAuth(hosts string, q url.Values, cfg *EtcdConfig) error {
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		info, err := url.PathUnescape(hosts[:i])
		if err != nil {
			return fmt.Errorf("user: %v", err)
		}
		cfg.Username, cfg.Password, _ = strings.Cut(info, ":")
		hosts = hosts[i+1:]
	}
	cfg.Endpoints = strings.Split(hosts, ",")
	o, err := storetls.Take(q)
	if err != nil {
		return err
	}
	on := q.Get("tls")
	q.Del("tls")
	if on != "" && on != "true" {
		return fmt.Errorf("tls %q: want tls=true", on)
	}
	if o.PasswordFile != "" {
		if cfg.Password != "" {
			return errors.New("a password in the URL and password_file: give one")
		}
		if cfg.Password, err = o.Password(); err != nil {
			return err
		}
	}
	if cfg.Password != "" && cfg.Username == "" {
		return errors.New("password_file needs a user (etcd://user@host:port)")
	}
	if cfg.Username != "" && cfg.Password == "" {
		return fmt.Errorf("user %q needs a password (password_file=PATH)", cfg.Username)
	}
	if o.TLS() || on == "true" {
		cfg.TLS, err = o.Config()
	}
	return err
}

// zkAuth fills cfg's servers and digest credentials from the hosts part
// of a zk:// URL, [user@]host:port[,host:port], and password_file in q.
// A password in the URL is refused: it is read from a file only.
func zkAuth(hosts string, q url.Values, cfg *ZKConfig) error {
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		if strings.Contains(hosts[:i], ":") {
			return errors.New("zk:// takes no password in the URL: give password_file=PATH")
		}
		cfg.User, hosts = hosts[:i], hosts[i+1:]
	}
	cfg.Servers = strings.Split(hosts, ",")
	o, err := storetls.Take(q)
	if err != nil {
		return err
	}
	if o.TLS() {
		return errors.New("zk:// takes no tls_ keys (digest authentication only)")
	}
	if cfg.Password, err = o.Password(); err != nil {
		return err
	}
	if (cfg.User == "") != (cfg.Password == "") {
		return errors.New("zk:// digest authentication needs both user@ and password_file=PATH")
	}
	return nil
}

// hostList splits the rest of a URL after "scheme:", //host:port[,host:port][/path][?query],
// into the hosts with their path and the query. It is parsed by hand:
// net/url refuses several [IPv6]:port hosts and lists of hosts.
func hostList(rest string) (hosts string, q url.Values, err error) {
	hosts, tail, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
	if !strings.HasPrefix(rest, "//") || hosts == "" || hosts[0] == '/' {
		return "", nil, fmt.Errorf("no host:port")
	}
	q, err = url.ParseQuery(tail)
	return hosts, q, err
}

// leaseKeys moves namespace, ttl, workers, worker_id and state_file from q into cfg.
// A lease space holds min(the layout's space, DefaultLeaseWorkers) IDs
// unless workers says otherwise.
func leaseKeys(q url.Values, cfg *LeaseConfig) error {
	space := cfg.Workers
	cfg.Workers = min(space, DefaultLeaseWorkers)
	if v := q.Get("workers"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > min(space, MaxLeaseWorkers) {
			return fmt.Errorf("workers %q: want an integer in [1, %d]", v, min(space, MaxLeaseWorkers))
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
	if v := q.Get("worker_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n >= cfg.Workers {
			return fmt.Errorf("worker_id %q: want an integer in [0, %d]", v, cfg.Workers-1)
		}
		cfg.Pin = &n
	}
	for _, k := range []string{"namespace", "ttl", "state_file", "worker_id"} {
		q.Del(k)
	}
	return nil
}

// quoteKey quotes an unknown key cut to 32 bytes: the error quotes the
// source's URL too, and with its kind's keys stays under 300 bytes.
func quoteKey(k string) string { return strconv.Quote(echo.CutN(k, 32)) }

func firstKey(q url.Values) string {
	for k := range q {
		return k
	}
	return ""
}
