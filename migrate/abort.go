package migrate

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Abort undoes table's migration from any phase, including a run that was
// killed or a swap that failed, and leaves the schema as it was before
// the migration: before the swap it drops, in one transaction, everything
// the migration added (the new columns with their indexes and CHECKs, the
// triggers and functions, the key function and its sequence, the mapping
// table, the state row, and the state table when no other migration is
// recorded); after the swap it reverts first (Revert), then drops them
// likewise (Discard). It refuses, wrapping ErrInput, unless
// yes, and when the table has no migration recorded. A run that still
// holds the migration lock makes it fail (not ErrInput): stop the run,
// then abort again.
func Abort(ctx context.Context, conn *pgx.Conn, table string, yes bool) error {
	return withStep(abort(ctx, conn, table, yes), "abort the migration of table %q", clip(table))
}

func abort(ctx context.Context, conn *pgx.Conn, table string, yes bool) error {
	p, err := recorded(ctx, conn, table)
	if err != nil {
		return err
	}
	if !yes {
		return inputf("abort drops everything the migration of %s to %q added (phase %s) and leaves the table as it was; call Abort with yes to abort",
			p.qtable(), clip(p.To), p.Phase)
	}
	unlock, err := p.lock(ctx, conn)
	if err != nil {
		return err
	}
	defer unlock()
	m := &migration{conn: conn, p: p}
	if p.swapped() {
		if _, err := m.revert(ctx); err != nil {
			return fmt.Errorf("migrate: revert before the abort: %w", err)
		}
	}
	if p.Phase != phaseReverted {
		p.Phase = phaseReverted // what is left to drop: the new columns and the rest
	}
	_, err = m.lockedTx(ctx, stmts(p.finishSQL()), "")
	return err
}
