package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// Errors. Wrapping errors name the table, column or spec at fault.
var (
	// ErrInput reports input Inspect and Run refuse before changing
	// anything: an unknown table or column, a table without a single-column
	// primary key, a target whose values do not fit the key column. A field
	// of Options or Setting whose value is not allowed comes as an
	// *idgen.FieldError naming it ("Options.To"), and a Finish or Abort
	// without yes as a *ConfirmError, each wrapped by ErrInput.
	ErrInput = errclass.Invalid("migrate: bad input")
	// ErrOrder reports a bigint → Snowflake migration whose new keys would
	// not all be larger than the current maximum key: it wraps an
	// *idgen.FieldError of Options.To.
	ErrOrder = errclass.Invalid("migrate: new keys would not sort after the old ones")
	// ErrVerify reports a failed Verify.
	ErrVerify = errclass.Unavailable("migrate: verify failed")
	// ErrShape reports a shape of schema Run cannot migrate (a partitioned
	// table's key, a key that is itself a foreign key, a check constraint
	// on a moved column, ...), found before anything changes. The error
	// returned is a *ShapeError listing each, which also matches ErrInput.
	ErrShape = errclass.Invalid("migrate: schema shape not supported")
)

// DefaultBatch is the backfill batch size when Options.Batch is zero.
const DefaultBatch = 5000

// Options configure Inspect and Run.
type Options struct {
	// Table is the table to migrate, "name" (found by search_path) or
	// "schema.name". Required.
	Table string
	// To is the target spec: "snowflake?..." (any layout of at most 63
	// bits with a sequence or random field) for integer keys, "uuidv7" for
	// uuid keys. Required, except to resume (empty means as recorded).
	To string
	// TimeColumn names the creation-time column (timestamptz, timestamp or
	// date, no NULLs): the backfill then issues keys with NewAt(created_at)
	// in creation order. Empty means none: keys follow the current key
	// order, issued at the migration's start time.
	TimeColumn string
	// Batch is the number of rows per backfill transaction. Zero means
	// DefaultBatch. With ChunkTime, the size of the first batch.
	Batch int
	// ChunkTime, when positive, sizes batches to take about that long each
	// (from the rate of the batches done), within [Batch/10, 10×Batch].
	ChunkTime time.Duration
	// MaxLag is the largest replay lag of any standby (pg_stat_replication)
	// at which a batch starts; above it the run waits. Zero means
	// DefaultMaxLag.
	MaxLag time.Duration
	// MaxActive, when positive, is the largest number of active client
	// backends (pg_stat_activity, besides the run's own) at which a batch
	// starts; above it the run waits.
	MaxActive int
	// OnThrottle, when set, is called when the run starts waiting before a
	// batch (paused, lag or load over its limit) and when it goes on.
	OnThrottle func(Throttle)
	// StartOver makes Run, on a migration that was reverted, drop what the
	// reverted attempt left (Discard) and migrate anew; without it Run
	// refuses a reverted migration, wrapping ErrInput.
	StartOver bool
	// DryRun makes Run inspect and return the plan, and change nothing:
	// the plan's WriteDryRun writes it with the DDL Run would run.
	DryRun bool
	// Progress receives the backfill's progress events: a phase per
	// table backfilled. Run draws nothing itself. Nil means none.
	Progress Progress
	// Log receives one Info record per step ("phase backfill", "swapped
	// ... in 12ms"), its message a whole sentence, and a Warn record per
	// lock timeout retried. Nil means discard.
	Log *slog.Logger
	// OnBatch, when set, is called after each committed batch with the rows
	// done and the total of the phase (tests use it to interrupt a run).
	OnBatch func(done, total int64)
}

// An FK is a foreign key referencing the migrated table's key.
type FK struct {
	Name     string // constraint name
	Schema   string
	Table    string // the table it is declared on
	Column   string // the referencing column (before the swap)
	NotNull  bool
	Indexed  bool   // an index on the table starts with Column
	OnDelete string // the FK's ON DELETE action: NO ACTION, CASCADE, ...
	OnUpdate string
	// A composite foreign key: its columns (Column among them), the
	// referenced columns (the key among them) and the referenced table's
	// unique constraint on them. Nil and empty for a single-column one.
	Columns       []string `json:",omitempty"`
	RefColumns    []string `json:",omitempty"`
	RefConstraint string   `json:",omitempty"`
	// Def is the constraint's definition (pg_get_constraintdef, names
	// schema-qualified): the swap re-adds it as it was, on the new column.
	Def     string `json:",omitempty"`
	Comment string `json:",omitempty"`
	// RootSchema and Root name the partitioned table that holds Column when
	// Table is one of its partitions or is partitioned itself: the new
	// column, its triggers and CHECK go there, and the backfill runs on
	// each of Leaves (its partitions, sanitized schema-qualified names).
	RootSchema string   `json:",omitempty"`
	Root       string   `json:",omitempty"`
	Leaves     []string `json:",omitempty"`
	// Clones are, for a foreign key declared on a partitioned table, the
	// names of its copies on each of Leaves: the swap re-adds them NOT
	// VALID on each partition, the validate phase validates them and adds
	// the foreign key back on the partitioned table, which attaches them
	// (PostgreSQL before 18 refuses NOT VALID there).
	Clones []string `json:",omitempty"`
}

