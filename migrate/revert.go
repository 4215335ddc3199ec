package migrate

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Revert swaps table back to its old keys after the swap (phases validate
// and done): it rebuilds the primary key and unique constraints' indexes
// on the old columns and proves the old columns complete with validated
// CHECKs (no lock that blocks writes), then, in one short transaction
// under ACCESS EXCLUSIVE locks (lock_timeout 5s, retried), makes the old
// key the primary key again, puts the other indexes (kept under
// *_idgen_old names) back in place, re-adds the foreign keys on the old
// columns NOT VALID and re-creates the dependent views, rules and triggers
// on them; it validates the foreign keys afterwards. The new key columns
// stay, renamed back to *_idgen_new, until Finish. It returns how long the
// transaction took. Rows inserted after the swap have their old keys from
// the old column's default (kept at the swap) and their children's old
// foreign keys from a trigger. Errors wrap ErrInput when the table has no
// swapped migration.
func Revert(ctx context.Context, conn *pgx.Conn, table string) (time.Duration, error) {
	took, err := revert(ctx, conn, table)
	return took, withStep(err, "revert table %q", clip(table))
}

func revert(ctx context.Context, conn *pgx.Conn, table string) (time.Duration, error) {
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return 0, err
	}
	if !p.swapped() {
		return 0, inputf("the migration of %s is in phase %s; revert works after the swap (phase validate or done)", p.qtable(), p.Phase)
	}
	unlock, err := p.lock(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer unlock()
	return (&migration{conn: conn, p: p}).revert(ctx)
}

func (m *migration) revert(ctx context.Context) (time.Duration, error) {
	p := m.p
	oc := ident(p.oldCol())
	var missing int64
	if err := m.conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NULL", p.qtable(), oc)).Scan(&missing); err != nil {
		return 0, err
	}
	if missing > 0 {
		return 0, fmt.Errorf("migrate: %d rows of %s have no old key (%s IS NULL: the old key column has no default); give them one, then revert",
			missing, p.qtable(), p.oldCol())
	}
	if err := m.addCheck(ctx, p.qtable(), p.oldCheckName(), fmt.Sprintf("CHECK (%s IS NOT NULL)", oc)); err != nil {
		return 0, err
	}
	for _, c := range p.childColumns() {
		if err := m.addCheck(ctx, c.qtable(), c.oldCheckName(), c.check(c.column, c.oldCol())); err != nil {
			return 0, fmt.Errorf("%s.%s: %w", c.qtable(), c.oldCol(), err)
		}
	}
	// The constraints' indexes went with them at the swap; the plain
	// indexes wait under their *_idgen_old names (nothing to build).
	for _, ix := range p.Indexes {
		if err := m.buildTwin(ctx, ix, oldSuffix, "_old"); err != nil {
			return 0, fmt.Errorf("index %s: %w", ix.Name, err)
		}
	}
	took, err := m.lockedTx(ctx, func(tx pgx.Tx) ([]string, error) {
		d, err := p.depsTx(ctx, tx)
		if err != nil {
			return nil, err
		}
		return p.switchSQL(false, d), nil
	}, phaseReverted)
	if err != nil {
		return 0, err
	}
	return took, m.validate(ctx)
}

// Finish ends table's migration. After a completed run (phase done) it
// runs Verify first and refuses, wrapping ErrVerify, when it finds a
// problem; it refuses, wrapping ErrInput, unless yes, since revert is no
// longer possible after it. It then drops, in one transaction, the old key
// columns (with their indexes, and the sequence of the old key's default
// when nothing else uses it), the mapping table, the triggers that keep
// the old keys and the state row (the state table when no other migration
// is recorded): what remains is the new keys, with the key function (and
// its sequence) as the key column's default. After Revert it refuses,
// wrapping ErrInput and naming Discard, which drops what a reverted
// migration left, and Run with StartOver. The report is Verify's.
func Finish(ctx context.Context, conn *pgx.Conn, table string, yes bool) (*Report, error) {
	r, err := finish(ctx, conn, table, yes)
	return r, withStep(err, "finish table %q", clip(table))
}

