package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// Errors. Wrapping errors name the table, column or spec at fault.
var (
	// ErrInput reports input Inspect and Run refuse before changing
	// anything: an unknown table or column, a table without a single-column
	// primary key, a target whose values do not fit the key column.
	ErrInput = errors.New("migrate: bad input")
	// ErrOrder reports a bigint → Snowflake migration whose new keys would
	// not all be larger than the current maximum key.
	ErrOrder = errors.New("migrate: new keys would not sort after the old ones")
	// ErrVerify reports a failed Verify.
	ErrVerify = errors.New("migrate: verify failed")
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
	Table    string
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
}

func inputf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// clip cuts an input echoed in a message to about 64 characters.
func clip(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-3]) + "…"
}

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
func (p *Plan) uniqueIndex() string          { return p.Table + "_idgen_new_key" }
func (p *Plan) checkName() string            { return p.Table + "_idgen_new_not_null" }
func (fk FK) qtable() string                 { return pgx.Identifier{fk.Schema, fk.Table}.Sanitize() }
func (fk FK) newCol() string                 { return fk.Column + "_idgen_new" }
func (fk FK) oldCol() string                 { return fk.Column + "_old" }
func (fk FK) assignFunc() string {
	return pgx.Identifier{fk.Schema, fk.Table + "_" + fk.Column + "_idgen_assign"}.Sanitize()
}
func (fk FK) checkName() string    { return fk.Table + "_" + fk.Column + "_idgen_new_check" }
func (fk FK) oldCheckName() string { return fk.Table + "_" + fk.Column + "_idgen_old_check" }
func (fk FK) keepFunc() string {
	return pgx.Identifier{fk.Schema, fk.Table + "_" + fk.Column + "_idgen_keep_old"}.Sanitize()
}
func (p *Plan) keepFunc() string     { return p.ident(p.Schema, p.Table+"_idgen_keep_old") }
func (p *Plan) oldIndex() string     { return p.Table + "_idgen_old_key" }
func (p *Plan) oldCheckName() string { return p.Table + "_idgen_old_not_null" }
func (fk FK) indexName() string      { return fk.Table + "_" + fk.Column + "_idgen_idx" }

// Inspect examines opt.Table and returns the plan for migrating it to
// opt.To. It changes nothing. Errors wrap ErrInput for input that Run would
// refuse; a bigint → Snowflake plan whose order does not hold is returned
// with OrderHolds false and no error.
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

func inspect(ctx context.Context, conn *pgx.Conn, opt Options) (*Plan, error) {
	if opt.Table == "" {
		return nil, inputf("no table given")
	}
	p := &Plan{To: opt.To, TimeColumn: opt.TimeColumn}
	var oid uint32
	err := conn.QueryRow(ctx, `SELECT c.oid, n.nspname, c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p')`, opt.Table).Scan(&oid, &p.Schema, &p.Table)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, inputf("table %q not found", clip(opt.Table))
	}
	if err != nil {
		return nil, tableErr(opt.Table, err)
	}
	if err := p.loadState(ctx, conn); err != nil {
		return nil, err
	}
	if p.Phase != "" {
		return p, p.inspectResumed(ctx, conn, oid, opt)
	}
	if opt.To == "" {
		return nil, inputf("no target scheme given (Options.To), e.g. snowflake or uuidv7")
	}
	if err := p.inspectKey(ctx, conn, oid); err != nil {
		return nil, err
	}
	if err := p.inspectTarget(opt.To); err != nil {
		return nil, err
	}
	if err := p.inspectTime(ctx, conn, oid, opt.TimeColumn); err != nil {
		return nil, err
	}
	if err := p.inspectFKs(ctx, conn, oid); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+p.qtable()).Scan(&p.Rows); err != nil {
		return nil, err
	}
	if p.KeyType != "uuid" {
		var max *int64
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT max(%s)::bigint FROM %s", p.ident(p.Key), p.qtable())).Scan(&max); err != nil {
			return nil, err
		}
		if max != nil {
			p.MaxKey = fmt.Sprint(*max)
		} else {
			p.MaxKey = "0"
		}
	}
	p.Start = time.Now().UTC()
	if err := p.checkOrder(); err != nil {
		return nil, err
	}
	p.sizes(ctx, conn)
	return p, nil
}

