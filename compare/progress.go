package compare

import "time"

// A Progress follows a run: Run reports through it and draws nothing (the
// idgen command draws its bars). Run calls Phase, Rows and PhaseDone from
// the writers' goroutines, one call at a time. Config.Progress nil means
// none.
type Progress interface {
	// Status reports what the run is doing between phases.
	Status(msg string)
	// Phase starts a phase of n rows for strategy ("preload" or "measure"),
	// or of up to n reads ("read point", "read recent", "read range"; a read
	// phase also ends at Config.ReadTime).
	Phase(strategy, phase string, n int)
	// Rows reports n more rows of the current phase inserted, or n more
	// reads done.
	Rows(n int)
	// PhaseDone ends the current phase.
	PhaseDone(elapsed time.Duration)
	// Note reports a metric the run cannot measure, and why.
	Note(msg string)
}

type nopProgress struct{}

func (nopProgress) Status(string)             {}
func (nopProgress) Phase(string, string, int) {}
func (nopProgress) Rows(int)                  {}
func (nopProgress) PhaseDone(time.Duration)   {}
func (nopProgress) Note(string)               {}