// A Plan is what Inspect found and what Run will do.
type Plan struct {
	Schema, Table string
	Key           string // primary key column
	KeyType       string // its type: bigint, integer, smallint, uuid
	PKName        string // primary key constraint
	Rows          int64
	MaxKey        string // integer keys only
	TimeColumn    string
	TimeType      string
	MinTime       time.Time // of TimeColumn; zero without one
	MaxTime       time.Time
	To            string
	Scheme        *idgen.Scheme
	NewType       string // the new key column's type
	// Snowflake targets: the layout, node values and worker IDs reserved.
	Layout         snowflake.Layout
	Nodes          map[string]int64 // backfill's node values
	ReservedField  string           // node field holding the reserved worker IDs
	BackfillWorker int64
	TriggerWorker  int64
	// FirstKey is the smallest key the backfill can issue; OrderHolds
	// reports whether it is above MaxKey (integer keys only).
	FirstKey   string
	OrderHolds bool
	FKs        []FK
	// IndexBytes is the primary key index's size now; NewIndexBytes the
	// estimated size of the new key's index freshly built (fillfactor 90);
	// MapBytes the estimated size of the mapping table with its index.
	IndexBytes, NewIndexBytes, MapBytes int64
	// Phase is the phase of a migration in progress ("" when none).
	Phase string
	// Start is the migration's start time: the time of keys issued without
	// a time column.
	Start time.Time
	// Indexes are the indexes, primary key and unique constraints on the
	// key and the foreign key columns, rebuilt on the new columns.
	Indexes []Index
	// Dependents are the views, materialized views, rules and triggers
	// that use the key or a foreign key column: the swap transaction
	// re-creates them on the new columns (Revert on the old ones).
	Dependents []Dependent
	// Sequence is the sequence the key's default draws from (nextval), ""
	// when none; SequenceOwned reports that the key column owns it
	// (serial, OWNED BY), SequenceShared that other columns use it too.
	// Finish drops it with the old key column, or after it when nothing
	// else uses it. Identity reports a GENERATED ... AS IDENTITY key.
	Sequence                      string
	SequenceOwned, SequenceShared bool
	Identity                      bool
	// Quiet reports that the backfill's batches run with
	// session_replication_role = replica, so that the user's triggers and
	// rules do not fire for them (the role may set it); Fire lists those
	// that fire for every backfilled row all the same.
	Quiet bool
	Fire  []string
	// Refusals are the shapes of schema Run cannot migrate; Inspect then
	// returns a *ShapeError listing them.
	Refusals []Refusal

	known map[string]bool // constraints and indexes the migration handles, by kind/schema/table/name
	deps  *depSet         // the dependents' statements as Inspect read them (for WriteDryRun)
}

// shape is what the state table records of a plan besides its foreign
// keys (column shape, jsonb).
type shape struct {
	Indexes                       []Index
	Sequence                      string
	SequenceOwned, SequenceShared bool
	Identity, Quiet               bool
}

func inputf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// fieldf returns an *idgen.FieldError of field, its value as shown and
// what is allowed (format, args), wrapped by ErrInput.
func fieldf(field, value, format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrInput, &idgen.FieldError{Field: field, Value: value, Allowed: fmt.Sprintf(format, args...)})
}

// toErr returns an *idgen.FieldError of Options.To, spec (empty: none
// shown), wrapped by ErrInput, whose cause is err.
func toErr(spec string, err error) error {
	if spec != "" {
		spec = echo.Quote(spec)
	}
	return fmt.Errorf("%w: %w", ErrInput, &idgen.FieldError{Field: "Options.To", Value: spec, Err: err})
}

// clip cuts an input echoed in a message to about 64 bytes (echo.Cut).
func clip(s string) string { return echo.Cut(s) }

// tableErr is the error of a failed look-up of table: input when PostgreSQL
// refuses the name itself (too many dots, an unbalanced quote, another
// database), otherwise a database failure.
func tableErr(table string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42601" || pe.Code == "42602" || pe.Code == "0A000") {
		return inputf("table %q: want name or schema.name", clip(table))
	}
	return fmt.Errorf("migrate: find table %q: %w", clip(table), err)
}

