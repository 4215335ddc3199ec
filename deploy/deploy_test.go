// Package deploy_test checks the files in deploy/ with the tools that read
// them: promtool for the Prometheus rules, systemd-analyze for the unit,
// and a served process for the unit's SIGTERM promise. A missing tool
// skips its test, and fails it under CI=true.
package deploy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/testenv"
)

// tool returns the path of name, skipping the test when it is missing
// (failing it under CI=true).
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if testenv.CI() {
			t.Fatalf("%s is not installed (CI=true); apt-get install %s", name, pkg)
		}
		t.Skipf("%s is not installed; apt-get install %s", name, pkg)
	}
	return path
}

// TestPrometheusRules: promtool check rules and promtool test rules pass,
// and every alert of the rules has a test case.
func TestPrometheusRules(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	for _, args := range [][]string{{"check", "rules", "idgen-rules.yml"}, {"test", "rules", "idgen-rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	rules, err := os.ReadFile("prometheus/idgen-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("prometheus/idgen-rules.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(rules)) {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "- alert: ")
		if !ok {
			continue
		}
		n++
		if !strings.Contains(string(tests), "alertname: "+name+"\n") {
			t.Errorf("alert %s has no test case in idgen-rules.test.yml", name)
		}
	}
	if n < 7 {
		t.Errorf("%d alerts in idgen-rules.yml; want at least the 7 of issue 33", n)
	}
}

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildIdgen builds cmd/idgen once for the package's tests.
func buildIdgen(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "idgen-deploy-"); binErr != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "idgen"), "../cmd/idgen").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "idgen")
}

// TestSystemdUnit: systemd-analyze verify finds nothing to say about the
// unit (it exits 0 on unknown keys, so any output fails), with ExecStart
// pointing at a built idgen (verify checks that the binary exists).
func TestSystemdUnit(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd")
	unit, err := os.ReadFile("systemd/idgen.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nRestart=on-failure\n", "\nStateDirectory=idgen\n", "\nKillSignal=SIGTERM\n", "/var/lib/idgen/high-water",
		"--tls-cert %d/tls.crt --tls-key %d/tls.key", // serve refuses :8443 without TLS
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("idgen.service lacks %q", strings.TrimSpace(want))
		}
	}
	bin := buildIdgen(t)
	path := filepath.Join(t.TempDir(), "idgen.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/idgen", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify idgen.service: %v\n%s", err, out)
	}
}

// TestSIGTERMReleasesLease runs idgen serve as the unit does (a PostgreSQL
// worker source with a state file, a high-water file in the state
// directory): while it serves, its lease row is held; SIGTERM makes it exit
// 0 and release the row (expires_at -infinity, no owner) at once, rather
// than leave it to expire after the TTL.
func TestSIGTERMReleasesLease(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("PostgreSQL %s: %v", dsn, err)
	}
	defer conn.Close(ctx)
	table := fmt.Sprintf("deploy_workers_%d", time.Now().UnixNano()%1e9)
	t.Cleanup(func() { conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })

	bin := buildIdgen(t)
	state := t.TempDir()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	source := dsn + sep + "table=" + table + "&workers=4&state_file=" + filepath.Join(state, "worker-id")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "-s",
		"snowflake?preset=twitter&datacenter=1&high_water="+filepath.Join(state, "high-water"), "--worker-source", source)
	cmd.Env = append(os.Environ(), "IDGEN_WORKER_SOURCE=", "IDGEN_WORKER_ID=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	served := false
	for !served && sc.Scan() {
		var rec map[string]any
		served = json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "serving"
	}
	if !served {
		t.Fatalf("idgen serve did not log serving: %v", sc.Err())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	held := func() (owner string, live bool) {
		t.Helper()
		if err := conn.QueryRow(ctx, "SELECT owner, expires_at > now() FROM "+table+" WHERE worker_id = 0").Scan(&owner, &live); err != nil {
			t.Fatal(err)
		}
		return owner, live
	}
	if owner, live := held(); owner == "" || !live {
		t.Fatalf("worker 0 while serving: owner %q, live %v; want held", owner, live)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("idgen serve after SIGTERM: %v; want exit 0", err)
	}
	if owner, live := held(); owner != "" || live {
		t.Errorf("worker 0 after SIGTERM: owner %q, live %v; want released", owner, live)
	}
	if b, err := os.ReadFile(filepath.Join(state, "worker-id")); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Errorf("state file: %q, %v; want worker 0", b, err)
	}
	t.Logf("released %v after SIGTERM", time.Since(start).Round(time.Millisecond))
}
