package cli_test

import (
	"strings"
	"testing"
)

// TestLongInputCut: a 5,000-character input to any key of a spec is cut in
// the one line of error to about 64 characters, so that the line stays
// under 300 bytes; the exit code is that of bad input (2) or of a store
// that cannot be reached (1).
func TestLongInputCut(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tt := range []struct {
		spec string
		code int
	}{
		{long, 2},                       // unknown strategy
		{"snowflake?" + long + "=1", 2}, // unknown key
		{"snowflake?worker=" + long, 2},
		{"snowflake?layout=" + long, 2},
		{"snowflake?layout=time:41," + long + ":10", 2},
		{"snowflake?preset=" + long, 2},
		{"snowflake?epoch=" + long, 2},
		{"uuidv7?encoding=" + long, 2},
		{"segment?tag=x&dsn=" + long, 2},
		{"snowflake?worker_source=" + long, 2},
		{"public?inner=" + long, 2},
		{"snowflake?worker_source=postgres://" + long, 1},
	} {
		_, errs, code := run("gen", "-s", tt.spec)
		if code != tt.code || len(errs) >= 300 || strings.Count(errs, "\n") != 1 || strings.Contains(errs, strings.Repeat("x", 100)) {
			t.Errorf("gen -s %.40q... = exit %d, %d bytes %q; want exit %d, one line under 300 bytes", tt.spec, code, len(errs), errs, tt.code)
		}
	}
}

// TestIdgenOnce: a message says "idgen: " once, at its start, even when
// an error of the root package is inside it.
func TestIdgenOnce(t *testing.T) {
	spec := "snowflake?layout=time:30,worker:10,sequence:12&epoch=2020-01-01" // ended 2020-01-13
	_, errs, code := run("serve", "-s", spec, "--addr", "127.0.0.1:0")
	want := `idgen: serve: -s "` + spec + `": layout lifetime exhausted: the 30-bit time field ended at 2020-01-13T10:15:41Z` + "\n"
	if code != 2 || errs != want {
		t.Errorf("serve -s %q = exit %d, %q; want exit 2, %q", spec, code, errs, want)
	}
}

// TestOneArgument: inspect, explain and convert without their argument say
// what it is, not cobra's "accepts 1 arg(s), received 0".
func TestOneArgument(t *testing.T) {
	for cmd, want := range map[string]string{
		"inspect": "idgen: inspect: want one argument, the ID to decode; got 0 (idgen inspect --help shows examples)\n",
		"explain": "idgen: explain: want one argument, a layout, preset or spec; got 0 (idgen explain --help shows examples)\n",
		"convert": "idgen: convert: want one argument, the ID to convert; got 0 (idgen convert --help shows examples)\n",
	} {
		if _, errs, code := run(cmd); code != 2 || errs != want {
			t.Errorf("idgen %s = exit %d, %q; want exit 2, %q", cmd, code, errs, want)
		}
	}
}

// TestUnknownFlag: an unknown flag gets the nearest flag of its command
// and the pointer to --help, as an unknown command does.
func TestUnknownFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "--spek", "x"}, "idgen: unknown flag --spek; did you mean --spec? (idgen gen --help lists the flags)\n"},
		{[]string{"gen", "--cuont", "3"}, "idgen: unknown flag --cuont; did you mean --count? (idgen gen --help lists the flags)\n"},
		{[]string{"gen", "--bogus"}, "idgen: unknown flag --bogus (idgen gen --help lists the flags)\n"},
		{[]string{"gen", "-Z"}, "idgen: unknown shorthand flag: 'Z' in -Z (idgen gen --help lists the flags)\n"},
	} {
		if _, errs, code := run(tt.args...); code != 2 || errs != tt.want {
			t.Errorf("idgen %v = exit %d, %q; want exit 2, %q", tt.args, code, errs, tt.want)
		}
	}
}