// names of the objects a migration creates.
func (p *Plan) ident(parts ...string) string { return pgx.Identifier(parts).Sanitize() }
func (p *Plan) qtable() string               { return p.ident(p.Schema, p.Table) }
func (p *Plan) newCol() string               { return p.Key + "_idgen_new" }
func (p *Plan) oldCol() string               { return p.Key + "_old" }
func (p *Plan) mapTable() string             { return p.ident(p.Schema, p.Table+"_idgen_map") }
func (p *Plan) stateTable() string           { return p.ident(p.Schema, "idgen_migrate_state") }
func (p *Plan) keyFunc() string              { return p.ident(p.Schema, p.Table+"_idgen_next") }
func (p *Plan) seqName() string              { return p.ident(p.Schema, p.Table+"_idgen_seq") }
func (p *Plan) assignFunc() string           { return p.ident(p.Schema, p.Table+"_idgen_assign") }
func (p *Plan) assignTrigger() string        { return ident(p.Table + "_idgen_assign") }
func (p *Plan) checkName() string            { return p.Table + "_idgen_new_not_null" }
func (p *Plan) keepFunc() string             { return p.ident(p.Schema, p.Table+"_idgen_keep_old") }
func (p *Plan) keepTrigger() string          { return ident(p.Table + "_idgen_keep_old") }
func (p *Plan) oldCheckName() string         { return p.Table + "_idgen_old_not_null" }
func (fk FK) qtable() string                 { return pgx.Identifier{fk.Schema, fk.Table}.Sanitize() }

// Twins of an index: built on the new columns before the swap, and the
// name an index takes while its twin holds its place.
const (
	newSuffix = "_idgen_new"
	oldSuffix = "_idgen_old"
)

// Inspect examines opt.Table and returns the plan for migrating it to
// opt.To. It changes nothing. Errors wrap ErrInput for input that Run would
// refuse; shapes of schema Run cannot migrate are listed in a *ShapeError
// (matching ErrShape and ErrInput), returned with the plan; a bigint →
// Snowflake plan whose order does not hold is returned with OrderHolds
// false and no error.
func Inspect(ctx context.Context, conn *pgx.Conn, opt Options) (*Plan, error) {
	p, err := inspect(ctx, conn, opt)
	return p, withStep(err, "inspect table %q", clip(opt.Table))
}

// withStep gives a database error (one without the package's own
// "migrate: ..." words) the step it failed in.
func withStep(err error, format string, args ...any) error {
	if err == nil || strings.HasPrefix(err.Error(), "migrate: ") {
		return err
	}
	return fmt.Errorf("migrate: %s: %w", fmt.Sprintf(format, args...), err)
}

// querier is what the catalog reads need: a connection or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// catalogTx runs f in a transaction whose search_path is pg_catalog, so
// that the definitions PostgreSQL prints (pg_get_viewdef and the like)
// name every object with its schema, and read the same whatever the
// session's search_path.
func catalogTx(ctx context.Context, conn *pgx.Conn, f func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path = pg_catalog"); err != nil {
			return err
		}
		return f(tx)
	})
}

