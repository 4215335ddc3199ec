package report_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
)

// scenarioReport is a one-round run of bigserial, snowflake, uuidv7 and
// uuidv4 in memory and out of memory, with their facts: out of memory,
// uuidv4 inserts at 0.30× and reads 600 pages per 1,000 inserts.
func scenarioReport() *compare.Report {
	facts := map[string]*compare.Facts{
		"bigserial": {KeyBytes: 8, Ordered: true, Sequence: true, Coordination: compare.CoordDatabase, JSSafe: true, ServerDefault: "bigserial (a sequence)"},
		"snowflake": {KeyBytes: 8, Ordered: true, Coordination: compare.CoordWorker, RevealsTime: true, RevealsWorker: true},
		"uuidv7":    {KeyBytes: 16, Ordered: true, Coordination: compare.CoordNone, RandomBits: 74, RevealsTime: true, ServerDefault: "uuidv7() (PostgreSQL 18+)"},
		"uuidv4":    {KeyBytes: 16, Coordination: compare.CoordNone, RandomBits: 122, ServerDefault: "gen_random_uuid() (PostgreSQL 13+)"},
	}
	type row struct {
		name        string
		inMem, oom  float64 // rows/s
		index       int64
		deviceReads int64
	}
	rows := []row{
		{"bigserial", 100000, 50000, 1 << 20, 10},
		{"snowflake", 98000, 48000, 1 << 20, 12},
		{"uuidv7", 95000, 45000, 3 << 19, 15},
		{"uuidv4", 80000, 15000, 2 << 20, 600},
	}
	rep := &compare.Report{Engine: "postgres", Server: "PostgreSQL 18.4", ServerVersion: "18.4", Rows: 1000, Writers: 1, Batch: 100, Runs: 1, Seed: 7,
		StatsMethod: compare.StatsMethod,
		Scenarios: []compare.Scenario{{Engine: "postgres", Name: compare.ScenarioInMemory, Buffer: "128MB"},
			{Engine: "postgres", Name: compare.ScenarioOutOfMemory, Buffer: "2176kB", DirectIO: true}}}
	for _, sc := range []string{compare.ScenarioInMemory, compare.ScenarioOutOfMemory} {
		for _, r := range rows {
			rps := r.inMem
			if sc == compare.ScenarioOutOfMemory {
				rps = r.oom
			}
			rep.Trials = append(rep.Trials, []compare.Result{{Engine: "postgres", Scenario: sc, Strategy: r.name, Scheme: r.name, Round: 1,
				Rows: 1000, RowsPerSec: rps, Seconds: 1000 / rps, IndexBytes: r.index, TableBytes: 4 << 20, DeviceReads: p64(r.deviceReads),
				KeyBytes: facts[r.name].KeyBytes, Facts: facts[r.name]}})
		}
	}
	rep.Summarize()
	return rep
}

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		name    string
		require []string
		want    []string // the choices, best first
		says    []string // in the recommendation
	}{
		{"everything", nil, []string{"bigserial", "snowflake", "uuidv7", "uuidv4"},
			[]string{"Pick bigserial: 1.00× bigserial's insert rate out of memory", "uuidv4, the slowest, inserts at 0.30× with 600 device reads per 1,000"}},
		{"sortable 64-bit", []string{"sortable", "64bit"}, []string{"bigserial", "snowflake"},
			[]string{"Pick bigserial (of 2 meeting sortable, 64bit)"}},
		{"no coordination", []string{"no-coordination"}, []string{"uuidv7", "uuidv4"},
			[]string{"Pick uuidv7 (of 2 meeting no-coordination): 0.90× bigserial's insert rate out of memory, 0.95× in memory, 1.50× its index, 15 device reads per 1,000 inserts out of memory",
				"keep snowflake as the key and show public?inner=snowflake"}},
		{"opaque", []string{"opaque"}, []string{"uuidv4"},
			[]string{"Pick uuidv4 (of 1 meeting opaque): 0.30×", "opaque need not cost index order"}},
		{"js-safe and no coordination", []string{"js-safe", "no-coordination"}, nil, []string{"No scheme measured meets js-safe, no-coordination."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := report.Decide(scenarioReport(), tt.require)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range d.Choices {
				got = append(got, c.Strategy)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Decide(%q) choices = %q; want %q", tt.require, got, tt.want)
			}
			for _, s := range tt.says {
				if !strings.Contains(d.Recommendation, s) {
					t.Errorf("Decide(%q) recommendation = %q; want it to say %q", tt.require, d.Recommendation, s)
				}
			}
		})
	}
	if _, err := report.Decide(scenarioReport(), []string{"cheap"}); !errors.Is(err, report.ErrRequirement) {
		t.Errorf("Decide(cheap) = %v; want ErrRequirement", err)
	}
}

