package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/testenv"
)

func runCompare(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Main(append([]string{"compare"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCompareBadInput(t *testing.T) {
	const down = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero rows", []string{"--rows", "0", "--dsn", down}, "--rows 0"},
		{"negative rows", []string{"--rows", "-5", "--dsn", down}, "--rows -5"},
		{"zero writers", []string{"--writers", "0", "--dsn", down}, "--writers 0"},
		{"zero runs", []string{"--runs", "0", "--dsn", down}, "--runs 0: want a positive number"},
		{"too many runs", []string{"--runs", "101", "--dsn", down}, "compare: invalid input: --runs 101: want 1 to 100 rounds\n"},
		{"huge seed", []string{"--seed", "9007199254740992", "--dsn", down}, "compare: invalid input: --seed 9007199254740992: want 0 (random) to 9007199254740991\n"},
		{"unknown strategy", []string{"--strategies", "uuidv4,nope", "--dsn", down}, `unknown strategy "nope"`},
		{"shared buffers with dsn", []string{"--dsn", down, "--shared-buffers", "1GB"}, "--shared-buffers"},
		{"bad shared buffers", []string{"--shared-buffers", "much"}, `compare: invalid input: --shared-buffers "much": want a size such as 128MB or 1GB (units kB, MB, GB, TB)` + "\n"},
		{"unknown engine", []string{"--engine", "oracle", "--dsn", down}, `compare: invalid input: --engine "oracle": want postgres, mariadb or all` + "\n"},
		{"buffer pool with dsn", []string{"--dsn", "mysql://root@127.0.0.1:1/x", "--buffer-pool", "1GB"}, "--buffer-pool"},
		{"bad buffer pool", []string{"--engine", "mariadb", "--buffer-pool", "much"}, `compare: invalid input: --buffer-pool "much": want a size such as 128MB or 1GB (units kB, MB, GB, TB)` + "\n"},
		{"zero read ops", []string{"--read-ops", "0", "--dsn", down}, "--read-ops 0: want 1 to 1000000 reads of each kind"},
		{"negative span", []string{"--span", "-1h", "--dsn", down}, "--span -1h0m0s: want 0 (real time) to 87600h0m0s"},
		{"bad span", []string{"--span", "3 hours", "--dsn", down}, `"3 hours"`},
		{"strategy twice", []string{"-s", "snowflake,snowflake", "--dsn", down}, `compare: invalid input: --spec "snowflake": given twice in "snowflake,snowflake"`},
		{"strategy twice, spaced", []string{"--spec", "uuidv4, uuidv4", "--dsn", down}, `--spec "uuidv4": given twice`},
		{"unknown requirement", []string{"--require", "sortable,cheap", "--dsn", down}, `--require: compare/report: unknown requirement "cheap": want 64bit, sortable, opaque, no-coordination, js-safe`},
		{"unknown scenario", []string{"--scenarios", "in-memory,huge"}, `compare: invalid input: --scenarios "huge": want in-memory or out-of-memory` + "\n"},
		{"out of memory with dsn", []string{"--scenarios", "out-of-memory", "--dsn", down}, `compare: invalid input: --scenarios "out-of-memory": restarts a throwaway server with a small buffer and direct I/O; with a DSN the server's own settings apply: leave out the DSN, or the scenario` + "\n"},
		{"memory ratio below 1", []string{"--memory-ratio", "0.5"}, "compare: invalid input: --memory-ratio 0.5: want 1 to 1000: below 1 the data fits the buffer\n"},
		{"pg-bin without binaries", []string{"--pg-bin", "/nonexistent"}, `compare: invalid input: --pg-bin "/nonexistent": `},
		{"pg-bin with dsn", []string{"--pg-bin", "/usr/bin", "--dsn", down}, "--pg-bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCompare(tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("compare %q = exit %d, stdout %q, stderr %q; want exit 2, no output, an error mentioning %q",
					tt.args, code, stdout, stderr, tt.want)
			}
		})
	}
}

func TestCompareRun(t *testing.T) {
	t.Parallel() // a compare run of its own schema
	dsn := testenv.PostgresDSN(t)
	dir := filepath.Join(t.TempDir(), "out")
	// 20 reads of each kind: they run and print, their figures are
	// package compare's to check; the default 1,000 (each kind cut at
	// 0.5 s) took 3 s more.
	code, stdout, stderr := runCompare("--dsn", dsn, "--rows", "3000", "--writers", "2", "--batch", "500", "--runs", "2", "--read-ops", "20",
		"--strategies", "snowflake?preset=twitter,uuidv4", "--out", dir)
	if code != 0 {
		t.Fatalf("compare = exit %d, stderr %q", code, stderr)
	}
	for _, s := range []string{"bigserial ", "client_series ", "generate_series ", "snowflake?preset=twitter ", "uuidv4 ", "harness check: ", "2 trials per row"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("compare output lacks %q:\n%s", s, stdout)
		}
	}
	// stderr is not a terminal: one line per round with each row's
	// rows/s, no line per phase.
	for _, s := range []string{"compare: 2 rounds, seed ", "compare: postgres round 1 of 2 done, rows/s: ", "compare: postgres round 2 of 2 done, rows/s: ", " uuidv4 "} {
		if !strings.Contains(stderr, s) {
			t.Errorf("compare stderr lacks %q:\n%s", s, stderr)
		}
	}
	if n := strings.Count(stderr, "\n"); n > 8 || strings.Contains(stderr, " measure:") {
		t.Errorf("compare stderr has %d lines (want at most 8: the seed, a line per round, notes) or phase lines:\n%s", n, stderr)
	}
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta struct {
			Config struct {
				DSN  string `json:"dsn"`
				Runs int    `json:"runs"`
			} `json:"config"`
			Seed uint64 `json:"seed"`
		} `json:"meta"`
		Results []struct {
			Strategy string     `json:"strategy"`
			Rows     int        `json:"rows"`
			Trials   int        `json:"trials"`
			CI       [2]float64 `json:"rows_per_sec_ci"`
		} `json:"results"`
	}
	if err := json.Unmarshal(js, &doc); err != nil || len(doc.Results) != 5 {
		t.Fatalf("results.json = %s, %v; want 5 results", js, err)
	}
	res := doc.Results
	if res[3].Strategy != "snowflake?preset=twitter" || res[4].Rows != 3000 || res[4].Trials != 2 || res[4].CI[0] <= 0 || res[4].CI[0] > res[4].CI[1] {
		t.Errorf("results.json = %+v; want bigserial, client_series, generate_series, snowflake?preset=twitter, uuidv4 with 3000 rows, 2 trials and an interval", res)
	}
	if doc.Meta.Config.Runs != 2 || doc.Meta.Config.DSN != dsn || doc.Meta.Seed == 0 || !strings.Contains(stderr, fmt.Sprintf("seed %d", doc.Meta.Seed)) {
		t.Errorf("results.json meta = %+v; want runs 2, the DSN, the seed printed on stderr", doc.Meta)
	}
}
