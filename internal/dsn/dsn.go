// Package dsn reads the store URLs (DSNs) of the packages that reach a
// database (segment, workerid, compare, migrate) and says, in one line,
// why a store cannot be reached:
//
//	cannot connect to PostgreSQL at 127.0.0.1:5432 (user app, database ids): connection refused
//
// Its errors carry no sentinel of their own: the calling package wraps
// its own (segment.ErrDSN, compare.ErrBadInput, ...), or names it as a
// ConnectError's Class.
package dsn

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/storetls"
)

// Schemes lists the URL schemes of the stores: PostgreSQL, MySQL/MariaDB
// and Redis.
func Schemes() []string { return []string{"postgres", "postgresql", "mysql", "redis", "rediss"} }

// Parse parses dsn as a URL of one of Schemes with a host. Errors name the
// DSN, its password masked.
func Parse(dsn string) (*url.URL, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s: %v", echo.Quote(redact.Spec(dsn)), err)
	}
	switch u.Scheme {
	case "postgres", "postgresql", "mysql", "redis", "rediss":
	default:
		return nil, fmt.Errorf("%s: scheme %s is not one of %s", echo.Quote(u.Redacted()), echo.Quote(u.Scheme), strings.Join(Schemes(), ", "))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s: no host (want %s://user@host:port/...)", echo.Quote(u.Redacted()), u.Scheme)
	}
	return u, nil
}

