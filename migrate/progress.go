package migrate

import "time"

// A Progress follows Run's backfill, as compare.Progress follows a
// compare run: Run reports through it and draws nothing (the idgen
// command draws a bar on a terminal, lines otherwise). Run calls it from
// its own goroutine, one call at a time.
type Progress interface {
	// Phase starts a phase: name is what it backfills ("backfill orders",
	// "backfill items.order_id"), unit what it counts ("rows" of the
	// migrated table, heap "blocks" of a referencing table), total the
	// units of the whole phase and done those a run before this one did
	// (a resumed migration; 0 otherwise).
	Phase(name, unit string, total, done int64)
	// At reports done units of the phase's total done so far (a running
	// count, not an increment), after each committed batch.
	At(done int64)
	// PhaseDone ends the phase with every unit done, elapsed after Phase.
	// A phase that stops on an error or a canceled ctx gets no PhaseDone.
	PhaseDone(elapsed time.Duration)
}