func inspect(ctx context.Context, conn *pgx.Conn, opt Options) (*Plan, error) {
	if opt.Table == "" {
		return nil, inputf("no table given")
	}
	p := &Plan{To: opt.To, TimeColumn: opt.TimeColumn}
	var oid uint32
	var partitioned, partition bool
	err := conn.QueryRow(ctx, `SELECT c.oid, n.nspname, c.relname, c.relkind = 'p', c.relispartition FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p')`, opt.Table).Scan(&oid, &p.Schema, &p.Table, &partitioned, &partition)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, inputf("table %q not found", clip(opt.Table))
	}
	if err != nil {
		return nil, tableErr(opt.Table, err)
	}
	err = catalogTx(ctx, conn, func(q pgx.Tx) error {
		if err := p.loadState(ctx, q); err != nil {
			return err
		}
		if p.Phase != "" {
			return p.inspectResumed(ctx, q, oid, opt)
		}
		return p.inspectNew(ctx, q, oid, partitioned, partition, opt)
	})
	if _, ok := err.(*ShapeError); ok {
		return p, err // the plan lists what it refuses
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// inspectNew inspects a table no migration is recorded for.
func (p *Plan) inspectNew(ctx context.Context, q pgx.Tx, oid uint32, partitioned, partition bool, opt Options) error {
	if opt.To == "" {
		return fieldf("Options.To", "", "no target scheme given; want e.g. snowflake or uuidv7")
	}
	if partition {
		var root string
		if err := q.QueryRow(ctx, "SELECT pg_partition_root($1)::regclass::text", oid).Scan(&root); err != nil {
			return err
		}
		p.refuse("partition", p.qtable(), "it is a partition of %s; its key is the partitioned table's", "migrate cannot change a partitioned table's key (see "+root+")", root)
		return p.refused()
	}
	if err := p.inspectKey(ctx, q, oid, partitioned); err != nil {
		return err
	}
	if p.Key == "" {
		return p.refused()
	}
	if err := p.inspectTarget(opt.To); err != nil {
		return err
	}
	if err := p.inspectTime(ctx, q, oid, opt.TimeColumn); err != nil {
		return err
	}
	if err := p.inspectSchema(ctx, q, oid); err != nil {
		return err
	}
	if err := q.QueryRow(ctx, "SELECT count(*) FROM "+p.qtable()).Scan(&p.Rows); err != nil {
		return err
	}
	if p.KeyType != "uuid" {
		var max *int64
		if err := q.QueryRow(ctx, fmt.Sprintf("SELECT max(%s)::bigint FROM %s", p.ident(p.Key), p.qtable())).Scan(&max); err != nil {
			return err
		}
		if max != nil {
			p.MaxKey = fmt.Sprint(*max)
		} else {
			p.MaxKey = "0"
		}
	}
	p.Start = time.Now().UTC()
	if err := p.checkOrder(); err != nil {
		return err
	}
	p.sizes(ctx, q)
	return p.refused()
}

// inspectSchema reads what the migration moves besides the key's values:
// the referencing tables and their partitions, the indexes and
// constraints on the moved columns, the views, rules and triggers that use
// them, the key's sequence, and the triggers a backfill fires; and lists
// the shapes it cannot migrate.
func (p *Plan) inspectSchema(ctx context.Context, q pgx.Tx, oid uint32) error {
	steps := []func(context.Context, pgx.Tx, uint32) error{
		p.inspectKeyFK, p.inspectInheritance, p.inspectFKs, p.inspectChains, p.inspectLeftovers,
		p.inspectIndexes, p.inspectDependents, p.inspectSequence, p.inspectTriggers,
	}
	for _, f := range steps {
		if err := f(ctx, q, oid); err != nil {
			return err
		}
	}
	return nil
}

// inspectResumed fills a plan for a migration in progress from its state,
// and lists the shapes added since that stop it.
func (p *Plan) inspectResumed(ctx context.Context, q pgx.Tx, oid uint32, opt Options) error {
	if opt.To == "" {
		// Resume as recorded.
		opt.To, opt.TimeColumn = p.To, p.TimeColumn
	}
	if opt.To != p.To && p.Phase == phaseDone {
		return fieldf("Options.To", echo.Quote(opt.To), "table %s is already migrated to %q", p.qtable(), clip(p.To))
	}
	if opt.To != p.To {
		return fieldf("Options.To", echo.Quote(opt.To), "table %s is being migrated to %q; resume with that target", p.qtable(), clip(p.To))
	}
	if opt.TimeColumn != p.TimeColumn {
		return fieldf("Options.TimeColumn", echo.Quote(opt.TimeColumn), "table %s is being migrated with time column %q", p.qtable(), clip(p.TimeColumn))
	}
	if err := p.inspectTarget(p.To); err != nil {
		return err
	}
	var keyType string
	err := q.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1 AND attname = $2 AND NOT attisdropped`, oid, p.Key).Scan(&keyType)
	if err != nil {
		return fmt.Errorf("migrate: state names key %s: %w", p.Key, err)
	}
	if p.TimeColumn != "" {
		if err := q.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = $1 AND attname = $2 AND NOT attisdropped`, oid, p.TimeColumn).Scan(&p.TimeType); err != nil {
			return fmt.Errorf("migrate: state names time column %s: %w", p.TimeColumn, err)
		}
	}
	p.OrderHolds = true
	if err := q.QueryRow(ctx, "SELECT count(*) FROM "+p.qtable()).Scan(&p.Rows); err != nil {
		return err
	}
	if p.swapped() || p.Phase == phaseReverted {
		return nil
	}
	// Before the swap: what was added since the plan must not stop it.
	p.knowRecorded()
	if err := p.inspectDependents(ctx, q, oid); err != nil {
		return err
	}
	if len(p.Refusals) > 0 {
		p.Refusals = append(p.Refusals, Refusal{Shape: "migration in progress", Object: p.qtable(),
			Why: "the shapes above appeared after run started", Workaround: "remove them", Abort: true})
	}
	return p.refused()
}

// swapped reports whether the migration's swap is done.
func (p *Plan) swapped() bool { return p.Phase == phaseValidate || p.Phase == phaseDone }