// TestDecisionFirst: the decision table is the first section of the text
// and of report.html, with both scenarios' insert ratios side by side.
func TestDecisionFirst(t *testing.T) {
	rep := scenarioReport()
	var b bytes.Buffer
	if err := report.WriteTable(&b, rep, "sortable", "64bit"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "decision table: ") || !strings.Contains(lines[1], "insert ×bs in mem") || !strings.Contains(lines[1], "insert ×bs out of mem") {
		t.Fatalf("WriteTable starts with %q; want the decision table with both scenarios", lines[:2])
	}
	if !strings.Contains(out, "out-of-memory uuidv4") || !strings.Contains(out, "in-memory uuidv4") {
		t.Errorf("WriteTable does not name the rows by scenario:\n%s", out)
	}
	for _, l := range lines[2:4] {
		if f := strings.Fields(l); f[0] != "bigserial" && f[0] != "snowflake" {
			t.Errorf("decision row %q; want only bigserial and snowflake with --require sortable,64bit", l)
		}
	}
	b.Reset()
	if err := report.WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	d, h := strings.Index(page, `<h2 id="decision">`), strings.Index(page, "<h2>")
	if d < 0 || (h >= 0 && h < d) || !strings.Contains(page, "recommendation: Pick bigserial") {
		t.Errorf("report.html: decision at %d, first other section at %d; want the decision table and its recommendation first", d, h)
	}
}

// TestDecideNoise: the fastest scheme out of memory is not picked when
// its interval reaches a scheme with a smaller index: they are tied
// within the noise.
func TestDecideNoise(t *testing.T) {
	rep := scenarioReport()
	for i := range rep.Results {
		if x := &rep.Results[i]; x.Strategy == "uuidv7" && x.Scenario == compare.ScenarioOutOfMemory {
			x.RatioToBaseline = map[string]compare.Estimate{"rows_per_sec": {Median: 1.3, CI: compare.Interval{0.95, 1.6}}}
		}
	}
	d, err := report.Decide(rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Pick bigserial: 1.00× bigserial's insert rate out of memory, 1.00× in memory, 1.00× its index, 10 device reads per 1,000 inserts out of memory; the fastest, uuidv7 at 1.30×, is within the noise of it, and bigserial has the smaller index"
	if d.Choices[0].Strategy != "uuidv7" || !strings.HasPrefix(d.Recommendation, want) {
		t.Errorf("Decide = first %s, %q; want uuidv7 first and %q", d.Choices[0].Strategy, d.Recommendation, want)
	}
}

// TestDecideOutOfMemoryOnly: with the out-of-memory scenario alone, the
// index ratios come from it (they do not depend on the buffer).
func TestDecideOutOfMemoryOnly(t *testing.T) {
	rep := scenarioReport()
	rep.Trials = rep.Trials[len(rep.Trials)/2:]
	rep.Scenarios = rep.Scenarios[1:]
	rep.Summarize()
	d, err := report.Decide(rep, []string{"opaque"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Choices) != 1 || d.Choices[0].Index != 2 || d.Choices[0].InMemory != nil || d.Choices[0].OutOfMemory.Median != 0.3 {
		t.Errorf("Decide(opaque) out of memory only = %+v; want uuidv4 with a 2.00× index, 0.30× out of memory, nothing in memory", d.Choices)
	}
}
