package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/migrate"
)

// TestWithFlag: a library error with an *idgen.FieldError prints the flag
// of its field in the field's place, keeps what wraps it, and matches
// what the original matches; other errors, and fields of no flag, pass
// unchanged.
func TestWithFlag(t *testing.T) {
	class := errors.New("migrate: bad input")
	fe := &idgen.FieldError{Field: "Options.Batch", Value: "-1", Allowed: "want at least 1"}
	err := fmt.Errorf("%w: %w", class, fe)
	got := withFlag(err, migrateFlags)
	if got.Error() != "migrate: bad input: --batch -1: want at least 1" || !errors.Is(got, class) || !errors.Is(got, idgen.ErrInvalid) {
		t.Errorf("withFlag(%q) = %q; want --batch in the field's place, matching what the original does", err, got)
	}
	for _, err := range []error{
		errors.New("migrate: no field"),
		fmt.Errorf("%w: %w", class, &idgen.FieldError{Field: "Options.Log", Value: "x"}), // no flag
		fmt.Errorf("%w (more after it)", fe),                                             // not at the end
	} {
		if got := withFlag(err, migrateFlags); got != err {
			t.Errorf("withFlag(%q) = %q; want it unchanged", err, got)
		}
	}
	if withFlag(nil, migrateFlags) != nil {
		t.Error("withFlag(nil) != nil")
	}
}

// TestMigrateErr: a confirmation migrate asks for prints as --yes, and
// Abort in a refusal's workaround as the abort command.
func TestMigrateErr(t *testing.T) {
	class := errors.New("migrate: bad input")
	confirm := fmt.Errorf("migrate: finish table %q: %w: %w", "t", class, &migrate.ConfirmError{Call: "Finish", What: "finish drops the old keys"})
	if got := migrateErr(confirm).Error(); got != `migrate: finish table "t": migrate: bad input: finish drops the old keys; give --yes to finish` {
		t.Errorf("migrateErr(%q) = %q", confirm, got)
	}
	shapes := &migrate.ShapeError{Table: "t", Refusals: []migrate.Refusal{{Shape: "migration in progress", Object: "t",
		Why: "the shapes above appeared after run started", Workaround: "remove them", Abort: true}}}
	if got := migrateErr(shapes).Error(); !strings.HasSuffix(got, "workaround: remove them, or undo the migration with idgen migrate abort --yes") ||
		!errors.Is(migrateErr(shapes), migrate.ErrShape) {
		t.Errorf("migrateErr(%q) = %q; want the abort command", shapes, got)
	}
}

// TestThrottleLine: run's waiting line names the flag whose limit it
// waits on, and the resume command of the table given.
func TestThrottleLine(t *testing.T) {
	o := &migrateRunOptions{migrateTarget: &migrateTarget{table: "app.orders"}, opt: migrate.Options{MaxActive: 3}}
	for _, tc := range []struct {
		th   migrate.Throttle
		want string
	}{
		{migrate.Throttle{Hold: true, Lag: 1500 * time.Millisecond, Field: "Options.MaxLag", Reason: "replication lag 1.5s over Options.MaxLag 1s"},
			"idgen: waiting: replication lag 1.5s over --max-lag 1s"},
		{migrate.Throttle{Hold: true, Active: 4, Field: "Options.MaxActive"}, "idgen: waiting: 4 active backends over --max-active 3"},
		{migrate.Throttle{Hold: true, Paused: true, Reason: "paused (Set with Resume on orders goes on)"},
			"idgen: waiting: paused (idgen migrate resume --table app.orders goes on)"},
		{migrate.Throttle{Waited: 1200 * time.Millisecond, Lag: 3 * time.Millisecond, Active: 1}, "idgen: going on after 1.2s (lag 3ms, 1 active backends)"},
	} {
		if got := o.throttleLine(tc.th); got != tc.want {
			t.Errorf("throttleLine(%+v) = %q; want %q", tc.th, got, tc.want)
		}
	}
}

// TestFieldFlagsExist: every flag the field tables name is a flag of its
// command (a flag renamed without its table fails here).
func TestFieldFlagsExist(t *testing.T) {
	root := newRoot(strings.NewReader(""), new(strings.Builder), new(strings.Builder))
	find := func(path ...string) *cobra.Command {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	check := func(flags map[string]string, cmds ...*cobra.Command) {
		for field, flag := range flags {
			found := false
			for _, c := range cmds {
				found = found || c.Flags().Lookup(strings.TrimPrefix(flag, "--")) != nil
			}
			if !found {
				t.Errorf("%s: flag %s is no flag of %s", field, flag, cmds[0].CommandPath())
			}
		}
	}
	check(compareFlags, find("compare"))
	check(migrateFlags, find("migrate", "run"), find("migrate", "resume"))
}
