package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareOutChecked(t *testing.T) {
	// The server is down: an --out error must come first, before any
	// connection is tried.
	const down = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2"
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	long := "/proc/" + strings.Repeat("d", 200)
	tests := []struct {
		name, out string
		want      []string
	}{
		{"under a file", filepath.Join(file, "out"), []string{`output directory "` + filepath.Join(file, "out") + `"`, file + " is a file, not a directory"}},
		{"a file", file, []string{`output directory "` + file + `"`, file + " is a file, not a directory"}},
		{"read-only file system", "/proc/idgen-compare-out", []string{`output directory "/proc/idgen-compare-out"`, "cannot create files in /proc"}},
		{"long path cut", long, []string{`output directory "` + long[:64] + `…"`, "cannot create files in /proc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCompare("--dsn", down, "--strategies", "uuidv4", "--out", tt.out)
			ok := code == 2 && stdout == "" && !strings.Contains(stderr, "cannot connect") && len(stderr) < 300
			for _, w := range tt.want {
				ok = ok && strings.Contains(stderr, w)
			}
			if !ok {
				t.Errorf("compare --out %q = exit %d, stdout %q, stderr %q; want exit 2 and an error with %q, before connecting",
					tt.out, code, stdout, stderr, tt.want)
			}
		})
	}
}
