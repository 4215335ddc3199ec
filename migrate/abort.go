package migrate

import (
	"context"
	"fmt"
	"strings"

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
		return confirm("Abort", fmt.Sprintf("abort drops everything the migration of %s to %q added (phase %s) and leaves the table as it was",
			p.qtable(), clip(p.To), p.Phase))
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

// A ConfirmError reports a call that drops what cannot be brought back,
// made without its yes argument: Finish or Abort. It is returned wrapped
// by ErrInput. Its text is What, then "; call Finish with yes to finish";
// a program that asks for the confirmation its own way (the idgen
// command's --yes) prints What and its own words.
type ConfirmError struct {
	Call string // the function to call again with yes: "Finish" or "Abort"
	What string // what the call drops, in words
}

func (e *ConfirmError) Error() string {
	return fmt.Sprintf("%s; call %s with yes to %s", e.What, e.Call, strings.ToLower(e.Call))
}

// confirm returns a *ConfirmError of call, wrapped by ErrInput.
func confirm(call, what string) error {
	return fmt.Errorf("%w: %w", ErrInput, &ConfirmError{Call: call, What: what})
}
