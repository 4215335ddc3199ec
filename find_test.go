package idgen_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// TestFindScheme: the finders package snowflake and package strategies
// register find a layout and a strategy's scheme by name; a name no linked
// package knows wraps ErrInvalid, quoted and cut.
func TestFindScheme(t *testing.T) {
	l, _ := snowflake.Preset("twitter")
	want, _ := snowflake.SchemeOf(l)
	if s, err := idgen.FindScheme("snowflake", l.String()); err != nil || s != want {
		t.Errorf("FindScheme(snowflake, %s) = %v, %v; want %v", l, s, err, want)
	}
	uuid7, _ := strategies.SchemeOf(strategies.MustParse("uuidv7"))
	if s, err := idgen.FindScheme("uuidv7", ""); err != nil || s != uuid7 {
		t.Errorf("FindScheme(uuidv7) = %v, %v; want %v", s, err, uuid7)
	}
	if _, err := idgen.FindScheme("snowflake", "time:99"); err == nil || errors.Is(err, idgen.ErrInvalid) && strings.Contains(err.Error(), "unknown here") {
		t.Errorf("FindScheme(bad layout) = %v; want the layout's parse error", err)
	}
	long := strings.Repeat("x", 5000)
	_, err := idgen.FindScheme(long, "")
	if !errors.Is(err, idgen.ErrInvalid) || len(err.Error()) > 300 || !strings.Contains(err.Error(), "unknown here") {
		t.Errorf("FindScheme(5000 x) = %q (%d bytes); want ErrInvalid under 300 bytes", err, len(err.Error()))
	}
}
