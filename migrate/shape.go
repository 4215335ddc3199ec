package migrate

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A Refusal is a shape of schema that Run cannot migrate, found by Inspect
// before anything changes: what it is, the object, why, and what to do
// instead.
type Refusal struct {
	Shape      string // "partitioned table", "key is a foreign key", "check constraint", ...
	Object     string // the object at fault, schema-qualified where it helps
	Why        string
	Workaround string
	// Abort reports a migration in progress, which Abort undoes: another
	// workaround, which String adds to Workaround ("or undo the migration
	// with Abort").
	Abort bool `json:",omitempty"`
}

func (r Refusal) String() string { return r.text("Abort") }

// text is String with abort naming the call that undoes the migration.
func (r Refusal) text(abort string) string {
	return fmt.Sprintf("%s %s: %s; workaround: %s", r.Shape, r.Object, r.Why, r.workaround(abort))
}

// workaround is Workaround, with Abort's workaround named abort.
func (r Refusal) workaround(abort string) string {
	if r.Abort {
		return r.Workaround + ", or undo the migration with " + abort
	}
	return r.Workaround
}

// A ShapeError lists every shape of schema that stops a migration of Table.
// It matches ErrShape and ErrInput with errors.Is: no second run can get
// past it without a change to the schema.
type ShapeError struct {
	Table    string
	Refusals []Refusal
}

func (e *ShapeError) Error() string { return e.Text("Abort") }

// Text returns the error's text with abort naming the call that undoes a
// migration in progress (a Refusal with Abort set): Error's is "Abort";
// the idgen command prints its own command.
func (e *ShapeError) Text(abort string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s cannot be migrated as it is:", ErrShape, e.Table)
	for _, r := range e.Refusals {
		b.WriteString("\n  - " + r.text(abort))
	}
	return b.String()
}

// Brief returns the error in one line, which counts the refusals instead
// of listing them, for a caller that printed them already (Plan.Write): it
// matches ErrShape and ErrInput, and wraps e.
func (e *ShapeError) Brief() error { return &briefShapeError{e} }

type briefShapeError struct{ e *ShapeError }

func (b *briefShapeError) Error() string {
	return fmt.Sprintf("%s: %s cannot be migrated as it is: %d shape(s) refused, listed above", ErrShape, b.e.Table, len(b.e.Refusals))
}

func (b *briefShapeError) Unwrap() error { return b.e }

func (e *ShapeError) Unwrap() []error { return []error{ErrShape, ErrInput} }

// refuse records a shape Run cannot migrate.
func (p *Plan) refuse(shape, object, why, workaround string, args ...any) {
	p.Refusals = append(p.Refusals, Refusal{Shape: shape, Object: object,
		Why: fmt.Sprintf(why, args...), Workaround: workaround})
}

// refused returns the plan's refusals as a *ShapeError, or nil.
func (p *Plan) refused() error {
	if len(p.Refusals) == 0 {
		return nil
	}
	return &ShapeError{Table: p.qtable(), Refusals: p.Refusals}
}

// An Index is an index on a column the migration moves (the key, or a
// foreign key column of a referencing table), or the primary key or unique
// constraint it backs. Before the swap Run builds its twin on the new
// column (CREATE INDEX CONCURRENTLY: no lock that blocks writes); the swap
// renames the index out of the way (<name>_idgen_old) and the twin into
// its place, or, for a constraint, re-adds it with USING INDEX. The index
// keeps its name; Revert does the reverse.
type Index struct {
	Schema, Table, Name string
	// Constraint is "PRIMARY KEY" or "UNIQUE" when the index backs that
	// constraint (of the same name); "" for a plain index. Deferrable holds
	// the constraint's DEFERRABLE clause, if any.
	Constraint string `json:",omitempty"`
	Deferrable string `json:",omitempty"`
	// Def is the index's CREATE INDEX statement (pg_get_indexdef).
	Def string
	// The parts of the definition the twin is built from.
	Unique           bool
	NullsNotDistinct bool `json:",omitempty"`
	Method           string
	Keys             []IndexKey
	Include          []string `json:",omitempty"`
	With             string   `json:",omitempty"` // storage parameters
	Tablespace       string   `json:",omitempty"`
	Where            string   `json:",omitempty"` // predicate of a partial index
	// Clustered and ReplicaIdentity are the table's CLUSTER ON and REPLICA
	// IDENTITY USING INDEX, set again on the twin.
	Clustered, ReplicaIdentity bool `json:",omitempty"`
	// Comment is the index's comment; ConstraintComment the constraint's.
	Comment, ConstraintComment string `json:",omitempty"`
	// Parts are, for an index on a partitioned table, the indexes of its
	// partitions attached to it: the twin is built ON ONLY the partitioned
	// table, then CONCURRENTLY on each partition and attached.
	Parts []IndexPart `json:",omitempty"`
}

