package cli_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// TestInspectPlausibility checks that a dashless UUID decodes as a UUID and
// that a time more than 100 years ahead gets a warning.
func TestInspectPlausibility(t *testing.T) {
	tests := []struct {
		name, id, scheme, time, warning string
	}{
		{name: "dashless uuidv7", id: "0190f1d27a3b7c4d8e5f6a7b8c9d0e1f", scheme: "uuidv7", time: "2024-07-27T01:33:41.307Z"},
		{name: "flake128", id: "0000019aa1b2c3d4a1b2c3d4e5f60007", scheme: "flake128", time: "2025-11-"},
		{name: "flake128 far ahead", id: "ffff0000000000000000000000000000", scheme: "flake128", time: "",
			warning: "is more than 100 years ahead: the ID is probably not a flake128 ID; give -s SPEC for its scheme"},
		{name: "twitter", id: "1541815603606036480 -s snowflake?preset=twitter", scheme: "snowflake", time: "2022-06-28T16:07:40.105Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"inspect", "--json"}, strings.Fields(tt.id)...)
			out, errs, code := run(args...)
			if code != 0 {
				t.Fatalf("idgen %q exit %d: %s", args, code, errs)
			}
			var r struct{ Scheme, Time, Warning string }
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if dashless := len(tt.id) == 32 && strings.HasPrefix(r.Scheme, "uuid"); dashless != strings.Contains(out, `"note": "read as a UUID written without dashes`) {
				t.Errorf("idgen %q printed\n%s\nwant a note on the dashless UUID: %v", args, out, dashless)
			}
			if r.Scheme != tt.scheme || !strings.HasPrefix(r.Time, tt.time) || !strings.Contains(r.Warning, tt.warning) || (tt.warning == "") != (r.Warning == "") {
				t.Errorf("idgen %q = %+v; want scheme %s, time %s..., warning %q", args, r, tt.scheme, tt.time, tt.warning)
			}
			text, _, _ := run(append([]string{"inspect"}, strings.Fields(tt.id)...)...)
			if hasWarning := strings.Contains(text, "\nwarning  "); hasWarning != (tt.warning != "") {
				t.Errorf("idgen %q printed\n%s\nwant a warning line: %v", args, text, tt.warning != "")
			}
		})
	}
}

// TestInspectFuture checks that an ID whose time is after now gets a
// warning: an ID cannot come from the future, so it is of another layout
// or scheme (the README's twitter ID read with the default layout is in
// 2042), or the clock that issued it ran ahead.
func TestInspectFuture(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	def, _ := snowflake.Preset("default")
	at := func(t time.Time) idgen.ID {
		v, err := def.Compose(snowflake.Parts{Tick: t.Sub(snowflake.DefaultEpoch()).Milliseconds()})
		if err != nil {
			panic(err)
		}
		id, _ := strategies.ParseWith(strconv.FormatUint(v, 10), "snowflake")
		return id
	}
	twitter, _ := strategies.ParseWith("2123934260623585280", "")
	tests := []struct {
		name    string
		id      idgen.ID
		warning string // "" for none
	}{
		{"README's twitter ID, default layout (2042)", twitter, "time 2042-01-17T22:36:28.523Z is after now (2026-11-26T12:00:00Z): an ID cannot come from the future"},
		{"a minute ahead", at(now.Add(time.Minute)), "time 2026-11-26T12:01:00Z is after now (2026-11-26T12:00:00Z)"},
		{"1 ms ahead", at(now.Add(time.Millisecond)), "is after now"},
		{"now", at(now), ""},
		{"an hour ago", at(now.Add(-time.Hour)), ""},
		{"200 years ahead", strategies.Flake128Scheme().MustParse("ffff0000000000000000000000000000"), "is more than 100 years ahead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cli.InspectWarning(tt.id, now)
			if !strings.Contains(got, tt.warning) || (got == "") != (tt.warning == "") {
				t.Fatalf("inspect %s at %v: warning %q; want %q", tt.id, now, got, tt.warning)
			}
		})
	}
	// The command, with the real clock: an ID an hour ahead of it.
	ahead := at(time.Now().Add(time.Hour)).String()
	out, errs, code := run("inspect", ahead)
	if code != 0 || !strings.Contains(out, "\nwarning ") || !strings.Contains(out, "an ID cannot come from the future") {
		t.Fatalf("idgen inspect %s = exit %d, %q, %q; want a warning line", ahead, code, out, errs)
	}
}

