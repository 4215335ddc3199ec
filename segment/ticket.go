package segment

import (
	"context"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/lazyre"
	"github.com/jackc/pgx/v5"
)

// DefaultTicketName names a ticket server's sequence (PostgreSQL), table
// (MySQL) or key (Redis, "idgen:ticket:{tickets64}").
const DefaultTicketName = "tickets64"

// A TicketServer issues tickets of one residue class: Offset, Offset +
// Increment, Offset + 2·Increment, ... (in increasing order), one round
// trip per Ticket. Implementations are safe for concurrent use.
type TicketServer interface {
	// Ticket returns the server's next ticket.
	Ticket(ctx context.Context) (int64, error)
	// Close releases the server's connections.
	Close() error
	// String returns the DSN with any password redacted.
	String() string
}

// A TicketBatcher is a TicketServer that issues many tickets per round
// trip; Tickets uses it for NextN. The servers of OpenTicketServer and
// DialTickets are TicketBatchers.
type TicketBatcher interface {
	TicketServer
	// Tickets fills dst with the server's next tickets, in increasing
	// order; on an error none of them is handed out.
	Tickets(ctx context.Context, dst []int64) error
}

// Tickets per round trip of the servers' Tickets: PostgreSQL's nextval
// over generate_series and Redis's one INCRBY take a batch of any size in
// one; MySQL sends groups of REPLACE and SELECT LAST_INSERT_ID() (see
// mysqlTicket.Tickets).
const (
	pgTicketBatch    = 10_000
	redisTicketBatch = 1 << 20
	mysqlTicketBatch = 1024
)

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

var identRE = lazyre.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

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
	case !identRE().MatchString(c.Name):
		return fmt.Errorf("%w: name %s: want letters, digits and _, starting with a letter, at most 63", errTicketConfig, echo.Quote(c.Name))
	case c.Increment < 1 || c.Increment > 65535:
		return fmt.Errorf("%w: increment %d: want 1 to 65535", errTicketConfig, c.Increment)
	case c.Offset < 1 || c.Offset > c.Increment:
		return fmt.Errorf("%w: offset %d: want 1 to the increment %d", errTicketConfig, c.Offset, c.Increment)
	}
	return nil
}

// ticketBackend is a TicketServer that can report and change its class.
//
// A backend issues tickets only within a session: a lock on the server
// that `idgen ticket init --reset` (fence) cannot take while it is held,
// opened at the first ticket and whenever the connection that held it was
// lost. Opening one checks that the server still counts in the class the
// backend read or set (state, setup): a class changed meanwhile is
// ErrResidue, and the Tickets client stops.
type ticketBackend interface {
	TicketBatcher
	// state reads the server's stored class and how far it has counted; n,
	// the number of servers, converts a Redis counter of the format before
	// the class was stored.
	state(ctx context.Context, n int64) (ticketState, error)
	// setup makes the server count in class k mod n, its next ticket the
	// smallest such above floor, and returns that ticket. Unless reset is
	// set, a class another client stored meanwhile is kept (ErrResidue if it
	// is not k of n): the counter never moves back under a running client.
	setup(ctx context.Context, k, n, floor int64, reset bool) (int64, error)
	// fence keeps sessions out until release is called, for a reset: it
	// fails with ErrInUse, naming them, while a generator's session is live.
	fence(ctx context.Context) (release func(), err error)
}

// classChanged is the error of a session that finds its server counting in
// another class than the one its client set out with.
func classChanged(what string, k, n, gotK, gotN int64) error {
	return fmt.Errorf("%w: %s now counts in class %d of %d, not %d of %d: it was renumbered (idgen ticket init --reset) "+
		"while this generator had no session on it; restart the generator", ErrResidue, what, gotK, gotN, k, n)
}

// inUse is the error of a fence that finds live sessions.
func inUse(what string, live int64, who string) error {
	return fmt.Errorf("%w: %s has %d live generator session(s) (%s); stop the generators using it, then run --reset again",
		ErrInUse, what, live, who)
}

// fencing is the error of a session opened while a reset holds the fence.
func fencing(what string) error {
	return fmt.Errorf("%w: %s is being renumbered (idgen ticket init --reset)", idgen.ErrUnavailable, what)
}

// checkResidue returns ErrResidue when v is not in class k of n.
func checkResidue(what string, v, k, n int64) error {
	if v < 1 || (v-k)%n != 0 {
		return fmt.Errorf("%w: %s issued %d, not in class %d mod %d", ErrResidue, what, v, k, n)
	}
	return nil
}

// ticketState is what a ticket server holds.
type ticketState struct {
	Exists    bool  // the sequence, table or key exists
	Offset    int64 // the stored class, 1 to Increment; 0 when none is stored
	Increment int64
	High      int64 // no ticket above High has been issued
}

// firstAbove returns the smallest v > floor with v ≡ k (mod n).
func firstAbove(floor, k, n int64) int64 {
	floor = max(floor, 0)
	return floor + 1 + ((k-floor-1)%n+n)%n
}

// OpenTicketServer connects to the ticket server dsn names, by its scheme
// (postgres://, mysql://, redis://), creates its sequence, table or key
// when missing and checks that an existing one counts in cfg's residue class
// (else ErrResidue, saying how to renumber it).
func OpenTicketServer(ctx context.Context, dsn string, cfg TicketConfig) (TicketServer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b, err := openTicketBackend(ctx, dsn, cfg.Name)
	if err != nil {
		return nil, err
	}
	st, err := b.state(ctx, cfg.Increment)
	switch {
	case err != nil:
	case st.Offset == 0:
		_, err = b.setup(ctx, cfg.Offset, cfg.Increment, st.High, false)
	case st.Offset != cfg.Offset || st.Increment != cfg.Increment:
		err = fmt.Errorf("%w: %s counts in class %d of %d, not %d of %d; renumber the servers with `idgen ticket init --dsn URL1,...,URLn --name %s --reset`",
			ErrResidue, cfg.Name, st.Offset, st.Increment, cfg.Offset, cfg.Increment, cfg.Name)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", b, err) // err says "ticket:" or names the server
	}
	return b, nil
}

// openTicketBackend connects to the ticket server at dsn; it creates nothing.
func openTicketBackend(ctx context.Context, dsn, name string) (ticketBackend, error) {
	u, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		pool, err := openPool(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return &pgTicket{pool: pool, dsn: Redact(dsn), name: name, seq: pgx.Identifier{name}.Sanitize()}, nil
	case "mysql":
		var dbName string
		db, err := openDB(ctx, dsn, func(c *mysql.Config) {
			c.MultiStatements = true // a batch's statements in one round trip; no input is ever spliced into them
			dbName = c.DBName
		})
		if err != nil {
			return nil, err
		}
		return newMySQLTicket(db, Redact(dsn), dbName, name), nil
	default:
		c, err := openRedis(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return newRedisTicket(c, Redact(dsn), name), nil
	}
}
