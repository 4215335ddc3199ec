package cli_test

import (
	"strings"
	"testing"
)

// TestExplainDefaults checks that a layout without ;tick and ;epoch is
// explained with the 1ms tick and 2026-01-01 epoch it applies, in the body
// as in the header.
func TestExplainDefaults(t *testing.T) {
	out := explainHas(t, "time:41,worker:10,sequence:12",
		"layout  time:41,worker:10,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z\n",
		"\ntick           1ms\n",
		"\nepoch          2026-01-01T00:00:00Z\n",
		"\nlifetime ends  2095-09-07T15:47:35.552Z  (69.7 years after the epoch; ",
		"\nper node       4,096,000 IDs/s           (4,096 per 1ms tick)\n")
	full, _, _ := run("explain", "time:41,worker:10,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z")
	if out != full {
		t.Errorf("explain without defaults =\n%s\nwith them written out =\n%s\nwant the same", out, full)
	}
}

// TestExplainSpec checks that explain takes the spec form the other
// commands take and explains that strategy's layout.
func TestExplainSpec(t *testing.T) {
	tests := []struct{ name, arg, layout string }{
		{"snowflake preset", "snowflake?preset=twitter", "time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2010-11-04T01:42:54.657Z"},
		{"snowflake default", "snowflake", "time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z"},
		{"snowflake layout", "snowflake?layout=time:41,worker:10,sequence:12;tick=10ms&worker=3", "time:41,worker:10,sequence:12;tick=10ms;epoch=2026-01-01T00:00:00Z"},
		{"sonyflake", "sonyflake", "time:39,sequence:8,machine:16;tick=10ms;epoch=2025-01-01T00:00:00Z"},
		{"sonyflake bits", "sonyflake?bits_sequence=12&bits_machine=8", "time:43,sequence:12,machine:8;tick=10ms;epoch=2025-01-01T00:00:00Z"},
		{"preset", "twitter", "time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2010-11-04T01:42:54.657Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run("explain", tt.arg)
			if code != 0 {
				t.Fatalf("explain(%q) exit %d: %s", tt.arg, code, errs)
			}
			if first, _, _ := strings.Cut(out, "\n"); first != "layout  "+tt.layout {
				t.Errorf("explain(%q) = %q; want layout %q", tt.arg, first, tt.layout)
			}
		})
	}
	twitter, _, _ := run("explain", "twitter")
	if spec, _, _ := run("explain", "snowflake?preset=twitter"); spec != twitter {
		t.Errorf("explain snowflake?preset=twitter =\n%s\nwant explain twitter's\n%s", spec, twitter)
	}
}

func TestExplainBadInput(t *testing.T) {
	tests := []struct{ name, arg, want string }{
		{"no layout", "uuidv7", `idgen: explain "uuidv7": uuidv7 IDs have no Snowflake layout; explain takes a preset (`},
		{"bad spec key", "snowflake?preset=twiter", `unknown preset "twiter"`},
		{"unknown name", "twiter", `unknown preset "twiter"; allowed baidu, default,`},
		{"bad bits", "time:4x,sequence:12", `bits "4x" must be a number 1-64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run("explain", tt.arg)
			if code != 2 || out != "" || !strings.Contains(errs, tt.want) {
				t.Errorf("explain(%q) = exit %d, %q, %q; want exit 2 and an error containing %q", tt.arg, code, out, errs, tt.want)
			}
		})
	}
}

// TestExplainWarnings checks that degenerate layouts get a warning line and
// sound ones none.
func TestExplainWarnings(t *testing.T) {
	tests := []struct{ name, arg, want string }{
		{"tick 1ns", "time:41,sequence:12;tick=1ns", "warning        tick 1ns is under 1ms:"},
		{"time 1 bit", "time:1,sequence:12", "warning        the lifetime is 2ms:"},
		{"lifetime under a year", "time:20,sequence:12;tick=1s", "warning        the lifetime is 12.1 days:"},
		{"no sequence", "time:41,worker:10", "warning        no sequence field:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := run("explain", tt.arg)
			if code != 0 {
				t.Fatalf("explain(%q) exit %d: %s", tt.arg, code, errs)
			}
			if !strings.Contains(out, "\n"+tt.want) {
				t.Errorf("explain(%q) lacks %q:\n%s", tt.arg, tt.want, out)
			}
		})
	}
	for _, name := range []string{"twitter", "discord", "instagram", "sonyflake", "region", "simpleflake", "default"} {
		if out, _, _ := run("explain", name); strings.Contains(out, "warning") {
			t.Errorf("explain(%q) warns:\n%s", name, out)
		}
	}
}

// TestExplainJS53 checks that explain states the js53 preset's limits:
// its lifetime, workers and rate, and that its IDs never pass 2^53-1.
func TestExplainJS53(t *testing.T) {
	explainHas(t, "snowflake?preset=js53",
		"layout  time:41,worker:5,sequence:7;tick=1ms;epoch=2026-01-01T00:00:00Z\n",
		"\nlifetime ends  2095-09-07T15:47:35.552Z  (69.7 years after the epoch; ",
		"\nper node       128,000 IDs/s             (128 per 1ms tick)\n",
		"\nnodes          32                        (worker 5 bits)\n",
		"\npasses 2^53-1  never                     (a 53-bit layout)\n")
}

// explainHas runs explain arg, checks it succeeds and that its output has
// every one of wants, and returns the output.
func explainHas(t *testing.T, arg string, wants ...string) string {
	t.Helper()
	out, errs, code := run("explain", arg)
	if code != 0 {
		t.Fatalf("explain %s exit %d: %s", arg, code, errs)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("explain %s lacks %q:\n%s", arg, want, out)
		}
	}
	return out
}