func (p *Plan) inspectKey(ctx context.Context, q pgx.Tx, oid uint32, partitioned bool) error {
	var keys []string
	err := q.QueryRow(ctx, `SELECT con.conname, array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, i)
			JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.i)
		FROM pg_constraint con WHERE con.conrelid = $1 AND con.contype = 'p'`, oid).Scan(&p.PKName, &keys)
	if errors.Is(err, pgx.ErrNoRows) {
		return inputf("table %s has no primary key; migrate needs a single-column primary key", p.qtable())
	}
	if err != nil {
		return err
	}
	if partitioned {
		var by string
		if err := q.QueryRow(ctx, "SELECT pg_get_partkeydef($1)", oid).Scan(&by); err != nil {
			return err
		}
		p.refuse("partitioned table", p.qtable(), "it is partitioned (%s) and its primary key is (%s): a partitioned table's key includes the partition key, and new keys cannot move rows between partitions",
			"keep its key; migrate the tables it references (it migrates with them as a referencing table)", by, strings.Join(keys, ", "))
		return nil
	}
	if len(keys) != 1 {
		p.refuse("composite primary key", p.qtable(), "its primary key is (%s); migrate needs a single-column primary key",
			"keep its key; migrate the tables its key columns reference (it migrates with them as a referencing table)", strings.Join(keys, ", "))
		return nil
	}
	p.Key = keys[0]
	if err := q.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1 AND attname = $2`, oid, p.Key).Scan(&p.KeyType); err != nil {
		return err
	}
	switch p.KeyType {
	case "bigint", "integer", "smallint", "uuid":
	default:
		return inputf("primary key %s.%s is %s; migrate handles bigint, integer, smallint and uuid keys", p.Table, p.Key, p.KeyType)
	}
	return nil
}

// inspectTarget checks the target spec against the key column.
func (p *Plan) inspectTarget(spec string) error {
	parsed, err := strategies.CheckSpec(spec) // the one parse of Options.To
	if err != nil {
		return toErr("", err)
	}
	s, params, err := strategies.Resolve(parsed)
	if err != nil {
		return fmt.Errorf("%w: Options.To: %w", ErrInput, err)
	}
	scheme, err := strategies.SchemeOf(parsed)
	if err != nil {
		return toErr(spec, err)
	}
	p.Scheme, p.NewType = scheme, scheme.Column
	intKey := p.KeyType != "uuid"
	switch {
	case s.Name == "snowflake" && intKey:
		l, _ := snowflake.LayoutOf(scheme)
		if l.Bits() > 63 {
			return fieldf("Options.To", echo.Quote(spec), "its %d-bit layout issues values above 2^63-1, which do not fit the bigint key %s.%s; use a layout of at most 63 bits",
				l.Bits(), p.Table, p.Key)
		}
		_, hasSeq := l.Field(snowflake.FieldSequence)
		_, hasRand := l.Field(snowflake.FieldRandom)
		if !hasSeq && !hasRand {
			return fieldf("Options.To", echo.Quote(spec), "the layout has no sequence or random field; the migration trigger needs one")
		}
		p.Layout = l
		p.Nodes = map[string]int64{}
		p.ReservedField, _, _ = l.WorkerField() // "" when the layout has no node field
		for _, f := range l.Fields {
			if !isNode(f.Name) {
				continue
			}
			if params.Has(f.Name) {
				s := params.String(f.Name, "")
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil || v < 0 || v >= 1<<f.Bits {
					return fieldf("Options.To", echo.Quote(spec), "%s %q: want an integer in [0, %d]", f.Name, clip(s), int64(1)<<f.Bits-1)
				}
				p.Nodes[f.Name] = v
			}
		}
		if p.ReservedField == "" && !hasRand {
			return fieldf("Options.To", echo.Quote(spec), "the layout has no node field to reserve worker IDs for the migration")
		}
		if p.ReservedField != "" {
			b, _ := l.Field(p.ReservedField)
			p.TriggerWorker = int64(1)<<b - 1
			p.BackfillWorker = max(0, p.TriggerWorker-1)
			p.Nodes[p.ReservedField] = p.BackfillWorker
		}
	case s.Name == "uuidv7" && !intKey:
	case intKey:
		return fieldf("Options.To", echo.Quote(spec), "%s values are %d bytes (%s); they do not fit the %s key %s.%s; for integer keys use snowflake",
			scheme.Name, scheme.Size, scheme.Column, p.KeyType, p.Table, p.Key)
	default:
		return fieldf("Options.To", echo.Quote(spec), "%s values (%s) do not fit the uuid key %s.%s; for uuid keys use uuidv7",
			scheme.Name, scheme.Column, p.Table, p.Key)
	}
	return nil
}

func isNode(name string) bool {
	for _, n := range snowflake.NodeFields() {
		if n == name {
			return true
		}
	}
	return false
}

func (p *Plan) inspectTime(ctx context.Context, conn querier, oid uint32, col string) error {
	if col == "" {
		return nil
	}
	err := conn.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1 AND attname = $2 AND attnum > 0 AND NOT attisdropped`, oid, col).Scan(&p.TimeType)
	if errors.Is(err, pgx.ErrNoRows) {
		var cols []string
		_ = conn.QueryRow(ctx, `SELECT array(SELECT attname::text FROM pg_attribute
			WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum)`, oid).Scan(&cols)
		return inputf("unknown column %q in table %s; columns: %s", clip(col), p.qtable(), strings.Join(cols, ", "))
	}
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(p.TimeType, "timestamp"), p.TimeType == "date":
	default:
		return fieldf("Options.TimeColumn", echo.Quote(col), "%s.%s is %s; want timestamptz, timestamp or date", p.Table, col, p.TimeType)
	}
	var nulls int64
	var lo, hi *time.Time
	q := fmt.Sprintf("SELECT count(*) FILTER (WHERE %[1]s IS NULL), min(%[1]s)::timestamptz, max(%[1]s)::timestamptz FROM %[2]s",
		p.ident(col), p.qtable())
	if err := conn.QueryRow(ctx, q).Scan(&nulls, &lo, &hi); err != nil {
		return err
	}
	if nulls > 0 {
		return fieldf("Options.TimeColumn", echo.Quote(col), "%s.%s has %d NULLs; fill them first", p.Table, col, nulls)
	}
	if lo != nil {
		p.MinTime, p.MaxTime = lo.UTC(), hi.UTC()
	}
	return nil
}

