package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/snowflake"
)

// TestGenBehindHighWater restarts gen behind a high-water file 5 s ahead
// of now: hold issues at once, unique and increasing IDs timed at or after
// the mark; fail exits non-zero and names the drift.
func TestGenBehindHighWater(t *testing.T) {
	for _, policy := range []string{"hold", "fail"} {
		t.Run(policy, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hw")
			mark := time.Now().Add(5 * time.Second).UTC()
			if err := os.WriteFile(path, []byte(mark.Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := "snowflake?preset=twitter&worker=1&high_water=" + path + "&rollback=" + policy
			out, errs, code := run("gen", "-n", "2000", "-s", spec)
			if policy == "fail" {
				if code == 0 || !strings.Contains(errs, "idgen: clock moved backwards by 4.9") {
					t.Fatalf("gen %q = exit %d, %q; want non-zero and the drift (about 5s)", spec, code, errs)
				}
				return
			}
			if code != 0 {
				t.Fatalf("gen %q exit %d: %s", spec, code, errs)
			}
			l, _ := snowflake.Preset("twitter")
			lines := strings.Fields(out)
			if len(lines) != 2000 {
				t.Fatalf("gen -n 2000 printed %d lines; want 2000", len(lines))
			}
			var prev uint64
			for _, line := range lines {
				v, err := strconv.ParseUint(line, 10, 64)
				if err != nil {
					t.Fatalf("gen printed %q: %v", line, err)
				}
				p, _ := l.Decompose(v)
				if v <= prev || p.Time.Before(mark) {
					t.Fatalf("ID %d at %v (after %d); want increasing, at or after the mark %v", v, p.Time, prev, mark)
				}
				prev = v
			}
		})
	}
}
