package snowflake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
)

// A HighWaterStore persists a time ahead of every ID a Generator has issued.
// A Generator restarted with its clock behind the stored mark applies its
// rollback policy instead of issuing IDs again.
type HighWaterStore interface {
	// Load returns the stored mark, or the zero Time if none was stored.
	Load(ctx context.Context) (time.Time, error)
	// Store persists mark; it must be durable when Store returns nil.
	Store(ctx context.Context, mark time.Time) error
}

// DefaultHighWaterAhead is how far ahead of the ticks issued a Generator
// persists its mark when Config.HighWaterAhead is zero.
const DefaultHighWaterAhead = time.Second

// FileHighWater is a HighWaterStore in a file holding one RFC 3339 time.
// Store writes a temporary file beside it, syncs it and renames it over the
// old one, so a crash leaves the old mark or the new, never a torn one.
type FileHighWater struct {
	Path string
}

// Load reads the mark; a missing file is no mark.
func (f FileHighWater) Load(context.Context) (time.Time, error) {
	data, err := os.ReadFile(f.Path)
	if os.IsNotExist(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("snowflake: high-water mark: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil {
		return time.Time{}, fmt.Errorf("snowflake: high-water mark %s holds %q, not an RFC 3339 time", f.Path, strings.TrimSpace(string(data)))
	}
	return t, nil
}

// Store writes the mark durably.
func (f FileHighWater) Store(_ context.Context, mark time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), filepath.Base(f.Path)+".tmp*")
	if err != nil {
		return fmt.Errorf("snowflake: high-water mark: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(mark.UTC().Format(time.RFC3339Nano) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.Path)
	}
	if err != nil {
		return fmt.Errorf("snowflake: high-water mark: %w", err)
	}
	if d, err := os.Open(filepath.Dir(f.Path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// HighWaterAheadError reports that the high-water mark of a leased worker ID,
// written by the ID's previous holder (another node, or this one before a
// restart), is ahead of the clock: no ID is issued under the worker ID before
// the clock passes Mark, and the rollback policy would not wait that long.
// The clock did not step back. A worker ID lease (package workerid) hands
// out such an ID only when every free ID's mark is ahead.
//
// It unwraps to the *idgen.ClockRollbackError of the policy, so it matches
// idgen.ErrClockRollback, and callers that back off from a clock rollback
// (HTTP 503 with Retry-After) back off from it alike.
type HighWaterAheadError struct {
	WorkerID int64         // the leased worker ID
	Mark     time.Time     // the previous holder's mark
	Ahead    time.Duration // Mark minus the clock's reading; > 0
	Rollback *idgen.ClockRollbackError
}

func (e *HighWaterAheadError) Error() string {
	ahead := e.Ahead
	if ahead >= time.Millisecond {
		ahead = ahead.Round(time.Millisecond)
	}
	s := fmt.Sprintf("snowflake: worker ID %d: the previous holder's high-water mark is %v ahead of the clock; no ID is issued under worker ID %d before %s",
		e.WorkerID, ahead, e.WorkerID, e.Mark.UTC().Format(time.RFC3339Nano))
	if e.Rollback.Waited > 0 {
		s += fmt.Sprintf(" (waited %v)", e.Rollback.Waited)
	}
	return s
}

// Unwrap returns the clock rollback error of the policy.
func (e *HighWaterAheadError) Unwrap() error { return e.Rollback }
