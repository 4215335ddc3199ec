package snowflake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
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
