package segment

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// DefaultTicketName names a ticket server's sequence (PostgreSQL), table
// (MySQL) or key (Redis, "idgen:ticket:{tickets64}").
const DefaultTicketName = "tickets64"

// A TicketServer issues tickets of one residue class: Offset, Offset +
// Increment, Offset + 2·Increment, ... (in increasing order), one round
// trip per ticket. Implementations are safe for concurrent use.
type TicketServer interface {
	// Ticket returns the server's next ticket.
	Ticket(ctx context.Context) (int64, error)
	// Close releases the server's connections.
	Close() error
	// String returns the DSN with any password redacted.
	String() string
}

// TicketConfig places one ticket server among n.
type TicketConfig struct {
	// Name is the sequence (PostgreSQL), table (MySQL) or key (Redis) the
	// server counts in: letters, digits and '_', starting with a letter.
	// Zero means DefaultTicketName.
	Name string
	// Increment is n, the number of servers; 1 to 65,535. Zero means 1.
	Increment int64
	// Offset is k, this server's residue class, 1 to Increment. Zero means 1.
	Offset int64
}

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

func (c *TicketConfig) validate() error {
	if c.Name == "" {
		c.Name = DefaultTicketName
	}
	if c.Increment == 0 {
		c.Increment = 1
	}
	if c.Offset == 0 {
		c.Offset = 1
	}
	switch {
	case !identRE.MatchString(c.Name):
		return fmt.Errorf("%w: ticket name %q: want letters, digits and _, starting with a letter, at most 63", ErrConfig, c.Name)
	case c.Increment < 1 || c.Increment > 65535:
		return fmt.Errorf("%w: ticket increment %d: want 1 to 65535", ErrConfig, c.Increment)
	case c.Offset < 1 || c.Offset > c.Increment:
		return fmt.Errorf("%w: ticket offset %d: want 1 to the increment %d", ErrConfig, c.Offset, c.Increment)
	}
	return nil
}

// OpenTicketServer connects to the ticket server dsn names, by its scheme
// (postgres://, mysql://, redis://), creates its sequence or table when
// missing and checks that an existing one counts in cfg's residue class
// (else ErrResidue).
func OpenTicketServer(ctx context.Context, dsn string, cfg TicketConfig) (TicketServer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	u, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return openPgTicket(ctx, dsn, cfg)
	case "mysql":
		return openMySQLTicket(ctx, dsn, cfg)
	default:
		c, err := openRedis(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return &redisTicket{c: c, dsn: Redact(dsn), key: "idgen:ticket:{" + cfg.Name + "}", cfg: cfg}, nil
	}
}

// pgTicket is a PostgreSQL sequence, START k INCREMENT n.
type pgTicket struct {
	pool *pgxpool.Pool
	dsn  string
	seq  string // quoted identifier
}

func openPgTicket(ctx context.Context, dsn string, cfg TicketConfig) (*pgTicket, error) {
	pool, err := openPool(ctx, dsn)
	if err != nil {
		return nil, err
	}
	t := &pgTicket{pool: pool, dsn: Redact(dsn), seq: pgx.Identifier{cfg.Name}.Sanitize()}
	var start, inc int64
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('idgen_tickets'))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE SEQUENCE IF NOT EXISTS %s AS bigint START %d INCREMENT %d MINVALUE 1`,
			t.seq, cfg.Offset, cfg.Increment)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT seqstart, seqincrement FROM pg_sequence WHERE seqrelid = $1::regclass`, t.seq).Scan(&start, &inc)
	})
	if err == nil && (inc != cfg.Increment || (start-cfg.Offset)%cfg.Increment != 0) {
		err = fmt.Errorf("%w: sequence %s counts START %d INCREMENT %d, not class %d mod %d", ErrResidue, cfg.Name, start, inc, cfg.Offset, cfg.Increment)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("segment: ticket server %s: %w", t.dsn, err)
	}
	return t, nil
}

