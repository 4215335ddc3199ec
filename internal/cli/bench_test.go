package cli_test

import (
	"strings"
	"testing"
)

func TestBench(t *testing.T) {
	out, errOut, code := run("bench", "-s", "uuidv7,ulid", "-s", "snowflake?layout=time:41,worker:10,sequence:12", "--duration", "30ms", "--goroutines", "2")
	if code != 0 {
		t.Fatalf("bench = exit %d, stderr %q; want 0", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "strategy") || !strings.Contains(lines[0], "IDs/s") {
		t.Fatalf("bench output = %q; want a header and 3 rows", out)
	}
	for i, want := range []string{"uuidv7 ", "ulid ", "snowflake?layout=time:41,worker:10,sequence:12 "} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Fatalf("bench row %d = %q; want it to start with %q", i, lines[i+1], want)
		}
	}
}

func TestBenchBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{name: "typo", args: []string{"bench", "-s", "uuidv7,ulidd", "--duration", "10ms"}, msg: `unknown strategy "ulidd"; valid: `},
		{name: "bad key", args: []string{"bench", "-s", "sonyflake?bits_seq=1", "--duration", "10ms"}, msg: `unknown key "bits_seq"; valid keys: `},
		{name: "duration", args: []string{"bench", "--duration", "0s"}, msg: "--duration 0s must be positive"},
		{name: "goroutines", args: []string{"bench", "--goroutines", "0"}, msg: "--goroutines 0 must be at least 1"},
		{name: "empty spec", args: []string{"bench", "-s", "", "--duration", "10ms"}, msg: `-s "": no strategy spec; want comma-separated specs such as uuidv7,ulid`},
		{name: "blank list", args: []string{"bench", "-s", " , ", "--duration", "10ms"}, msg: `-s " , ": no strategy spec`},
		{name: "empty among others", args: []string{"bench", "-s", "uuidv7", "-s", "", "--duration", "10ms"}, msg: `-s "": no strategy spec`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("%v = exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.msg)
			}
		})
	}
}