// inspectResumed fills a plan for a migration in progress from its state.
func (p *Plan) inspectResumed(ctx context.Context, conn *pgx.Conn, oid uint32, opt Options) error {
	if opt.To == "" {
		// Resume as recorded.
		opt.To, opt.TimeColumn = p.To, p.TimeColumn
	}
	if opt.To != p.To && p.Phase == phaseDone {
		return inputf("table %s is already migrated to %q; Options.To %q differs", p.qtable(), clip(p.To), clip(opt.To))
	}
	if opt.To != p.To {
		return inputf("table %s is being migrated to %q; Options.To %q differs (resume with the same Options.To)", p.qtable(), clip(p.To), clip(opt.To))
	}
	if opt.TimeColumn != p.TimeColumn {
		return inputf("table %s is being migrated with Options.TimeColumn %q; got %q", p.qtable(), clip(p.TimeColumn), clip(opt.TimeColumn))
	}
	if err := p.inspectTarget(p.To); err != nil {
		return err
	}
	var keyType string
	err := conn.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1 AND attname = $2 AND NOT attisdropped`, oid, p.Key).Scan(&keyType)
	if err != nil {
		return fmt.Errorf("migrate: state names key %s: %w", p.Key, err)
	}
	if p.TimeColumn != "" {
		if err := conn.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = $1 AND attname = $2 AND NOT attisdropped`, oid, p.TimeColumn).Scan(&p.TimeType); err != nil {
			return fmt.Errorf("migrate: state names time column %s: %w", p.TimeColumn, err)
		}
	}
	p.OrderHolds = true
	return conn.QueryRow(ctx, "SELECT count(*) FROM "+p.qtable()).Scan(&p.Rows)
}

func (p *Plan) inspectKey(ctx context.Context, conn *pgx.Conn, oid uint32) error {
	var keys []string
	err := conn.QueryRow(ctx, `SELECT con.conname, array(SELECT a.attname::text FROM unnest(con.conkey) k
			JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k)
		FROM pg_constraint con WHERE con.conrelid = $1 AND con.contype = 'p'`, oid).Scan(&p.PKName, &keys)
	if errors.Is(err, pgx.ErrNoRows) {
		return inputf("table %s has no primary key; migrate needs a single-column primary key", p.qtable())
	}
	if err != nil {
		return err
	}
	if len(keys) != 1 {
		return inputf("table %s has a composite primary key (%s); migrate needs a single-column primary key",
			p.qtable(), strings.Join(keys, ", "))
	}
	p.Key = keys[0]
	if err := conn.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
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
	s, params, err := strategies.Resolve(spec)
	if err != nil {
		return fmt.Errorf("%w: Options.To: %w", ErrInput, err)
	}
	scheme, err := strategies.SchemeOf(spec)
	if err != nil {
		return fmt.Errorf("%w: Options.To %q: %w", ErrInput, clip(spec), err)
	}
	p.Scheme, p.NewType = scheme, scheme.Column
	intKey := p.KeyType != "uuid"
	switch {
	case s.Name == "snowflake" && intKey:
		l, _ := snowflake.LayoutOf(scheme)
		if l.Bits() > 63 {
			return inputf("Options.To %q: its %d-bit layout issues values above 2^63-1, which do not fit the bigint key %s.%s; use a layout of at most 63 bits",
				clip(spec), l.Bits(), p.Table, p.Key)
		}
		_, hasSeq := l.Field(snowflake.FieldSequence)
		_, hasRand := l.Field(snowflake.FieldRandom)
		if !hasSeq && !hasRand {
			return inputf("Options.To %q: the layout has no sequence or random field; the migration trigger needs one", clip(spec))
		}
		p.Layout = l
		p.Nodes = map[string]int64{}
		for _, f := range l.Fields {
			if !isNode(f.Name) {
				continue
			}
			if p.ReservedField == "" || f.Name == "worker" {
				p.ReservedField = f.Name
			}
			if params.Has(f.Name) {
				s := params.String(f.Name, "")
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil || v < 0 || v >= 1<<f.Bits {
					return inputf("Options.To %q: %s %q: want an integer in [0, %d]", clip(spec), f.Name, clip(s), int64(1)<<f.Bits-1)
				}
				p.Nodes[f.Name] = v
			}
		}
		if p.ReservedField == "" && !hasRand {
			return inputf("Options.To %q: the layout has no node field to reserve worker IDs for the migration", clip(spec))
		}
		if p.ReservedField != "" {
			b, _ := l.Field(p.ReservedField)
			p.TriggerWorker = int64(1)<<b - 1
			p.BackfillWorker = max(0, p.TriggerWorker-1)
			p.Nodes[p.ReservedField] = p.BackfillWorker
		}
	case s.Name == "uuidv7" && !intKey:
	case intKey:
		return inputf("Options.To %q: %s values are %d bytes (%s); they do not fit the %s key %s.%s; for integer keys use snowflake",
			clip(spec), scheme.Name, scheme.Size, scheme.Column, p.KeyType, p.Table, p.Key)
	default:
		return inputf("Options.To %q: %s values (%s) do not fit the uuid key %s.%s; for uuid keys use uuidv7",
			clip(spec), scheme.Name, scheme.Column, p.Table, p.Key)
	}
	return nil
}

