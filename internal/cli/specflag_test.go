package cli_test

import (
	"strings"
	"testing"
)

// TestSpecFlagOneSpelling: every command that takes strategy specs takes
// them as -s/--spec; bench's -s/--strategies and compare's --strategies
// still work, hidden from --help.
func TestSpecFlagOneSpelling(t *testing.T) {
	for _, flag := range []string{"-s", "--spec", "--strategies"} {
		out, errs, code := run("bench", flag, "uuidv7", "--duration", "1ms", "--goroutines", "1")
		if code != 0 || !strings.Contains(out, "uuidv7") || strings.Contains(out, "ulid") {
			t.Errorf("bench %s uuidv7 = exit %d, %q, %q; want a table of uuidv7 alone", flag, code, out, errs)
		}
		// compare checks the specs before it connects: an unknown one is refused whatever the spelling.
		const down = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2"
		_, errs, code = run("compare", flag, "uuidv4,nope", "--dsn", down)
		if code != 2 || !strings.Contains(errs, `unknown strategy "nope"`) {
			t.Errorf("compare %s uuidv4,nope = exit %d, %q; want exit 2, unknown strategy \"nope\"", flag, code, errs)
		}
	}
	for _, cmd := range []string{"bench", "compare", "gen", "serve", "inspect"} {
		out, _, code := run(cmd, "--help")
		if code != 0 || !strings.Contains(out, "  -s, --spec ") || strings.Contains(out, "--strategies") {
			t.Errorf("%s --help = exit %d; want -s, --spec listed and no --strategies:\n%s", cmd, code, out)
		}
	}
	// A typo's did-you-mean names the one spelling.
	_, errs, _ := run("compare", "--spek", "uuidv4")
	if want := "idgen: unknown flag --spek; did you mean --spec?"; !strings.HasPrefix(errs, want) {
		t.Errorf("compare --spek = %q; want %q...", errs, want)
	}
}