func (t *pgTicket) Ticket(ctx context.Context) (int64, error) {
	var v int64
	if err := t.pool.QueryRow(ctx, `SELECT nextval($1::regclass)`, t.seq).Scan(&v); err != nil {
		return 0, storeErr(t.dsn, "ticket", err)
	}
	return v, nil
}

func (t *pgTicket) Close() error   { t.pool.Close(); return nil }
func (t *pgTicket) String() string { return t.dsn }

// mysqlTicket is Flickr's ticket server: a one-row table whose
// auto-increment counts in the class set by the session's
// auto_increment_increment and auto_increment_offset, on a dedicated
// connection (LAST_INSERT_ID is per connection).
type mysqlTicket struct {
	db   *sql.DB
	dsn  string
	cfg  TicketConfig
	mu   sync.Mutex
	conn *sql.Conn // the dedicated connection; nil until first use and after an error
}

func openMySQLTicket(ctx context.Context, dsn string, cfg TicketConfig) (*mysqlTicket, error) {
	db, err := openDB(ctx, dsn)
	if err != nil {
		return nil, err
	}
	t := &mysqlTicket{db: db, dsn: Redact(dsn), cfg: cfg}
	_, err = db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS `"+cfg.Name+"` ("+
		"id bigint unsigned NOT NULL auto_increment, "+
		"stub char(1) NOT NULL default '', "+
		"PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=InnoDB")
	if err == nil {
		t.mu.Lock()
		_, err = t.dedicated(ctx)
		t.mu.Unlock()
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("segment: ticket server %s: %w", t.dsn, err)
	}
	return t, nil
}

// dedicated returns the dedicated connection, opening it and setting the
// session's auto-increment class when needed. t.mu is held.
func (t *mysqlTicket) dedicated(ctx context.Context) (*sql.Conn, error) {
	if t.conn != nil {
		return t.conn, nil
	}
	c, err := t.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("SET SESSION auto_increment_increment = %d, auto_increment_offset = %d",
		t.cfg.Increment, t.cfg.Offset)); err != nil {
		discard(c)
		return nil, err
	}
	t.conn = c
	return c, nil
}

// discard closes c and keeps database/sql from reusing it.
func discard(c *sql.Conn) {
	c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

// Ticket runs Flickr's pair on the dedicated connection:
//
//	REPLACE INTO tickets64 (stub) VALUES ('a');
//	SELECT LAST_INSERT_ID();
func (t *mysqlTicket) Ticket(ctx context.Context) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, err := t.dedicated(ctx)
	if err != nil {
		return 0, storeErr(t.dsn, "ticket", err)
	}
	var v int64
	if _, err = c.ExecContext(ctx, "REPLACE INTO `"+t.cfg.Name+"` (stub) VALUES ('a')"); err == nil {
		err = c.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&v)
	}
	if err == nil && (v-t.cfg.Offset)%t.cfg.Increment != 0 {
		err = fmt.Errorf("%w: table %s issued %d, not in class %d mod %d", ErrResidue, t.cfg.Name, v, t.cfg.Offset, t.cfg.Increment)
	}
	if err != nil {
		discard(c)
		t.conn = nil
		return 0, storeErr(t.dsn, "ticket", err)
	}
	return v, nil
}

func (t *mysqlTicket) Close() error {
	t.mu.Lock()
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
	t.mu.Unlock()
	return t.db.Close()
}

func (t *mysqlTicket) String() string { return t.dsn }

// redisTicket is INCR: ticket = (INCR - 1)·n + k.
type redisTicket struct {
	c   *redis.Client
	dsn string
	key string
	cfg TicketConfig
}

func (t *redisTicket) Ticket(ctx context.Context) (int64, error) {
	v, err := t.c.Incr(ctx, t.key).Result()
	if err != nil {
		return 0, storeErr(t.dsn, "ticket", redisErr(err))
	}
	return (v-1)*t.cfg.Increment + t.cfg.Offset, nil
}

func (t *redisTicket) Close() error   { return t.c.Close() }
func (t *redisTicket) String() string { return t.dsn }

// DefaultCooldown is how long Tickets skips a server that failed.
const DefaultCooldown = time.Second