// checkOrder computes FirstKey and OrderHolds.
func (p *Plan) checkOrder() error {
	t := p.Start
	if p.TimeColumn != "" && !p.MinTime.IsZero() {
		t = p.MinTime
	}
	switch p.Scheme.Column {
	case idgen.ColumnBigint:
		g, err := snowflake.New(context.Background(), snowflake.Config{Layout: p.Layout, Nodes: p.Nodes})
		if err != nil {
			return toErr(p.To, err)
		}
		id, err := g.NewAt(t)
		if err != nil {
			return fieldf("Options.To", echo.Quote(p.To), "cannot key a row created at %s: %v", t.Format(time.RFC3339), err)
		}
		if _, err := g.NewAt(p.Start); err != nil {
			return fieldf("Options.To", echo.Quote(p.To), "cannot key a row created now: %v", err)
		}
		v, _ := id.Int64()
		parts, _ := p.Layout.Decompose(uint64(v))
		low, _ := p.Layout.Compose(snowflake.Parts{Tick: parts.Tick})
		p.FirstKey = fmt.Sprint(low)
		var max int64
		fmt.Sscan(p.MaxKey, &max)
		p.OrderHolds = int64(low) > max
	default:
		g := strategies.NewUUIDv7()
		id, err := g.NewAt(t)
		if err != nil {
			return fieldf("Options.To", echo.Quote(p.To), "cannot key a row created at %s: %v", t.Format(time.RFC3339), err)
		}
		p.FirstKey = id.String()
		p.OrderHolds = true
	}
	return nil
}

// sizes fills the index size figures: current from pg_relation_size,
// estimates from B-tree tuple sizes (8-byte header with the TID, the key
// padded to 8 bytes, a 4-byte line pointer; 8152 usable bytes per page
// filled to 90%).
func (p *Plan) sizes(ctx context.Context, conn querier) {
	_ = conn.QueryRow(ctx, `SELECT coalesce(pg_relation_size(conindid), 0) FROM pg_constraint
		WHERE conrelid = to_regclass($1) AND contype = 'p'`, p.qtable()).Scan(&p.IndexBytes)
	keyBytes := func(t string) int64 {
		if t == "uuid" {
			return 16
		}
		return 8
	}
	leaf := func(rows, entry, fill int64) int64 {
		per := 8152 * fill / 100 / entry
		pages := int64(math.Ceil(float64(rows)/float64(per)*1.01)) + 1
		return pages * 8192
	}
	p.NewIndexBytes = leaf(p.Rows, 8+keyBytes(p.NewType)+4, 90)
	// mapping table: 24-byte tuple header + both keys, 4-byte line pointer,
	// full pages; plus its index on the old key, filled in the backfill's
	// order: near two-thirds full for random (uuid) old keys.
	tuple := 24 + keyBytes(p.KeyType) + keyBytes(p.NewType) + 4
	fill := int64(90)
	if p.KeyType == "uuid" {
		fill = 67
	}
	p.MapBytes = (p.Rows/(8168/tuple)+1)*8192 + leaf(p.Rows, 8+keyBytes(p.KeyType)+4, fill)
}

// Steps lists what Run does, in order.
func (p *Plan) Steps() []string {
	var s []string
	add := func(format string, args ...any) { s = append(s, fmt.Sprintf(format, args...)) }
	add("create %s (resumable state) and record the migration", p.stateTable())
	add("add column %s.%s %s (nullable, no default: no rewrite)", p.Table, p.newCol(), p.NewType)
	add("create mapping table %s (old_key %s PRIMARY KEY, new_key %s)", p.mapTable(), p.KeyType, p.NewType)
	if p.NewType == "bigint" {
		add("create sequence %s and function %s(): Snowflake keys of layout %s, %s %d reserved for the trigger",
			p.seqName(), p.keyFunc(), p.Layout, p.ReservedField, p.TriggerWorker)
	} else {
		add("create function %s(): PL/pgSQL UUIDv7 (RFC 9562) from clock_timestamp() and gen_random_uuid()", p.keyFunc())
	}
	add("trigger on %s: rows inserted from now on get %s = %s() and a mapping row; a key update moves the row's mapping row (the row keeps its new key)",
		p.Table, p.newCol(), p.keyFunc())
	for _, c := range p.childColumns() {
		on := ""
		if c.leaves[0] != c.qtable() {
			on = fmt.Sprintf(" (on the partitioned table: its %d partitions have it too)", len(c.leaves))
		}
		add("add column %s.%s %s and a trigger copying the parent's new key on insert/update%s", c.table, c.newCol(), p.NewType, on)
	}
	quiet := ""
	if p.Quiet {
		quiet = " (session_replication_role = replica: your triggers and rules do not fire for it)"
	}
	if p.TimeColumn != "" {
		add("backfill %s.%s in batches ordered by (%s, %s) with NewAt(%s): new keys keep creation order%s", p.Table, p.newCol(), p.TimeColumn, p.Key, p.TimeColumn, quiet)
	} else {
		add("backfill %s.%s in batches in %s order, keys issued at the migration's start: new keys keep the current key order%s", p.Table, p.newCol(), p.Key, quiet)
	}
	var own []string
	for _, ix := range p.Indexes {
		if _, child := p.columnOf(ix); !child {
			own = append(own, twinName(ix.Name, newSuffix))
		}
	}
	add("CHECK (%s IS NOT NULL) NOT VALID + VALIDATE; CREATE UNIQUE INDEX CONCURRENTLY %s", p.newCol(), strings.Join(own, ", "))
	for _, c := range p.childColumns() {
		var twins []string
		for _, ix := range p.Indexes {
			if ixc, ok := p.columnOf(ix); ok && ixc.same(c) {
				twins = append(twins, twinName(ix.Name, newSuffix))
			}
		}
		idx := ""
		if len(twins) > 0 {
			idx = "; CREATE INDEX CONCURRENTLY " + strings.Join(twins, ", ")
		}
		per := ""
		if c.leaves[0] != c.qtable() {
			per = " partition by partition,"
		}
		add("backfill %s.%s from %s%s in batches of heap blocks; CHECK + VALIDATE%s", c.table, c.newCol(), p.Table, per, idx)
	}
	var cons []string
	for _, ix := range p.Indexes {
		if ix.Constraint != "" {
			cons = append(cons, ix.Name)
		}
	}
	deps := ""
	if len(p.Dependents) > 0 {
		deps = fmt.Sprintf("; drop and re-create %d view(s), rule(s) and trigger(s) so that they read the new columns", len(p.Dependents))
	}
	add("swap in one transaction (lock_timeout 5s, retried): drop %d foreign key(s) and the constraints %s; rename %s -> %s, %s -> %s (and each foreign key column likewise); constraints re-added USING INDEX, the other indexes renamed into place (the old ones to *%s); default %s(); foreign keys re-added NOT VALID%s",
		len(p.FKs), strings.Join(cons, ", "), p.Key, p.oldCol(), p.newCol(), p.Key, oldSuffix, p.keyFunc(), deps)
	if len(p.FKs) > 0 {
		add("VALIDATE CONSTRAINT on each foreign key (no lock that blocks writes); one declared on a partitioned table is validated on each partition, then added back on the partitioned table")
	}
	add("keep %s, the *_old columns and their indexes for revert; finish drops them", p.mapTable())
	return s
}