// TestInspectTrimmed checks that inspect reads an ID as pasted: spaces
// and line ends around it, a + before a decimal, and a TypeID told by its
// prefix_.
func TestInspectTrimmed(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // in stdout
	}{
		{"CRLF", []string{"1541815603606036480\r", "-s", "snowflake?preset=twitter"}, []string{"id      1541815603606036480\n", "time    2022-06-28T16:07:40.105Z"}},
		{"space, 20 chars", []string{" 1541815603606036480", "-s", "snowflake?preset=twitter"}, []string{"id      1541815603606036480\n"}},
		{"plus sign, 20 chars, no spec", []string{"+1541815603606036480"}, []string{"id      1541815603606036480\n", "scheme  snowflake"}},
		{"dashless UUID and CRLF", []string{"0190f1d27a3b7c4d8e5f6a7b8c9d0e1f\r\n"}, []string{"scheme  uuidv7", "read as a UUID written without dashes"}},
		{"typeid without -s", []string{"user_01h455vb4pex5vsknk084sn02q"}, []string{"scheme  typeid", "prefix  user", "time    2023-06-30T03:34:18.518Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run(append([]string{"inspect"}, tt.args...)...)
			for _, want := range tt.want {
				if code != 0 || !strings.Contains(out, want) {
					t.Fatalf("idgen inspect %q = exit %d, %q, %q; want %q", tt.args, code, out, errs, want)
				}
			}
		})
	}
	_, errs, code := run("inspect", "User_01h455vb4pex5vsknk084sn02q")
	if code != 2 || !strings.Contains(errs, `TypeID prefix "User": want at most 63 of a-z and _`) {
		t.Fatalf("idgen inspect User_01h… = exit %d, %q; want exit 2 naming the prefix and the rule", code, errs)
	}
}

// TestMessagesInOurWords checks that bad input is told in idgen's words:
// the input named (cut to 64 bytes) with what is allowed, never Go's
// strconv or encoding/hex text.
func TestMessagesInOurWords(t *testing.T) {
	long := strings.Repeat("7", 10_000)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"inspect abc", []string{"inspect", "abc"}, `cannot tell the scheme of "abc" (3 chars): want a 36-char UUID`},
		{"inspect bad hex", []string{"inspect", strings.Repeat("z", 32)}, `'z' is not a hex digit; want 32 hex digits (0-9, a-f)`},
		{"inspect bad uuid", []string{"inspect", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"}, `'z' is not a hex digit; want 8-4-4-4-12 hex digits`},
		{"inspect huge", []string{"inspect", long}, `"` + strings.Repeat("7", 64) + `…" exceeds 2^64-1`},
		{"count not a number", []string{"gen", "-n", "abc"}, `-n, --count "abc": want an integer of at least 1`},
		{"count too big", []string{"gen", "-n", "99999999999999999999999"}, `-n, --count "99999999999999999999999": want an integer of at least 1`},
		{"layout bits", []string{"explain", "time:4x,sequence:12"}, `field "time": bits "4x" must be a number 1-64`},
		{"spec worker", []string{"gen", "-s", "snowflake?preset=twitter&worker=abc"}, `worker="abc": want an integer in [0, 31]`},
		{"spec worker huge", []string{"gen", "-s", "snowflake?worker=" + long}, `worker="` + strings.Repeat("7", 64) + `…": want an integer in [0, 31]`},
		{"spec bits", []string{"gen", "-s", "sonyflake?bits_sequence=abc"}, `bits_sequence="abc": want an integer in [1, 30]`},
		{"explain spec", []string{"explain", "snowflake?layout=time:abc"}, `bits "abc" must be a number 1-64`},
		{"convert", []string{"convert", strings.Repeat("z", 32), "--to", "uuid"}, `'z' is not a hex digit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run(tt.args...)
			if code != 2 || out != "" || !strings.Contains(errs, tt.want) || strings.Contains(errs, "strconv") ||
				strings.Contains(errs, "encoding/hex") || len(errs) > 400 {
				t.Errorf("idgen %.120q = exit %d, stdout %q, stderr %q; want exit 2, a message under 400 bytes containing %q and no Go internals",
					tt.args, code, out, errs, tt.want)
			}
		})
	}
}
