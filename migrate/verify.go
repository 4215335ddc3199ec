package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A Report is Verify's result.
type Report struct {
	Table    string
	Phase    string
	Rows     int64 // rows in the table
	Keys     int64 // rows with a new key
	Distinct int64 // distinct new keys
	Mapped   int64 // rows with an old key whose mapping row gives their new key
	OldKeys  int64 // rows with an old key (rows inserted after the swap have none)
	Children []ChildReport
	Problems []string
}

// A ChildReport is Verify's result for one referencing table.
type ChildReport struct {
	Table, Column string
	Rows          int64
	Orphans       int64 // new foreign key set but no parent has that key
	Missing       int64 // old foreign key set, new one NULL
	Mismatched    int64 // new foreign key differs from the mapping of the old one
	Validated     bool  // after the swap: the foreign key constraint is validated
}

// OK reports whether Verify found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Err returns nil when the report is OK, else an error wrapping ErrVerify
// that counts the problems: "migrate: verify failed: 2 problem(s) in
// "public"."orders"".
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	return fmt.Errorf("%w: %d problem(s) in %s", ErrVerify, len(r.Problems), r.Table)
}

// Verify checks a migration of table, during its later phases or after it:
// every row has a new key, new keys are unique, every row with an old key
// has the mapping row old → new, every child row's new foreign key
// references an existing parent and matches the mapping of its old one,
// and, after the swap, that the result holds: the primary key and the
// validated foreign keys are on the new columns, no foreign key (of any
// table) sits on an *_old column, no row is orphaned through the new key
// (also through a foreign key left on an old column: the key of a 1:1
// extension table migrated alone), and no view or rule still reads an
// *_old column. Problems are listed in the report; the error is for
// failures to check, and wraps ErrInput when the table has no migration.
func Verify(ctx context.Context, conn *pgx.Conn, table string) (*Report, error) {
	r, err := verify(ctx, conn, table)
	return r, withStep(err, "verify table %q", clip(table))
}

