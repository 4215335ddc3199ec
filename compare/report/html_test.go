package report_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/internal/testenv"
)

func TestVerdict(t *testing.T) {
	rep := sampleReport()
	for _, tt := range []struct {
		strategy, want string
	}{
		{"uuidv4", "uuidv4: 2.0× the index, 0.50× the insert rate [0.50–0.50], leaf pages 70 % full, half the leaf chain out of order"},
		{"bigserial", ""},
		{"client_series", ""},
	} {
		if got := report.Verdict(rep, rep.Find(tt.strategy)); got != tt.want {
			t.Errorf("Verdict(%s) = %q; want %q", tt.strategy, got, tt.want)
		}
	}
}

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteHTML(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, s := range []string{
		"<svg", "PostgreSQL 15.20", "seed 7", `<span class="pass">pass</span>`,
		"uuidv4: 2.0× the index, 0.50× the insert rate [0.50–0.50]",
		"47500", // the error bar's label
	} {
		if !strings.Contains(page, s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
	// Self-contained: nothing fetched from elsewhere.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(page); m != "" {
		t.Errorf("report.html fetches from the network: %q", m)
	}
}

// TestReportInChromium loads report.html in headless Chromium: the page's
// script must run (it writes how many rows it found), every strategy must
// show, and the console must stay free of errors.
func TestReportInChromium(t *testing.T) {
	rep := sampleReport()
	dom, stderr := inChromium(t, rep)
	if !strings.Contains(dom, "rendered 4 of 4 rows") {
		t.Errorf("chromium's DOM lacks the script's marker %q:\n%s", "rendered 4 of 4 rows", dom)
	}
	for _, x := range rep.Results {
		if !strings.Contains(dom, ">"+x.Strategy+"<") {
			t.Errorf("chromium's DOM does not show %s", x.Strategy)
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "CONSOLE") {
			t.Errorf("chromium console: %s", line)
		}
	}
	if !strings.Contains(dom, `data-clipped="0"`) {
		t.Errorf("chromium: chart labels run past their chart's edges (want data-clipped=\"0\"):\n%s", dom)
	}
}

// TestLongLabelsInChromium: a rows/s label as long as a default run's
// ("388123 [328000–478000]", its interval reaching the axis's end) and a
// long spec fit inside their charts, as Chromium lays them out.
func TestLongLabelsInChromium(t *testing.T) {
	rep := sampleReport()
	rep.Rows = 300000
	x := rep.Find("uuidv4")
	x.Strategy = "snowflake?layout=time:41,worker:10,sequence:12&epoch=2020-01-01"
	x.RowsPerSec, x.RowsPerSecCI = 388123, &compare.Interval{328000, 478000}
	dom, _ := inChromium(t, rep)
	if !strings.Contains(dom, `data-clipped="0"`) {
		m := regexp.MustCompile(`data-clipped="\d+"`).FindString(dom)
		t.Errorf("chromium: %s chart labels run past their chart's edges; want 0", m)
	}
}

// inChromium writes rep's report.html and returns its DOM after headless
// Chromium ran its script, and Chromium's stderr.
func inChromium(t *testing.T, rep *compare.Report) (dom, stderr string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if testenv.CI() {
			t.Fatal("chromium not installed (apt-get install -y chromium)")
		}
		t.Skip("chromium not installed")
	}
	dir := t.TempDir()
	if err := report.WriteFiles(rep, dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+filepath.Join(dir, "report.html"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium = %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String()
}

// TestWriteHTMLMariaDB: a MariaDB report names its engine, version and
// buffer pool, and its verdicts count InnoDB's page splits.
func TestWriteHTMLMariaDB(t *testing.T) {
	rep := sampleReport()
	rep.Engine, rep.Server, rep.ServerVersion, rep.SharedBuffers, rep.BufferPool =
		compare.EngineMariaDB, "MariaDB 10.11.19-MariaDB-0+deb12u1 (Debian 12)", "10.11.19-MariaDB-0+deb12u1", "", "6MB"
	for _, ts := range rep.Trials {
		for k := range ts {
			ts[k].Engine = compare.EngineMariaDB
		}
	}
	rep.Summarize()
	var b bytes.Buffer
	if err := report.WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, s := range []string{"MariaDB 10.11.19, 1000 rows", "innodb_buffer_pool_size 6MB", "uuidv4: 2.0× the index", "249 vs 99 page splits"} {
		if !strings.Contains(page, s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
	if strings.Contains(page, "PostgreSQL") || strings.Contains(page, "shared_buffers") {
		t.Errorf("report.html of a MariaDB run names PostgreSQL or shared_buffers")
	}
}
