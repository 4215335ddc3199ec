package segment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"

	"github.com/go-sql-driver/mysql"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/jackc/pgx/v5/pgconn"
)

// Table is the name of the segment table in SQL stores.
const Table = "idgen_segments"

// MaxStep is the largest step a store accepts: the step column is an int.
const MaxStep = 1<<31 - 1

// A Tag is one biz tag's row.
type Tag struct {
	Name        string
	MaxID       int64 // the highest ID reserved so far; 0 for a new tag
	Step        int64 // the tag's configured step: the first segment's size
	Description string
}

// A Store reserves segments for biz tags. Implementations are safe for
// concurrent use; every method is one atomic operation on the store.
type Store interface {
	// Init creates the table (or key space) and tag's row with max_id 0 and
	// step when they are missing, and returns the tag's row and whether it
	// was created. An existing tag is left unchanged. step must be in
	// [1, MaxStep].
	Init(ctx context.Context, tag string, step int64, description string) (Tag, bool, error)

	// Reserve adds step to tag's max_id (the tag's own step when step is 0)
	// and returns the new max_id and the step added: the IDs
	// (max-added, max] are the caller's. An unknown tag gives ErrUnknownTag.
	Reserve(ctx context.Context, tag string, step int64) (max, added int64, err error)

	// Close releases the store's connections.
	Close() error

	// String returns the DSN with any password redacted.
	String() string
}

// Schemes returns the DSN schemes Open accepts, in a new slice.
func Schemes() []string { return storedsn.Schemes() }

// Open connects to the store a DSN names, by its scheme (see Schemes), and
// checks that it answers. Errors wrap ErrDSN (the DSN does not parse) or
// ErrUnreachable and name the DSN, password redacted.
func Open(ctx context.Context, dsn string) (Store, error) {
	u, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return OpenPostgres(ctx, dsn)
	case "mysql":
		return OpenMySQL(ctx, dsn)
	default:
		return OpenRedis(ctx, dsn)
	}
}

// parseDSN parses dsn as a URL of one of the Schemes. Errors wrap ErrDSN.
func parseDSN(dsn string) (*url.URL, error) {
	u, err := storedsn.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDSN, err)
	}
	return u, nil
}

// Redact returns dsn (a URL, a comma-separated list of them, a key=value
// or go-sql-driver DSN) with any password replaced by "xxxxx", for
// messages; it is redact.Spec.
func Redact(dsn string) string { return redact.Spec(dsn) }

func checkTag(tag string) error {
	if tag == "" || len(tag) > 128 {
		return fmt.Errorf("%w: biz tag %s (%d bytes): want 1 to 128 bytes", ErrConfig, echo.Quote(tag), len(tag))
	}
	return nil
}

func checkStep(step int64) error {
	if step < 1 || step > MaxStep {
		return fmt.Errorf("%w: step %d: want an integer in [1, %d]", ErrConfig, step, MaxStep)
	}
	return nil
}

// storeErr wraps err: an error the server answered with is plain, any other
// (refused, reset, timed out) wraps ErrUnreachable.
func storeErr(dsn, what string, err error) error {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var se serverError
	if errors.As(err, &pe) || errors.As(err, &me) || errors.As(err, &se) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("segment: %s on %s: %w", what, dsn, err)
	}
	return fmt.Errorf("%w: %s: %s: %w", ErrUnreachable, dsn, what, err)
}

func errorsIsUnknown(err error) bool { return errors.Is(err, ErrUnknownTag) }

// lastStep returns how many IDs a reservation of step can add to a tag at
// max without passing 2^63-1 (the last segment may be short), or
// ErrExhausted when max is 2^63-1 already. Stores call it only after the
// plain UPDATE or INCRBY failed on the overflow, so that the common
// reservation stays one statement.
func lastStep(dsn, tag string, max, step int64) (int64, error) {
	if max == math.MaxInt64 {
		return 0, fmt.Errorf("%w: biz tag %q on %s: max_id is 2^63-1, every ID was handed out; use a new biz tag", ErrExhausted, tag, dsn)
	}
	return min(step, math.MaxInt64-max), nil
}
