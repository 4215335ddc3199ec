package snowflake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
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

// A ClockSeqStore is a HighWaterStore that persists a clockseq value with
// the mark, for layouts with a clockseq field: the mark then bounds the
// ticks issued under that clockseq value. Policy Bump needs one.
type ClockSeqStore interface {
	HighWaterStore
	// LoadClockSeq returns the stored mark and clockseq; the zero Time and
	// 0 if none was stored.
	LoadClockSeq(ctx context.Context) (mark time.Time, clockseq uint64, err error)
	// StoreClockSeq persists both; durable when it returns nil.
	StoreClockSeq(ctx context.Context, mark time.Time, clockseq uint64) error
}

// DefaultHighWaterAhead is how far ahead of the ticks issued a Generator
// persists its mark when Config.HighWaterAhead is zero.
const DefaultHighWaterAhead = time.Second

// FileHighWater is a HighWaterStore in a file holding one RFC 3339 time,
// followed by " clockseq=N" when a clockseq value is stored (a
// ClockSeqStore). Store writes a temporary file beside it, syncs it and renames it over the
// old one, so a crash leaves the old mark or the new, never a torn one.
type FileHighWater struct {
	Path string
}

// Load reads the mark; a missing file is no mark.
func (f FileHighWater) Load(ctx context.Context) (time.Time, error) {
	t, _, err := f.LoadClockSeq(ctx)
	return t, err
}

// LoadClockSeq reads the mark and the clockseq value (0 if the file holds
// none); a missing file is no mark.
func (f FileHighWater) LoadClockSeq(context.Context) (time.Time, uint64, error) {
	data, err := os.ReadFile(f.Path)
	if os.IsNotExist(err) {
		return time.Time{}, 0, nil
	}
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("snowflake: high-water mark: %w", err)
	}
	text := strings.TrimSpace(string(data))
	bad := fmt.Errorf("snowflake: high-water mark %s holds %q, not an RFC 3339 time (with an optional clockseq=N)", f.Path, echo.Cut(text))
	ts, rest, _ := strings.Cut(text, " ")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, 0, bad
	}
	var cs uint64
	if rest = strings.TrimSpace(rest); rest != "" {
		v, ok := strings.CutPrefix(rest, "clockseq=")
		if cs, err = strconv.ParseUint(v, 10, 16); !ok || err != nil {
			return time.Time{}, 0, bad
		}
	}
	return t, cs, nil
}

// Store writes the mark durably, with no clockseq value.
func (f FileHighWater) Store(ctx context.Context, mark time.Time) error {
	return f.write(mark.UTC().Format(time.RFC3339Nano))
}

// StoreClockSeq writes the mark and the clockseq value durably.
func (f FileHighWater) StoreClockSeq(_ context.Context, mark time.Time, clockseq uint64) error {
	return f.write(mark.UTC().Format(time.RFC3339Nano) + " clockseq=" + strconv.FormatUint(clockseq, 10))
}

func (f FileHighWater) write(line string) error {
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), filepath.Base(f.Path)+".tmp*")
	if err != nil {
		return fmt.Errorf("snowflake: high-water mark: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(line + "\n")
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