// Write prints the plan: what the migration changes, what it cannot
// (Refusals), and the steps.
func (p *Plan) Write(w io.Writer) error {
	var b strings.Builder
	if p.Key == "" || p.Scheme == nil {
		fmt.Fprintf(&b, "table        %s\n", p.qtable())
		p.writeRefusals(&b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "table        %s: %d rows, primary key %s %s (%s)\n", p.qtable(), p.Rows, p.Key, p.KeyType, p.PKName)
	switch p.Phase {
	case "":
	case phaseDone:
		fmt.Fprintf(&b, "migrated     to %s (phase done): no rows to convert; the old keys are in %s and %s\n",
			p.To, p.oldCol(), p.mapTable())
		_, err := io.WriteString(w, b.String())
		return err
	case phaseReverted:
		fmt.Fprintf(&b, "reverted     migration to %s, back on the old keys (discard drops the new ones; run --yes starts over)\n", p.To)
	default:
		fmt.Fprintf(&b, "in progress  migration to %s, phase %s (run resumes it; abort undoes it)\n", p.To, p.Phase)
	}
	fmt.Fprintf(&b, "target       %s: %s column, time-ordered %v\n", p.To, p.NewType, p.Scheme.TimeOrdered)
	if p.NewType == "bigint" && p.Phase == "" {
		fmt.Fprintf(&b, "layout       %s\n", p.Layout)
		if p.ReservedField != "" {
			fmt.Fprintf(&b, "worker IDs   %s %d for the backfill, %d for the trigger: reserve them (the application must not use them)\n",
				p.ReservedField, p.BackfillWorker, p.TriggerWorker)
		}
	}
	if len(p.FKs) == 0 {
		fmt.Fprintf(&b, "foreign keys none reference %s\n", p.Table)
	}
	for _, fk := range p.FKs {
		null := "NULL"
		if fk.NotNull {
			null = "NOT NULL"
		}
		fmt.Fprintf(&b, "foreign key  %s: %s.%s (%s, ON DELETE %s, ON UPDATE %s)\n", fk.Name, fk.qtable(), fk.Column, null, fk.OnDelete, fk.OnUpdate)
		switch {
		case fk.Clones != nil:
			fmt.Fprintf(&b, "             declared on the partitioned table: re-added NOT VALID on its %d partitions at the swap, validated there, then added back on %s\n",
				len(fk.Leaves), fk.qtable())
		case fk.Root != "":
			fmt.Fprintf(&b, "             declared on a partition of %s: the column moves on %s, the foreign key is re-added on %s\n",
				pgx.Identifier{fk.RootSchema, fk.Root}.Sanitize(), fk.Root, fk.Table)
		}
	}
	switch {
	case p.TimeColumn != "" && !p.MinTime.IsZero():
		fmt.Fprintf(&b, "time column  %s %s, %s .. %s\n", p.TimeColumn, p.TimeType, p.MinTime.Format(time.RFC3339Nano), p.MaxTime.Format(time.RFC3339Nano))
	case p.TimeColumn != "" && p.Rows == 0:
		fmt.Fprintf(&b, "time column  %s %s: no rows to convert\n", p.TimeColumn, p.TimeType)
	case p.TimeColumn != "":
		// A migration in progress: its range was not read.
		fmt.Fprintf(&b, "time column  %s %s\n", p.TimeColumn, p.TimeType)
	default:
		fmt.Fprintf(&b, "time column  none: keys follow %s order, issued at the start time\n", p.Key)
	}
	if p.Phase == "" {
		p.writeChanges(&b)
		if p.NewType == "bigint" {
			verdict := "holds: every new key is larger than the current maximum"
			if !p.OrderHolds {
				verdict = "DOES NOT HOLD: run refuses; choose a later epoch-relative time or a layout whose keys pass the maximum"
			}
			fmt.Fprintf(&b, "order        max key %s, smallest new key %s: %s\n", p.MaxKey, p.FirstKey, verdict)
		} else {
			fmt.Fprintf(&b, "first key    %s\n", p.FirstKey)
		}
		ratio := 0.0
		if p.IndexBytes > 0 {
			ratio = float64(p.NewIndexBytes) / float64(p.IndexBytes)
		}
		fmt.Fprintf(&b, "index size   %s now; new key index ~%s when built (%.2fx); mapping table ~%s extra\n",
			bytesText(p.IndexBytes), bytesText(p.NewIndexBytes), ratio, bytesText(p.MapBytes))
		if p.KeyType == "uuid" && p.Scheme.TimeOrdered {
			b.WriteString("             UUIDv4 inserts split leaves at random (they settle near two-thirds full); UUIDv7 appends at the right edge (leaves at the fillfactor, 90%): later growth is smaller\n")
		}
		if len(p.Refusals) == 0 {
			b.WriteString("steps\n")
			for i, s := range p.Steps() {
				fmt.Fprintf(&b, "  %2d. %s\n", i+1, s)
			}
		}
	}
	p.writeRefusals(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeChanges prints what the migration changes besides the keys'
// values.
func (p *Plan) writeChanges(b *strings.Builder) {
	for _, ix := range p.Indexes {
		what := "index"
		if ix.Constraint != "" {
			what = strings.ToLower(ix.Constraint)
		}
		how := "rebuilt on the new column CONCURRENTLY, renamed into place at the swap"
		if ix.Constraint != "" {
			how = "its index rebuilt on the new column CONCURRENTLY, the constraint re-added USING INDEX at the swap"
		}
		if len(ix.Parts) > 0 {
			how = fmt.Sprintf("rebuilt ON ONLY the partitioned table and CONCURRENTLY on its %d partitions, renamed into place at the swap", len(ix.Parts))
		}
		fmt.Fprintf(b, "index        %s %s on %s (%s): %s; keeps its name\n", what, ix.Name, ix.qtable(), ix.columns(), how)
	}
	for _, d := range p.Dependents {
		note := ""
		if d.Kind == "materialized view" {
			note = " (filled again in the swap transaction, under its locks)"
		}
		fmt.Fprintf(b, "dependent    %s %s: re-created in the swap transaction to read the new columns%s; revert restores it\n", d.Kind, d.Name, note)
	}
	var cascade []string
	for _, fk := range p.FKs {
		if fk.OnUpdate == "CASCADE" || fk.OnUpdate == "SET NULL" || fk.OnUpdate == "SET DEFAULT" {
			cascade = append(cascade, fk.Name)
		}
	}
	if len(cascade) > 0 {
		fmt.Fprintf(b, "on update    %s: an update of %s.%s during the migration moves its mapping row, the row keeps its new key, and the referencing rows follow through ON UPDATE into their new columns; after the swap an update of the new key cascades as before\n",
			strings.Join(cascade, ", "), p.Table, p.Key)
	}
	for _, f := range p.Fire {
		fmt.Fprintf(b, "fires        %s fires for every backfilled row (the backfill updates each row once)\n", f)
	}
	switch {
	case p.Identity:
		fmt.Fprintf(b, "sequence     %s (identity of %s): stays with %s until finish, which drops it with that column\n", p.Sequence, p.Key, p.oldCol())
	case p.Sequence != "" && p.SequenceOwned:
		fmt.Fprintf(b, "sequence     %s (owned by %s): stays %s's default until finish, which drops it with that column\n", p.Sequence, p.Key, p.oldCol())
	case p.Sequence != "" && p.SequenceShared:
		fmt.Fprintf(b, "sequence     %s: stays %s's default until finish; other columns use it too, so finish keeps it\n", p.Sequence, p.oldCol())
	case p.Sequence != "":
		fmt.Fprintf(b, "sequence     %s: stays %s's default until finish, which drops it (nothing else uses it)\n", p.Sequence, p.oldCol())
	}
	fmt.Fprintf(b, "column order %s becomes the last column of %s (and each foreign key column of its table): PostgreSQL cannot reorder columns without rewriting the table\n",
		p.Key, p.Table)
}

func (p *Plan) writeRefusals(b *strings.Builder) {
	for _, r := range p.Refusals {
		fmt.Fprintf(b, "REFUSED      %s %s: %s\n             workaround: %s\n", r.Shape, r.Object, r.Why, r.workaround("Abort"))
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
