package cli_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/snowflake"
)

func run(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestGen(t *testing.T) {
	out, errs, code := run("gen", "-s", "snowflake?preset=twitter&datacenter=1&worker=3", "-n", "5000")
	if code != 0 {
		t.Fatalf("gen exit %d: %s", code, errs)
	}
	l, _ := snowflake.Preset("twitter")
	var prev uint64
	for _, v := range genIDs(t, out, 5000) {
		p, _ := l.Decompose(v)
		dc, _ := p.Node("datacenter")
		w, _ := p.Node("worker")
		if dc != 1 || w != 3 || v <= prev {
			t.Fatalf("ID %d: datacenter %d worker %d (after %d); want 1, 3, increasing", v, dc, w, prev)
		}
		prev = v
	}
}

func TestGenJSON(t *testing.T) {
	out, errs, code := run("gen", "-n", "3", "--format", "json")
	if code != 0 {
		t.Fatalf("gen --format json exit %d: %s", code, errs)
	}
	for line := range strings.Lines(out) {
		var v struct{ ID, Scheme, Time string }
		if err := json.Unmarshal([]byte(line), &v); err != nil || v.Scheme != "snowflake" || v.Time == "" {
			t.Fatalf("line %q = %+v, %v; want id, scheme snowflake and time", line, v, err)
		}
		if _, err := strconv.ParseUint(v.ID, 10, 64); err != nil {
			t.Fatalf("id %q is not a decimal string", v.ID)
		}
	}
}

func TestInspectJSON(t *testing.T) {
	l, _ := snowflake.Preset("twitter")
	v, _ := l.Compose(snowflake.Parts{Tick: 1000, Sequence: 7, Nodes: []idgen.Field{{Name: "datacenter", Value: 4}, {Name: "worker", Value: 18}}})
	out, errs, code := run("inspect", strconv.FormatUint(v, 10), "-s", "snowflake?preset=twitter", "--json")
	if code != 0 {
		t.Fatalf("inspect exit %d: %s", code, errs)
	}
	var got struct {
		ID, Scheme, Time string
		Fields           map[string]uint64
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"time": 1000, "datacenter": 4, "worker": 18, "sequence": 7}
	if got.Scheme != "snowflake" || got.Time != "2010-11-04T01:42:55.657Z" || got.ID != strconv.FormatUint(v, 10) {
		t.Errorf("inspect --json = %+v; want scheme snowflake, time 2010-11-04T01:42:55.657Z", got)
	}
	for k, w := range want {
		if got.Fields[k] != w {
			t.Errorf("fields[%s] = %d; want %d", k, got.Fields[k], w)
		}
	}
}

func TestInspectText(t *testing.T) {
	out, errs, code := run("inspect", "4194304", "-s", "snowflake?layout=time:41,sequence:22;epoch=2026-01-01")
	if code != 0 {
		t.Fatalf("inspect exit %d: %s", code, errs)
	}
	for _, want := range []string{"scheme  snowflake", "time    2026-01-01T00:00:00.001Z", "sequence  0"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
}

func TestExplain(t *testing.T) {
	out, errs, code := run("explain", "twitter")
	if code != 0 {
		t.Fatalf("explain exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"|0|time                                     |datac|worke|sequence    |",
		"lifetime ends  2080-07-10T17:30:30.209Z",
		"4,096,000 IDs/s",
		"nodes          1,024",
		"passes 2^53-1  2010-11-28T22:14:18.305Z",
		"passes int64   never",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain twitter lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = run("explain", "discord")
	if !strings.Contains(out, "passes int64   2084-09-06T15:47:35.552Z") {
		t.Errorf("explain discord lacks the int64 crossing:\n%s", out)
	}
	out, _, _ = run("explain", "baidu")
	if !strings.Contains(out, "ENDED") {
		t.Errorf("explain baidu does not say its lifetime ended:\n%s", out)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"worker out of range", []string{"gen", "-s", "snowflake?preset=twitter&worker=32"}, "worker 32 outside [0, 31]"},
		{"negative datacenter", []string{"gen", "-s", "snowflake?datacenter=-1"}, "datacenter -1 outside [0, 31]"},
		{"layout over 63 bits", []string{"gen", "-s", "snowflake?layout=time:42,worker:10,sequence:12"}, "64 bits exceed 63"},
		{"layout without time", []string{"explain", "worker:10,sequence:12"}, "exactly one time field, found 0"},
		{"unknown preset", []string{"gen", "-s", "snowflake?preset=twiter"}, `unknown preset "twiter"; allowed baidu, default`},
		{"unknown explain preset", []string{"explain", "twiter"}, `unknown preset "twiter"`},
		{"unknown spec key", []string{"gen", "-s", "snowflake?wrker=3"}, `unknown key "wrker"; valid keys: preset, layout`},
		{"unknown strategy", []string{"gen", "-s", "snowflak"}, `unknown strategy "snowflak"; valid:`},
		{"bad rollback", []string{"gen", "-s", "snowflake?rollback=never"}, `rollback="never": want one of fail, wait, wait-then-fail, hold, bump`},
		{"malformed ID", []string{"inspect", "12x4"}, `"12x4"`},
		{"ID past layout", []string{"inspect", "18446744073709551615", "-s", "snowflake"}, "exceeds the layout's 63 bits"},
		{"count zero", []string{"gen", "-n", "0"}, `-n, --count "0": want an integer of at least 1`},
		{"bad format", []string{"gen", "--format", "xml"}, `--format "xml": want text or json`},
		{"unknown flag", []string{"gen", "--bogus"}, "unknown flag --bogus (idgen gen --help lists the flags)"},
		{"TLS without --from", []string{"gen", "--tls-ca", "ca.pem"}, "--generator and the --tls-* flags apply to --from"},
		{"--from beside -s", []string{"gen", "--from", "127.0.0.1:1", "-s", "uuidv7"}, "--from takes the IDs from idgen servers; leave out -s and --worker-source"},
		{"--from a URL with a query", []string{"gen", "--from", "https://127.0.0.1:1/?a=1"}, `target "https://127.0.0.1:1/?a=1": want a base URL`},
		{"--from http:// with TLS", []string{"gen", "--from", "http://127.0.0.1:1", "--tls-server-name", "ids"}, "is plaintext HTTP but TLS is configured; use https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run(tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 || out != "" {
				t.Fatalf("idgen %q = exit %d, stderr %q, stdout %q; want exit 2, one line containing %q", tt.args, code, errs, out, tt.want)
			}
		})
	}
}

func FuzzInspect(f *testing.F) {
	for _, s := range []string{"1541815603606036480", "0", "18446744073709551615", "abc", "-1", "01890a5d-ac96-774b-bcce-b302099a8057", "01ARZ3NDEKTSV4RRFFQ69G5FAV", " 1", "+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.HasPrefix(s, "-") {
			return // a flag, not an ID
		}
		out, _, code := run("inspect", "--json", "--", s)
		if code != 0 && code != 2 {
			t.Fatalf("inspect %q exit %d; want 0 or 2", s, code)
		}
		if code != 0 {
			return
		}
		var r struct{ ID, Scheme string }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("inspect %q printed invalid JSON: %v", s, err)
		}
		// Round trip: the canonical ID inspects to itself.
		out2, _, code := run("inspect", "--json", "--", r.ID)
		var r2 struct{ ID, Scheme string }
		if code != 0 || json.Unmarshal([]byte(out2), &r2) != nil || r2 != r {
			t.Fatalf("inspect %q = %+v, but its canonical %q inspects to %+v (exit %d)", s, r, r.ID, r2, code)
		}
	})
}