func isNode(name string) bool {
	for _, n := range snowflake.NodeFields {
		if n == name {
			return true
		}
	}
	return false
}

func (p *Plan) inspectTime(ctx context.Context, conn *pgx.Conn, oid uint32, col string) error {
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
		return inputf("Options.TimeColumn %s.%s is %s; want timestamptz, timestamp or date", p.Table, col, p.TimeType)
	}
	var nulls int64
	var lo, hi *time.Time
	q := fmt.Sprintf("SELECT count(*) FILTER (WHERE %[1]s IS NULL), min(%[1]s)::timestamptz, max(%[1]s)::timestamptz FROM %[2]s",
		p.ident(col), p.qtable())
	if err := conn.QueryRow(ctx, q).Scan(&nulls, &lo, &hi); err != nil {
		return err
	}
	if nulls > 0 {
		return inputf("Options.TimeColumn %s.%s has %d NULLs; fill them first", p.Table, col, nulls)
	}
	if lo != nil {
		p.MinTime, p.MaxTime = lo.UTC(), hi.UTC()
	}
	return nil
}

var fkActions = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

const fkQuery = `SELECT con.conname, n.nspname, c.relname,
		array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, i)
			JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.i),
		array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, i)
			JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.i),
		con.confdeltype::text, con.confupdtype::text,
		coalesce((SELECT u.conname::text FROM pg_constraint u WHERE u.conrelid = con.confrelid AND u.conindid = con.conindid
			AND u.contype IN ('p', 'u')), '')
	FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
	JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE con.contype = 'f' AND con.confrelid = $1 ORDER BY n.nspname, c.relname, con.conname`