func verify(ctx context.Context, conn *pgx.Conn, table string) (*Report, error) {
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return nil, err
	}
	var oid uint32
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1)::oid", p.qtable()).Scan(&oid); err != nil {
		return nil, err
	}
	r := &Report{Table: p.qtable(), Phase: p.Phase}
	swapped := p.swapped()
	newKey, oldKey := ident(p.newCol()), ident(p.Key)
	if swapped {
		newKey, oldKey = ident(p.Key), ident(p.oldCol())
	}
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	q := fmt.Sprintf(`SELECT count(*), count(%[1]s), count(DISTINCT %[1]s), count(%[2]s),
		count(*) FILTER (WHERE %[2]s IS NOT NULL AND EXISTS (SELECT 1 FROM %[4]s m WHERE m.old_key = t.%[2]s AND m.new_key = t.%[1]s))
		FROM %[3]s t`, newKey, oldKey, p.qtable(), p.mapTable())
	if err := conn.QueryRow(ctx, q).Scan(&r.Rows, &r.Keys, &r.Distinct, &r.OldKeys, &r.Mapped); err != nil {
		return nil, err
	}
	if r.Keys != r.Rows {
		problem("%d of %d rows have no new key", r.Rows-r.Keys, r.Rows)
	}
	if r.Distinct != r.Keys {
		problem("%d duplicate new keys", r.Keys-r.Distinct)
	}
	if r.Mapped != r.OldKeys {
		problem("%d of %d rows with an old key lack their mapping row", r.OldKeys-r.Mapped, r.OldKeys)
	}
	if swapped {
		var pk []string
		err := conn.QueryRow(ctx, `SELECT array(SELECT a.attname::text FROM pg_constraint con
			JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = ANY (con.conkey)
			WHERE con.conrelid = $1 AND con.contype = 'p')`, oid).Scan(&pk)
		if err != nil {
			return nil, err
		}
		if len(pk) != 1 || pk[0] != p.Key {
			problem("primary key is (%s); want (%s)", strings.Join(pk, ", "), p.Key)
		}
	}
	for _, c := range p.childColumns() {
		cr := ChildReport{Table: c.table, Column: c.column, Validated: swapped}
		newFK, oldFK := ident(c.newCol()), ident(c.column)
		if swapped {
			newFK, oldFK = ident(c.column), ident(c.oldCol())
		}
		q := fmt.Sprintf(`SELECT count(*),
			count(*) FILTER (WHERE c.%[1]s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %[3]s p WHERE p.%[4]s = c.%[1]s)),
			count(*) FILTER (WHERE c.%[2]s IS NOT NULL AND c.%[1]s IS NULL),
			count(*) FILTER (WHERE c.%[2]s IS NOT NULL AND c.%[1]s IS NOT NULL AND NOT EXISTS
				(SELECT 1 FROM %[5]s m WHERE m.old_key = c.%[2]s AND m.new_key = c.%[1]s))
			FROM %[6]s c`, newFK, oldFK, p.qtable(), newKey, p.mapTable(), c.qtable())
		if err := conn.QueryRow(ctx, q).Scan(&cr.Rows, &cr.Orphans, &cr.Missing, &cr.Mismatched); err != nil {
			return nil, err
		}
		if cr.Orphans > 0 {
			problem("%s.%s: %d rows reference no %s row", c.table, c.column, cr.Orphans, p.Table)
		}
		if cr.Missing > 0 {
			problem("%s.%s: %d rows have an old foreign key and no new one", c.table, c.column, cr.Missing)
		}
		if cr.Mismatched > 0 {
			problem("%s.%s: %d rows' new foreign key differs from the mapping of the old one", c.table, c.column, cr.Mismatched)
		}
		if swapped {
			for _, fk := range p.FKs {
				if fk.Column != c.column || fk.qtable() != c.qtable() && !slices.Contains(c.leaves, fk.qtable()) {
					continue
				}
				ok, err := verifyFK(ctx, conn, p, fk, problem)
				if err != nil {
					return nil, err
				}
				cr.Validated = cr.Validated && ok
			}
		}
		r.Children = append(r.Children, cr)
	}
	if swapped {
		if err := verifyOld(ctx, conn, p, problem); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// verifyFK checks that fk sits on the new columns, and reports whether it
// is validated (a foreign key declared on a partitioned table: on each
// partition until the validate phase adds it back there).
func verifyFK(ctx context.Context, conn *pgx.Conn, p *Plan, fk FK, problem func(string, ...any)) (bool, error) {
	tables, names := []string{fk.qtable()}, []string{fk.Name}
	if fk.Clones != nil {
		var attached bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND conname = $2)",
			fk.qtable(), fk.Name).Scan(&attached); err != nil {
			return false, err
		}
		if !attached {
			tables, names = fk.Leaves, fk.Clones
		}
	}
	valid := true
	for i, t := range tables {
		var cols, refs []string
		var validated bool
		err := conn.QueryRow(ctx, `SELECT array(SELECT a.attname::text FROM unnest(con.conkey) k JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k),
				array(SELECT a.attname::text FROM unnest(con.confkey) k JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k),
				con.convalidated
			FROM pg_constraint con WHERE con.conrelid = to_regclass($1) AND con.conname = $2 AND con.contype = 'f'`, t, names[i]).Scan(&cols, &refs, &validated)
		if errors.Is(err, pgx.ErrNoRows) {
			problem("%s: foreign key %s is missing", t, names[i])
			valid = false
			continue
		}
		if err != nil {
			return false, err
		}
		if !slices.Contains(cols, fk.Column) || !slices.Contains(refs, p.Key) {
			problem("%s: foreign key %s is on (%s) referencing (%s); want %s referencing %s.%s", t, names[i],
				strings.Join(cols, ", "), strings.Join(refs, ", "), fk.Column, p.Table, p.Key)
		}
		if !validated && p.Phase == phaseDone {
			problem("%s: foreign key %s is not validated", t, names[i])
		}
		valid = valid && validated
	}
	return valid, nil
}