// An IndexKey is a key column of an Index: a Column, or an expression
// (Expr) that uses no moved column, with its COLLATE, operator class and
// ordering options.
type IndexKey struct {
	Column string `json:",omitempty"`
	Expr   string `json:",omitempty"`
	Opts   string `json:",omitempty"`
}

// An IndexPart is a partition's index attached to an index on a
// partitioned table.
type IndexPart struct{ Schema, Table, Name string }

func (ix Index) qtable() string               { return pgx.Identifier{ix.Schema, ix.Table}.Sanitize() }
func (ix Index) qname(name string) string     { return pgx.Identifier{ix.Schema, name}.Sanitize() }
func (ip IndexPart) qtable() string           { return pgx.Identifier{ip.Schema, ip.Table}.Sanitize() }
func (ip IndexPart) qname(name string) string { return pgx.Identifier{ip.Schema, name}.Sanitize() }

// twinName returns name+suffix, made to fit PostgreSQL's 63-byte names by
// cutting name and adding a hash of the whole of it.
func twinName(name, suffix string) string {
	const maxName = 63
	if len(name)+len(suffix) <= maxName {
		return name + suffix
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	cut := maxName - len(suffix) - 9
	for cut > 0 && !validCut(name, cut) {
		cut--
	}
	return fmt.Sprintf("%s_%08x%s", name[:cut], h.Sum32(), suffix)
}

// validCut reports whether name can be cut at byte n without splitting a
// UTF-8 sequence.
func validCut(name string, n int) bool { return n >= len(name) || name[n]&0xC0 != 0x80 }

// createSQL returns the CREATE INDEX of ix's twin named name on table
// (ix's table or a partition's), the moved columns renamed with suffix:
// ON ONLY for a partitioned table's index, CONCURRENTLY otherwise.
func (ix Index) createSQL(name, table string, moved map[string]bool, suffix string, only bool) string {
	col := func(c string) string {
		if moved[c] {
			return ident(c + suffix)
		}
		return ident(c)
	}
	keys := make([]string, len(ix.Keys))
	for i, k := range ix.Keys {
		if k.Column != "" {
			keys[i] = col(k.Column) + k.Opts
		} else {
			keys[i] = k.Expr + k.Opts
		}
	}
	var b strings.Builder
	b.WriteString("CREATE ")
	if ix.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX ")
	if only {
		fmt.Fprintf(&b, "%s ON ONLY %s", ident(name), table)
	} else {
		fmt.Fprintf(&b, "CONCURRENTLY %s ON %s", ident(name), table)
	}
	fmt.Fprintf(&b, " USING %s (%s)", ident(ix.Method), strings.Join(keys, ", "))
	if len(ix.Include) > 0 {
		inc := make([]string, len(ix.Include))
		for i, c := range ix.Include {
			inc[i] = col(c)
		}
		fmt.Fprintf(&b, " INCLUDE (%s)", strings.Join(inc, ", "))
	}
	if ix.NullsNotDistinct {
		b.WriteString(" NULLS NOT DISTINCT")
	}
	if ix.With != "" {
		fmt.Fprintf(&b, " WITH (%s)", ix.With)
	}
	if ix.Tablespace != "" {
		fmt.Fprintf(&b, " TABLESPACE %s", ident(ix.Tablespace))
	}
	if ix.Where != "" {
		fmt.Fprintf(&b, " WHERE %s", ix.Where)
	}
	return b.String()
}

// columns names ix's key columns and expressions, for the plan.
func (ix Index) columns() string {
	keys := make([]string, len(ix.Keys))
	for i, k := range ix.Keys {
		keys[i] = k.Column
		if k.Column == "" {
			keys[i] = k.Expr
		}
	}
	return strings.Join(keys, ", ")
}

// moved returns the columns the migration moves on the table schema.table
// (or its partitions, named by their partitioned table): the key on the
// migrated table, the foreign key columns on referencing tables.
func (p *Plan) moved(schema, table string) map[string]bool {
	m := map[string]bool{}
	if schema == p.Schema && table == p.Table {
		m[p.Key] = true
	}
	for _, c := range p.childColumns() {
		if c.schema == schema && c.table == table {
			m[c.column] = true
		}
	}
	return m
}

// A childColumn is a column of a referencing table that the migration
// moves: the new column and triggers go on table (the partitioned table
// when the foreign keys are declared on its partitions), the backfill runs
// on each of leaves (table itself when not partitioned).
type childColumn struct {
	schema, table, column string
	notNull               bool
	leaves                []string // sanitized names
}

func (c childColumn) qtable() string { return pgx.Identifier{c.schema, c.table}.Sanitize() }
func (c childColumn) same(o childColumn) bool {
	return c.schema == o.schema && c.table == o.table && c.column == o.column
}
func (c childColumn) newCol() string { return c.column + "_idgen_new" }
func (c childColumn) oldCol() string { return c.column + "_old" }
func (c childColumn) prefix() string { return c.table + "_" + c.column }
func (c childColumn) assignFunc() string {
	return pgx.Identifier{c.schema, c.prefix() + "_idgen_assign"}.Sanitize()
}
func (c childColumn) assignTrigger() string { return ident(c.prefix() + "_idgen_assign") }
func (c childColumn) keepFunc() string {
	return pgx.Identifier{c.schema, c.prefix() + "_idgen_keep_old"}.Sanitize()
}
func (c childColumn) keepTrigger() string  { return ident(c.prefix() + "_idgen_keep_old") }
func (c childColumn) checkName() string    { return c.prefix() + "_idgen_new_check" }
func (c childColumn) oldCheckName() string { return c.prefix() + "_idgen_old_check" }

// check is the CHECK that proves the column col complete against its
// source column src.
func (c childColumn) check(src, col string) string {
	if c.notNull {
		return fmt.Sprintf("CHECK (%s IS NOT NULL)", ident(col))
	}
	return fmt.Sprintf("CHECK ((%s IS NULL) = (%s IS NULL))", ident(src), ident(col))
}

// childColumns returns the distinct columns the foreign keys in p.FKs
// move, in the order of p.FKs.
func (p *Plan) childColumns() []childColumn {
	var cs []childColumn
	for _, fk := range p.FKs {
		c := childColumn{schema: fk.Schema, table: fk.Table, column: fk.Column, notNull: fk.NotNull, leaves: []string{fk.qtable()}}
		if fk.Root != "" {
			c.schema, c.table, c.leaves = fk.RootSchema, fk.Root, fk.Leaves
		}
		dup := false
		for _, o := range cs {
			if o.schema == c.schema && o.table == c.table && o.column == c.column {
				dup = true
			}
		}
		if !dup {
			cs = append(cs, c)
		}
	}
	return cs
}

// A unit is one table (a partition, or a table that is not partitioned)
// whose column the children phase backfills.
type unit struct {
	col   childColumn
	table string // sanitized
}

func (p *Plan) units() []unit {
	var us []unit
	for _, c := range p.childColumns() {
		for _, l := range c.leaves {
			us = append(us, unit{c, l})
		}
	}
	return us
}