// inspectFKs finds the foreign keys that reference the key: single-column
// ones, and composite ones through a unique constraint that includes it
// (foreign keys through other unique constraints are unaffected).
func (p *Plan) inspectFKs(ctx context.Context, conn *pgx.Conn, oid uint32) error {
	rows, err := conn.Query(ctx, fkQuery, oid)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var fk FK
		var del, upd, unique string
		var cols, refs []string
		if err := rows.Scan(&fk.Name, &fk.Schema, &fk.Table, &cols, &refs, &del, &upd, &unique); err != nil {
			return err
		}
		at := slices.Index(refs, p.Key)
		if at < 0 {
			continue
		}
		fk.Column = cols[at]
		if len(cols) > 1 {
			if unique == "" {
				return inputf("foreign key %s on %s references %s (%s) through a unique index without a constraint; make it a UNIQUE constraint first",
					fk.Name, fk.Table, p.Table, strings.Join(refs, ", "))
			}
			fk.Columns, fk.RefColumns, fk.RefConstraint = cols, refs, unique
		}
		fk.OnDelete, fk.OnUpdate = fkActions[del], fkActions[upd]
		p.FKs = append(p.FKs, fk)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for i := range p.FKs {
		fk := &p.FKs[i]
		if err := conn.QueryRow(ctx, `SELECT a.attnotnull, EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indkey[0] = a.attnum)
			FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = $2`, fk.qtable(), fk.Column).Scan(&fk.NotNull, &fk.Indexed); err != nil {
			return err
		}
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
			return fmt.Errorf("%w: Options.To %q: %w", ErrInput, clip(p.To), err)
		}
		id, err := g.NewAt(t)
		if err != nil {
			return inputf("Options.To %q cannot key a row created at %s: %v", clip(p.To), t.Format(time.RFC3339), err)
		}
		if _, err := g.NewAt(p.Start); err != nil {
			return inputf("Options.To %q cannot key a row created now: %v", clip(p.To), err)
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
			return inputf("Options.To %q cannot key a row created at %s: %v", clip(p.To), t.Format(time.RFC3339), err)
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
func (p *Plan) sizes(ctx context.Context, conn *pgx.Conn) {
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
	add("trigger on %s: rows inserted from now on get %s = %s() and a mapping row", p.Table, p.newCol(), p.keyFunc())
	for _, fk := range p.FKs {
		add("add column %s.%s %s and a trigger copying the parent's new key on insert/update", fk.Table, fk.newCol(), p.NewType)
	}
	if p.TimeColumn != "" {
		add("backfill %s.%s in batches ordered by (%s, %s) with NewAt(%s): new keys keep creation order", p.Table, p.newCol(), p.TimeColumn, p.Key, p.TimeColumn)
	} else {
		add("backfill %s.%s in batches in %s order, keys issued at the migration's start: new keys keep the current key order", p.Table, p.newCol(), p.Key)
	}
	add("CHECK (%s IS NOT NULL) NOT VALID + VALIDATE; CREATE UNIQUE INDEX CONCURRENTLY %s", p.newCol(), p.uniqueIndex())
	for _, fk := range p.FKs {
		idx := ""
		if fk.Indexed {
			idx = "; CREATE INDEX CONCURRENTLY " + fk.indexName()
		}
		add("backfill %s.%s from %s in batches of heap blocks; CHECK + VALIDATE%s", fk.Table, fk.newCol(), p.Table, idx)
	}
	add("swap in one transaction (lock_timeout 5s, retried): drop %d foreign key(s) and %s; rename %s -> %s, %s -> %s; PRIMARY KEY USING INDEX; default %s(); foreign keys re-added NOT VALID",
		len(p.FKs), p.PKName, p.Key, p.oldCol(), p.newCol(), p.Key, p.keyFunc())
	if len(p.FKs) > 0 {
		add("VALIDATE CONSTRAINT on each foreign key (no lock that blocks writes)")
	}
	add("keep %s and the *_old columns for rollback; drop them when satisfied", p.mapTable())
	return s
}

// Write prints the plan.
func (p *Plan) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "table        %s: %d rows, primary key %s %s (%s)\n", p.qtable(), p.Rows, p.Key, p.KeyType, p.PKName)
	switch p.Phase {
	case "":
	case phaseDone:
		fmt.Fprintf(&b, "migrated     to %s (phase done): no rows to convert; the old keys are in %s and %s\n",
			p.To, p.oldCol(), p.mapTable())
		_, err := io.WriteString(w, b.String())
		return err
	default:
		fmt.Fprintf(&b, "in progress  migration to %s, phase %s (run resumes it)\n", p.To, p.Phase)
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
		fmt.Fprintf(&b, "foreign key  %s: %s.%s (%s, ON DELETE %s)\n", fk.Name, fk.qtable(), fk.Column, null, fk.OnDelete)
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
		b.WriteString("steps\n")
		for i, s := range p.Steps() {
			fmt.Fprintf(&b, "  %2d. %s\n", i+1, s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
