package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/snowflake"
)

// genIDs reads the n decimal IDs gen printed to out.
func genIDs(t *testing.T, out string, n int) []uint64 {
	t.Helper()
	lines := strings.Fields(out)
	if len(lines) != n {
		t.Fatalf("gen -n %d printed %d lines; want %d", n, len(lines), n)
	}
	ids := make([]uint64, n)
	for i, line := range lines {
		v, err := strconv.ParseUint(line, 10, 64)
		if err != nil {
			t.Fatalf("gen printed %q: %v", line, err)
		}
		ids[i] = v
	}
	return ids
}

// TestGenBehindHighWater restarts gen behind a high-water file ahead of
// now (5 s, within hold's reach; a minute for fail, which no slow start
// overtakes): hold issues at once, unique and increasing IDs timed at or
// after the mark; fail exits non-zero and names the drift.
func TestGenBehindHighWater(t *testing.T) {
	for _, policy := range []string{"hold", "fail"} {
		t.Run(policy, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hw")
			ahead := map[string]time.Duration{"hold": 5 * time.Second, "fail": time.Minute}[policy]
			mark := time.Now().Add(ahead).UTC()
			if err := os.WriteFile(path, []byte(mark.Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := "snowflake?preset=twitter&worker=1&high_water=" + path + "&rollback=" + policy
			before := time.Now()
			out, errs, code := run("gen", "-n", "2000", "-s", spec)
			after := time.Now()
			if policy == "fail" {
				// gen reads its clock between before and after, however
				// slow the machine: the drift it names is the mark less
				// that reading, give or take the 1 ms tick the mark is
				// kept in.
				lo, hi := mark.Sub(after)-time.Millisecond, mark.Sub(before)+time.Millisecond
				m := regexp.MustCompile(`idgen: clock moved backwards by ([0-9.]+[a-zµ]+)`).FindStringSubmatch(errs)
				var drift time.Duration
				if m != nil {
					drift, _ = time.ParseDuration(m[1])
				}
				if code == 0 || m == nil || drift < lo || drift > hi {
					t.Fatalf("gen %q = exit %d, %q; want non-zero and the drift, %v to %v", spec, code, errs, lo, hi)
				}
				return
			}
			if code != 0 {
				t.Fatalf("gen %q exit %d: %s", spec, code, errs)
			}
			l, _ := snowflake.Preset("twitter")
			var prev uint64
			for _, v := range genIDs(t, out, 2000) {
				p, _ := l.Decompose(v)
				if v <= prev || p.Time.Before(mark) {
					t.Fatalf("ID %d at %v (after %d); want increasing, at or after the mark %v", v, p.Time, prev, mark)
				}
				prev = v
			}
		})
	}
}

// TestGenBumpBehindHighWater: under rollback=bump, gen 5 s behind its
// high-water file bumps the clockseq field and issues at the clock's true
// time; inspect shows clockseq 1 and a time within a second of now.
func TestGenBumpBehindHighWater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hw")
	if err := os.WriteFile(path, []byte(time.Now().Add(5*time.Second).UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := "snowflake?layout=time:41,clockseq:2,worker:8,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z&worker=1&high_water=" + path + "&rollback=bump"
	out, errs, code := run("gen", "-n", "2000", "-s", spec)
	if code != 0 {
		t.Fatalf("gen %q exit %d: %s", spec, code, errs)
	}
	ids := genIDs(t, out, 2000)
	seen := map[uint64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate ID %d", id)
		}
		seen[id] = true
	}
	out, errs, code = run("inspect", strconv.FormatUint(ids[len(ids)-1], 10), "-s", spec, "--json")
	if code != 0 {
		t.Fatalf("inspect exit %d: %s", code, errs)
	}
	var r struct {
		Time   time.Time
		Fields map[string]uint64
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("inspect --json printed %q: %v", out, err)
	}
	if d := time.Since(r.Time); r.Fields["clockseq"] != 1 || r.Fields["worker"] != 1 || d < -time.Second || d > time.Second {
		t.Fatalf("inspect = %+v; want clockseq 1, worker 1, a time within a second of now", r)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(strings.TrimSpace(string(data)), " clockseq=1") {
		t.Errorf("high-water file holds %q; want a time then clockseq=1", data)
	}
}

func TestExplainClockSeq(t *testing.T) {
	out, errs, code := run("explain", "time:41,clockseq:2,worker:8,sequence:12")
	if code != 0 {
		t.Fatalf("explain exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"clockseq  2     21-20      3",
		"clockseq       3 bumps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
}
