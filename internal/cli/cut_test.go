package cli_test

import (
	"strings"
	"testing"
)

// TestOneCutRule: inputs echoed by the helpers folded into internal/echo
// (public's quote, compare's output directory, bench's -s) are cut by one
// rule: 64 bytes at a rune boundary, then "…", inside the quotes (public
// used to put "..." after them; compare cut at 60 runes).
func TestOneCutRule(t *testing.T) {
	long := strings.Repeat("z", 200)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"public encoding", []string{"inspect", long, "--spec", "snowflake?encoding=base62"}, `"` + strings.Repeat("z", 64) + `…" is not base62`},
		{"bench blank list", []string{"bench", "-s", strings.Repeat(",", 100)}, `bench: -s "` + strings.Repeat(",", 64) + `…": no strategy spec`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("%v = exit %d, %q; want exit 2 and %q", tc.args[0], code, errOut, tc.want)
			}
		})
	}
}