// TicketsConfig configures a Tickets client.
type TicketsConfig struct {
	// Servers are the ticket servers, at least one; server i should count
	// in class i+1 mod len(Servers) (see DialTickets).
	Servers []TicketServer
	// Cooldown: a server that failed is skipped for this long, unless every
	// server is. Zero means DefaultCooldown (1 s).
	Cooldown time.Duration
}

// Tickets round-robins over n ticket servers and fails over to the next
// when one fails. IDs are unique because each server counts in its own
// residue class; they are not ordered across servers.
type Tickets struct {
	servers  []TicketServer
	cooldown time.Duration
	rr       atomic.Uint64
	downTill []atomic.Int64 // unix ns until which server i is skipped
	owned    bool
	closed   atomic.Bool
}

var _ idgen.Generator = (*Tickets)(nil)

// NewTickets returns a client over cfg.Servers. It does not close them
// (DialTickets' does).
func NewTickets(cfg TicketsConfig) (*Tickets, error) {
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%w: no ticket servers", ErrConfig)
	}
	if cfg.Cooldown < 0 {
		return nil, fmt.Errorf("%w: cooldown %v: want >= 0", ErrConfig, cfg.Cooldown)
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = DefaultCooldown
	}
	return &Tickets{servers: cfg.Servers, cooldown: cfg.Cooldown, downTill: make([]atomic.Int64, len(cfg.Servers))}, nil
}

// DialTickets opens one ticket server per DSN, server i (from 0) in class
// i+1 mod len(dsns), all counting in the sequence, table or key name
// (DefaultTicketName when empty), and returns a client whose Close closes
// them. Every server must answer now; failover covers later outages.
func DialTickets(ctx context.Context, dsns []string, name string) (*Tickets, error) {
	if len(dsns) == 0 {
		return nil, fmt.Errorf("%w: no ticket server DSN", ErrDSN)
	}
	var servers []TicketServer
	closeAll := func() {
		for _, s := range servers {
			s.Close()
		}
	}
	for i, dsn := range dsns {
		s, err := OpenTicketServer(ctx, strings.TrimSpace(dsn), TicketConfig{Name: name, Increment: int64(len(dsns)), Offset: int64(i + 1)})
		if err != nil {
			closeAll()
			return nil, err
		}
		servers = append(servers, s)
	}
	t, err := NewTickets(TicketsConfig{Servers: servers})
	if err != nil {
		closeAll()
		return nil, err
	}
	t.owned = true
	return t, nil
}

// Scheme returns TicketScheme.
func (t *Tickets) Scheme() *idgen.Scheme { return TicketScheme }

// Next takes a ticket from the next server in turn, failing over to the
// others. When every server fails it returns an error wrapping
// idgen.ErrUnavailable and each server's error.
func (t *Tickets) Next(ctx context.Context) (idgen.ID, error) {
	if t.closed.Load() {
		return idgen.ID{}, idgen.ErrClosed
	}
	n := uint64(len(t.servers))
	start := t.rr.Add(1) - 1
	var errs []error
	for pass := range 2 { // pass 0: servers up; pass 1: those cooling down
		for j := range n {
			i := (start + j) % n
			down := time.Now().UnixNano() < t.downTill[i].Load()
			if down != (pass == 1) {
				continue
			}
			v, err := t.servers[i].Ticket(ctx)
			if err == nil {
				t.downTill[i].Store(0)
				return TicketScheme.FromUint64(uint64(v)), nil
			}
			if ctx.Err() != nil {
				return idgen.ID{}, ctx.Err()
			}
			t.downTill[i].Store(time.Now().Add(t.cooldown).UnixNano())
			errs = append(errs, err)
		}
	}
	return idgen.ID{}, fmt.Errorf("%w: all %d ticket servers failed: %w", idgen.ErrUnavailable, n, errors.Join(errs...))
}

// Close closes the servers of a client from DialTickets.
func (t *Tickets) Close() error {
	if t.closed.Swap(true) || !t.owned {
		return nil
	}
	var errs []error
	for _, s := range t.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
