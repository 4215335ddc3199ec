package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/workerid"
)

// serveWarnings runs serve with args on an address in use, so that it
// builds its generators, logs, and exits 1 without serving; it returns
// the WARN records of its log.
func serveWarnings(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	code := cli.Main(append([]string{"serve", "--addr", ln.Addr().String()}, args...), strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("serve %v on an address in use: exit %d, %s; want 1", args, code, stderr.String())
	}
	var warns []map[string]any
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			continue // the exit's error line
		}
		if rec["level"] == "WARN" {
			warns = append(warns, rec)
		}
	}
	return warns
}

// TestServeHostnameHashWarns: serve logs the hostname-hash collision
// warning gen prints, once per generator, with the generator's name, for
// -s and for a config file.
func TestServeHostnameHashWarns(t *testing.T) {
	t.Setenv("IDGEN_WORKER_SOURCE", "")
	check := func(warns []map[string]any, generator string) {
		t.Helper()
		n := 0
		for _, w := range warns {
			msg, _ := w["msg"].(string)
			if strings.HasPrefix(msg, "idgen: worker ID ") && strings.Contains(msg, "not safe for a dynamic fleet") {
				n++
				if w["generator"] != generator {
					t.Errorf("warning %v: generator %v; want %q", w, w["generator"], generator)
				}
			}
		}
		if n != 1 {
			t.Errorf("WARN records %v: %d collision warnings; want 1", warns, n)
		}
	}
	check(serveWarnings(t, "-s", "snowflake?preset=twitter", "--worker-source", "hostname-hash?accept_collisions=true"), "default")
	cfg := filepath.Join(t.TempDir(), "idgen.yaml")
	if err := os.WriteFile(cfg, []byte("generators:\n  orders: snowflake?preset=twitter&worker_source=hostname-hash%3Faccept_collisions%3Dtrue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(serveWarnings(t, "--config", cfg), "orders")
	// A worker ID from configuration warns of nothing.
	for _, w := range serveWarnings(t, "-s", "snowflake?preset=twitter&worker=3") {
		if strings.Contains(w["msg"].(string), "worker ID") {
			t.Errorf("serve with worker=3 logged %v; want no worker ID warning", w)
		}
	}
}

// TestInspectEncodingLayout: inspect of an ID of a spec with encoding=
// keeps the layout line (and decodes the fields under that layout).
func TestInspectEncodingLayout(t *testing.T) {
	out, errs, code := run("gen", "-s", "snowflake?preset=twitter&worker=5&encoding=crockford")
	if code != 0 {
		t.Fatalf("gen: exit %d, %s", code, errs)
	}
	id := strings.TrimSpace(out)
	out, errs, code = run("inspect", id, "-s", "snowflake?preset=twitter&encoding=crockford")
	if code != 0 {
		t.Fatalf("inspect: exit %d, %s", code, errs)
	}
	if want := "layout  time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2010-11-04T01:42:54.657Z\n"; !strings.Contains(out, want) {
		t.Errorf("inspect %s:\n%s\nwant the line %q", id, out, want)
	}
	if !regexp.MustCompile(`(?m)^  worker +5 +\(5 bits\)$`).MatchString(out) {
		t.Errorf("inspect %s:\n%s\nwant worker 5", id, out)
	}
}

// TestInspectHighWater: inspect with a spec whose high_water= file holds a
// mark ahead of the clock says, in words, that the clock is behind it and
// by how much; a mark that passed is said to have passed.
func TestInspectHighWater(t *testing.T) {
	hw := filepath.Join(t.TempDir(), "high-water")
	mark := time.Now().Add(time.Hour).UTC()
	if err := os.WriteFile(hw, []byte(mark.Format(time.RFC3339Nano)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := "snowflake?preset=twitter&high_water=" + hw
	out, errs, code := run("inspect", "2125852419567915008", "-s", spec)
	if code != 0 {
		t.Fatalf("inspect: exit %d, %s", code, errs)
	}
	want := regexp.MustCompile(`(?m)^high_water +` + regexp.QuoteMeta(mark.Format(time.RFC3339Nano)+" ("+hw+"): ") +
		`the clock is behind the high-water mark by (59m59\.\d+s|1h0m0s) \(after a restart, or a worker ID taken over\): ` +
		`IDs wait, fail or run ahead of the clock by rollback= until ` + regexp.QuoteMeta(mark.Format(time.RFC3339Nano)) + `$`)
	if !want.MatchString(out) {
		t.Errorf("inspect -s %q:\n%s\nwant a line matching %s", spec, out, want)
	}
	out, _, _ = run("inspect", "2125852419567915008", "-s", spec, "--json")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil || !strings.Contains(r["high_water"].(string), "the clock is behind the high-water mark by ") {
		t.Errorf("inspect --json: %v, %s; want high_water in words", err, out)
	}
	past := time.Now().Add(-time.Minute).UTC()
	if err := os.WriteFile(hw, []byte(past.Format(time.RFC3339Nano)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ = run("inspect", "2125852419567915008", "-s", spec)
	if !regexp.MustCompile(`(?m)^high_water +.*: passed 1m0(\.\d+)?s ago; the clock is not behind it$`).MatchString(out) {
		t.Errorf("inspect with a passed mark:\n%s\nwant \"passed 1m0.…s ago; the clock is not behind it\"", out)
	}
}

// TestGenPinnedWorkerIDHeld: gen with a lease URL's worker_id=2 exits 1,
// naming the worker ID, while another node's live lease holds it; with
// the ID free it issues under it.
func TestGenPinnedWorkerIDHeld(t *testing.T) {
	t.Setenv("IDGEN_WORKER_SOURCE", "")
	t.Setenv("IDGEN_WORKER_ID", "")
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("table", fmt.Sprintf("cli_pin_%d", time.Now().UnixNano()%1e9))
	q.Set("workers", "4")
	q.Set("worker_id", "2")
	u.RawQuery = q.Encode()
	source := u.String()
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), dsn); err == nil {
			c.Exec(context.Background(), "DROP TABLE IF EXISTS "+q.Get("table"))
			c.Close(context.Background())
		}
	})
	holder, err := workerid.Open(context.Background(), source, workerid.Space{Workers: 32})
	if err != nil {
		t.Fatalf("the first holder: %v", err)
	}
	out, errs, code := run("gen", "-s", "snowflake?preset=twitter", "--worker-source", source)
	if code != 1 || !strings.Contains(errs, "worker ID held by a live lease: worker ID 2 of namespace \"default\" (") || !strings.Contains(errs, "a second holder is refused") {
		t.Errorf("gen with worker_id=2 held: exit %d, %q, %s; want exit 1 naming worker ID 2", code, out, errs)
	}
	holder.Close()
	out, errs, code = run("gen", "-s", "snowflake?preset=twitter", "--worker-source", source)
	v, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if code != 0 || err != nil || v>>12&31 != 2 {
		t.Errorf("gen with worker_id=2 free: exit %d, %q, %s; want an ID of worker 2 (bits 12-16)", code, out, errs)
	}
}