func finish(ctx context.Context, conn *pgx.Conn, table string, yes bool) (*Report, error) {
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return nil, err
	}
	var r *Report
	switch p.Phase {
	case phaseDone:
		if !yes {
			return nil, confirm("Finish", fmt.Sprintf("finish drops %s's old keys (%s, the *_old foreign key columns) and %s: revert is no longer possible after it",
				p.qtable(), p.oldCol(), p.mapTable()))
		}
		if r, err = Verify(ctx, conn, p.qtable()); err != nil {
			return nil, err
		}
		if !r.OK() {
			return r, fmt.Errorf("%w; finish changed nothing", r.Err())
		}
	case phaseReverted:
		return nil, inputf("the migration of %s was reverted: finish drops the old keys of a completed migration; "+
			"discard drops what the reverted one left (the new keys, mapping table, triggers and state), run --yes starts over", p.qtable())
	default:
		return nil, inputf("the migration of %s is in phase %s; finish works after run completes (phase done; abort undoes a migration in any phase)",
			p.qtable(), p.Phase)
	}
	unlock, err := p.lock(ctx, conn)
	if err != nil {
		return r, err
	}
	defer unlock()
	_, err = (&migration{conn: conn, p: p}).lockedTx(ctx, stmts(p.finishSQL()), "")
	return r, err
}

// Discard drops what a reverted migration of table left, in one
// transaction: the new key columns (with their indexes), the mapping
// table, the triggers, the key function and its sequence, and the state
// row (the state table when no other migration is recorded). The table is
// then as before the migration, on its old keys, and Run migrates it anew.
// It refuses, wrapping ErrInput, in any other phase (abort undoes a
// migration in any phase) and when no migration is recorded.
func Discard(ctx context.Context, conn *pgx.Conn, table string) error {
	return withStep(discard(ctx, conn, table), "discard the reverted migration of table %q", clip(table))
}

func discard(ctx context.Context, conn *pgx.Conn, table string) error {
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return err
	}
	if p.Phase != phaseReverted {
		return inputf("the migration of %s is in phase %s; discard drops what a reverted migration left (abort --yes undoes one in any phase)",
			p.qtable(), p.Phase)
	}
	unlock, err := p.lock(ctx, conn)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = (&migration{conn: conn, p: p}).lockedTx(ctx, stmts(p.finishSQL()), "")
	return err
}

// finishSQL returns the statements that end a migration in phase done
// (drop the old columns) or reverted (drop the new ones), after the
// lock statements.
func (p *Plan) finishSQL() []string {
	var s []string
	if p.Phase == phaseDone {
		s = append(s, p.dropKeepOldSQL()...)
		for _, c := range p.childColumns() {
			s = append(s, fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", c.qtable(), ident(c.oldCol())))
		}
		s = append(s, fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", p.qtable(), ident(p.oldCol())))
		if p.Sequence != "" && !p.SequenceOwned {
			// Not owned by the column: dropped unless something else uses it.
			s = append(s, fmt.Sprintf(`DO $d$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_depend WHERE refclassid = 'pg_class'::regclass
				AND refobjid = to_regclass(%[1]s) AND deptype = 'n') THEN DROP SEQUENCE %[2]s; END IF; END $d$`,
				quoteLiteral(p.Sequence), p.Sequence))
		}
	} else {
		s = append(s, p.dropAssignSQL()...)
		s = append(s, p.dropKeepOldSQL()...)
		for _, c := range p.childColumns() {
			s = append(s, fmt.Sprintf("ALTER TABLE %s DROP COLUMN IF EXISTS %s", c.qtable(), ident(c.newCol())))
		}
		s = append(s, fmt.Sprintf("ALTER TABLE %s DROP COLUMN IF EXISTS %s", p.qtable(), ident(p.newCol())),
			fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", p.keyFunc()),
			"DROP SEQUENCE IF EXISTS "+p.seqName())
	}
	return append(s, "DROP TABLE IF EXISTS "+p.mapTable(),
		fmt.Sprintf("DELETE FROM %s WHERE tbl = %s", p.stateTable(), quoteLiteral(p.Table)),
		fmt.Sprintf("DO $d$ BEGIN IF NOT EXISTS (SELECT 1 FROM %[1]s) THEN DROP TABLE %[1]s; END IF; END $d$", p.stateTable()))
}