// MySQL converts a URL, mysql://user:pass@host:port/db?param=value, to
// the driver's Config (user:pass@tcp(host:port)/db?param=value). Port 3306
// is the default; query parameters are the driver's (timeout, tls, ...),
// and the files of package storetls: tls_ca, tls_cert, tls_key,
// tls_server_name (TLS that verifies the server's certificate and name;
// not with the driver's tls=) and password_file. A dial timeout of 5 s
// applies unless the URL sets timeout.
func MySQL(dsn string) (*mysql.Config, error) {
	u, err := Parse(dsn)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "mysql" {
		return nil, fmt.Errorf("%s: want a mysql:// URL", echo.Quote(u.Redacted()))
	}
	host := u.Host
	if u.Port() == "" {
		host += ":3306"
	}
	var cred string
	if u.User != nil {
		cred = u.User.Username()
		if p, ok := u.User.Password(); ok {
			cred += ":" + p
		}
		cred += "@"
	}
	db, _ := url.PathUnescape(u.EscapedPath())
	if len(db) > 0 && db[0] == '/' {
		db = db[1:]
	}
	q := u.Query()
	o, err := storetls.Take(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", echo.Quote(u.Redacted()), err)
	}
	if o.TLS() && q.Has("tls") {
		return nil, fmt.Errorf("%s: tls= and tls_ca/tls_cert/tls_server_name both set TLS: give one", echo.Quote(u.Redacted()))
	}
	text := cred + "tcp(" + host + ")/" + db
	if o != (storetls.Options{}) {
		u.RawQuery = q.Encode()
	}
	if u.RawQuery != "" {
		text += "?" + u.RawQuery
	}
	cfg, err := mysql.ParseDSN(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", echo.Quote(u.Redacted()), err)
	}
	if err := mysqlSecrets(cfg, o, u.Hostname()); err != nil {
		return nil, fmt.Errorf("%s: %v", echo.Quote(u.Redacted()), err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.Logger = &driverLog{}
	return cfg, nil
}

// driverLog takes the driver's log lines instead of its default, which
// prints to the process's stderr (a library does not print), and keeps the
// last: a connection the driver drops (a TLS alert, a reset) comes back as
// "invalid connection" alone, the cause in the log line.
type driverLog struct {
	mu   sync.Mutex
	last string
}

func (l *driverLog) Print(v ...any) {
	l.mu.Lock()
	l.last = fmt.Sprint(v...)
	l.mu.Unlock()
}

// MySQLWhy returns err, an error of a connection of cfg (MySQL's),
// with what the driver logged when err is its bare "invalid connection"
// (or database/sql's "bad connection" after it).
func MySQLWhy(err error, cfg *mysql.Config) error {
	if l, ok := cfg.Logger.(*driverLog); ok && (errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn)) {
		l.mu.Lock()
		last := l.last
		l.mu.Unlock()
		if last != "" {
			err = fmt.Errorf("%w (the driver's last log line: %s)", err, redact.Spec(last))
		}
	}
	return err
}

// mysqlSecrets sets the password from o's password_file and, when a tls_
// key is given, TLS that verifies the server (by o's CA, or the system's
// roots, and the name host unless tls_server_name says another).
func mysqlSecrets(cfg *mysql.Config, o storetls.Options, host string) error {
	pw, err := o.Password()
	if err != nil {
		return err
	}
	if pw != "" {
		if cfg.Passwd != "" {
			return errors.New("a password in the URL and password_file: give one")
		}
		cfg.Passwd = pw
	}
	if !o.TLS() {
		return nil
	}
	c, err := o.Config()
	if err != nil {
		return err
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	cfg.TLS = c
	return nil
}

// A Target is where a DSN points, for messages.
type Target struct {
	Engine   string // PostgreSQL, MySQL, Redis
	Addr     string // host:port, or a PostgreSQL Unix socket
	User     string // empty when the DSN names none (Redis)
	Database string
}

// TargetOf returns where dsn points; the zero Target's fields when it
// cannot tell (the DSN does not parse).
func TargetOf(dsn string) Target {
	scheme, _, _ := strings.Cut(dsn, "://")
	switch scheme {
	case "mysql":
		if c, err := MySQL(dsn); err == nil {
			return MySQLTarget(c)
		}
		return Target{Engine: "MySQL"}
	case "redis", "rediss":
		t := Target{Engine: "Redis", Database: "0"}
		if u, err := url.Parse(dsn); err == nil {
			t.Addr = u.Host
			if u.Port() == "" {
				t.Addr = net.JoinHostPort(u.Hostname(), "6379")
			}
			t.User = u.User.Username()
			if db := strings.Trim(u.Path, "/"); db != "" {
				t.Database = db
			}
		}
		return t
	}
	if c, err := pgx.ParseConfig(dsn); err == nil {
		return PostgresTarget(&c.Config)
	}
	return Target{Engine: "PostgreSQL"}
}

// PostgresTarget returns where a parsed PostgreSQL DSN points.
func PostgresTarget(c *pgconn.Config) Target {
	return Target{Engine: "PostgreSQL", Addr: PostgresAddr(c.Host, c.Port), User: c.User, Database: c.Database}
}

// MySQLTarget returns where a parsed MySQL DSN points.
func MySQLTarget(c *mysql.Config) Target {
	return Target{Engine: "MySQL", Addr: c.Addr, User: c.User, Database: c.DBName}
}

// PostgresAddr names a PostgreSQL server: host:port, or its Unix socket.
func PostgresAddr(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", host, port)
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// A ConnectError reports a store that cannot be reached, in one line:
//
//	cannot connect to PostgreSQL at HOST:PORT (user U, database D): connection refused
//
// It matches Class (the reporting package's sentinel, such as
// segment.ErrUnreachable) and idgen.ErrUnavailable with errors.Is, and
// the driver's error with errors.As.
type ConnectError struct {
	Target
	Class error // the package's sentinel; nil: none
	Err   error // the driver's error
}

// Connect returns the ConnectError of err, the driver's error on
// connecting to dsn, which matches class too.
func Connect(dsn string, class, err error) *ConnectError {
	return &ConnectError{Target: TargetOf(dsn), Class: class, Err: err}
}

func (e *ConnectError) Error() string {
	who := "database " + echo.Cut(e.Database)
	if e.User != "" {
		who = "user " + echo.Cut(e.User) + ", " + who
	}
	return fmt.Sprintf("cannot connect to %s at %s (%s): %s", e.Engine, echo.Cut(e.Addr), who, Cause(e.Err))
}

func (e *ConnectError) Unwrap() []error {
	if e.Class == nil {
		return []error{idgen.ErrUnavailable, e.Err}
	}
	return []error{e.Class, idgen.ErrUnavailable, e.Err}
}

// Cause says why talking to a store failed: the server's message, or the
// network's, without the driver's wrapping ("connection refused", "host
// "db" not found", "timed out").
//
// What wrappers appended after the innermost error's text (a hint in
// parentheses, such as storetls.Explain's "(the client certificate expired
// at ...)") is kept after each of these.
func Cause(err error) string {
	if i := strings.Index(err.Error(), "remote error: tls:"); i >= 0 {
		return err.Error()[i:] // the server's TLS alert, with what the client's configuration tells of it
	}
	if why, ok := cause(err); ok {
		return why + appended(err)
	}
	// The innermost error, and what wrappers appended after it ("bad
	// connection (the driver's last log line: ...)"), without what they
	// put before it (the driver's "failed to connect to ...").
	outer, why := err.Error(), innermost(err).Error()
	if i := strings.LastIndex(outer, why); i >= 0 {
		why = outer[i:]
	}
	return echo.CutN(why, 4*echo.Max)
}

// innermost is the end of err's Unwrap chain.
func innermost(err error) error {
	for errors.Unwrap(err) != nil {
		err = errors.Unwrap(err)
	}
	return err
}

// appended is what err's wrappers wrote after the innermost error's text,
// cut to 64 bytes or so: "" when they wrote only before it.
func appended(err error) string {
	outer, inner := err.Error(), innermost(err).Error()
	i := strings.LastIndex(outer, inner)
	if i < 0 || inner == "" {
		return ""
	}
	return echo.CutN(outer[i+len(inner):], 4*echo.Max)
}

// cause is Cause's short form for the errors it knows, ok false otherwise.
func cause(err error) (string, bool) {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var errno syscall.Errno
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code), true
	case errors.As(err, &me):
		return fmt.Sprintf("%s (error %d)", me.Message, me.Number), true
	case errors.As(err, &dns):
		return fmt.Sprintf("host %s not found", echo.Quote(dns.Name)), true
	case errors.As(err, &errno):
		return errno.Error(), true
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timed out", true
	case errors.Is(err, context.Canceled):
		return "interrupted", true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection", true
	}
	return "", false
}

// Answered reports whether err is an answer from the server (a PostgreSQL,
// MySQL or Redis error reply) rather than a failure to reach it.
func Answered(err error) bool {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var re interface{ RedisError() }
	return errors.As(err, &pe) || errors.As(err, &me) || errors.As(err, &re)
}