// verifyOld checks, after the swap, that nothing still uses an *_old
// column: no foreign key sits on one (and no row is orphaned through the
// new column that took its name), and no view or rule reads one.
func verifyOld(ctx context.Context, conn *pgx.Conn, p *Plan, problem func(string, ...any)) error {
	type col struct{ table, column, newCol string }
	cols := []col{{p.qtable(), p.oldCol(), p.Key}}
	for _, c := range p.childColumns() {
		for _, t := range append([]string{c.qtable()}, c.leaves...) {
			if !slices.ContainsFunc(cols, func(o col) bool { return o.table == t && o.column == c.oldCol() }) {
				cols = append(cols, col{t, c.oldCol(), c.column})
			}
		}
	}
	for _, c := range cols {
		rows, err := conn.Query(ctx, `SELECT con.conname::text, con.conrelid::regclass::text, con.confrelid::regclass::text,
				con.conrelid = $1::regclass AND a.attnum = ANY (con.conkey),
				array(SELECT x.attname::text FROM unnest(con.conkey) k JOIN pg_attribute x ON x.attrelid = con.conrelid AND x.attnum = k),
				array(SELECT x.attname::text FROM unnest(con.confkey) k JOIN pg_attribute x ON x.attrelid = con.confrelid AND x.attnum = k)
			FROM pg_attribute a JOIN pg_constraint con ON con.contype = 'f' AND con.conparentid = 0
				AND (con.conrelid = a.attrelid AND a.attnum = ANY (con.conkey) OR con.confrelid = a.attrelid AND a.attnum = ANY (con.confkey))
			WHERE a.attrelid = $1::regclass AND a.attname = $2`, c.table, c.column)
		if err != nil {
			return err
		}
		type bad struct {
			name, on, ref string
			outgoing      bool
			cols, refs    []string
		}
		var bads []bad
		for rows.Next() {
			var b bad
			if err := rows.Scan(&b.name, &b.on, &b.ref, &b.outgoing, &b.cols, &b.refs); err != nil {
				return err
			}
			bads = append(bads, b)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, b := range bads {
			problem("%s: foreign key %s sits on the old column %s.%s (it should be on %s)", b.on, b.name, c.table, c.column, c.newCol)
			if !b.outgoing {
				continue
			}
			// The rows' join through the new column that took the name.
			on := make([]string, len(b.cols))
			notNull := make([]string, len(b.cols))
			for i, k := range b.cols {
				if k == c.column {
					k = c.newCol
				}
				on[i] = fmt.Sprintf("r.%s = t.%s", ident(b.refs[i]), ident(k))
				notNull[i] = fmt.Sprintf("t.%s IS NOT NULL", ident(k))
			}
			var orphans, total int64
			if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FILTER (WHERE %s AND NOT EXISTS (SELECT 1 FROM %s r WHERE %s)), count(*) FROM %s t`,
				strings.Join(notNull, " AND "), b.ref, strings.Join(on, " AND "), b.on)).Scan(&orphans, &total); err != nil {
				return err
			}
			if orphans > 0 {
				problem("%s: %d of %d rows are orphaned through the new key %s: no %s row matches them", b.on, orphans, total, c.newCol, b.ref)
			}
		}
		var readers []string
		if err := conn.QueryRow(ctx, `SELECT array(SELECT DISTINCT CASE WHEN r.rulename = '_RETURN' THEN 'view ' ELSE 'rule ' || quote_ident(r.rulename) || ' on ' END
				|| r.ev_class::regclass::text
			FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
			JOIN pg_rewrite r ON r.oid = d.objid
			WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1::regclass AND a.attname = $2 ORDER BY 1)`,
			c.table, c.column).Scan(&readers); err != nil {
			return err
		}
		for _, v := range readers {
			problem("%s still reads the old column %s.%s", v, c.table, c.column)
		}
	}
	return nil
}

// Write prints the report.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "table   %s (phase %s): %d rows, %d new keys, %d distinct, %d of %d old keys mapped\n",
		r.Table, r.Phase, r.Rows, r.Keys, r.Distinct, r.Mapped, r.OldKeys)
	for _, c := range r.Children {
		fmt.Fprintf(&b, "child   %s.%s: %d rows, %d orphans, %d missing, %d mismatched\n",
			c.Table, c.Column, c.Rows, c.Orphans, c.Missing, c.Mismatched)
	}
	if r.OK() {
		b.WriteString("verify  ok\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "problem %s\n", p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
