package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// Verify checks a migration of table, during its later phases or after it:
// every row has a new key, new keys are unique, every row with an old key
// has the mapping row old → new, every child row's new foreign key
// references an existing parent and matches the mapping of its old one,
// and, after the swap, the primary key and validated foreign keys are in
// place. Problems are listed in the report; the error is for failures to
// check, and wraps ErrInput when the table has no migration.
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
	swapped := p.Phase == phaseValidate || p.Phase == phaseDone
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
	for _, fk := range p.FKs {
		c := ChildReport{Table: fk.Table, Column: fk.Column}
		newFK, oldFK := ident(fk.newCol()), ident(fk.Column)
		if swapped {
			newFK, oldFK = ident(fk.Column), ident(fk.oldCol())
		}
		q := fmt.Sprintf(`SELECT count(*),
			count(*) FILTER (WHERE c.%[1]s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %[3]s p WHERE p.%[4]s = c.%[1]s)),
			count(*) FILTER (WHERE c.%[2]s IS NOT NULL AND c.%[1]s IS NULL),
			count(*) FILTER (WHERE c.%[2]s IS NOT NULL AND c.%[1]s IS NOT NULL AND NOT EXISTS
				(SELECT 1 FROM %[5]s m WHERE m.old_key = c.%[2]s AND m.new_key = c.%[1]s))
			FROM %[6]s c`, newFK, oldFK, p.qtable(), newKey, p.mapTable(), fk.qtable())
		if err := conn.QueryRow(ctx, q).Scan(&c.Rows, &c.Orphans, &c.Missing, &c.Mismatched); err != nil {
			return nil, err
		}
		if c.Orphans > 0 {
			problem("%s.%s: %d rows reference no %s row", fk.Table, fk.Column, c.Orphans, p.Table)
		}
		if c.Missing > 0 {
			problem("%s.%s: %d rows have an old foreign key and no new one", fk.Table, fk.Column, c.Missing)
		}
		if c.Mismatched > 0 {
			problem("%s.%s: %d rows' new foreign key differs from the mapping of the old one", fk.Table, fk.Column, c.Mismatched)
		}
		if swapped {
			err := conn.QueryRow(ctx, `SELECT convalidated FROM pg_constraint WHERE conrelid = to_regclass($1) AND conname = $2 AND contype = 'f'`,
				fk.qtable(), fk.Name).Scan(&c.Validated)
			if errors.Is(err, pgx.ErrNoRows) {
				problem("%s: foreign key %s is missing", fk.Table, fk.Name)
			} else if err != nil {
				return nil, err
			} else if !c.Validated && p.Phase == phaseDone {
				problem("%s: foreign key %s is not validated", fk.Table, fk.Name)
			}
		}
		r.Children = append(r.Children, c)
	}
	return r, nil
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
