package cli_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// secret is a password the test PostgreSQL (trust auth) ignores.
const secret = "Zq9-s3cret-Pw"

// withPassword returns the test DSN with user postgres and password secret.
func withPassword(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("postgres", secret)
	u.RawQuery = "" // a spec's & would end the dsn value
	return u.String()
}

// segmentTag returns a unique biz tag, installed in dsn's database (table
// and tag, as on a new database: auto_create makes the tag, not the table)
// and deleted when the test ends.
func segmentTag(t *testing.T, dsn string) string {
	t.Helper()
	tag := fmt.Sprintf("cli_secrets_%d", time.Now().UnixNano())
	if out, errs, code := run("segment", "init", "--dsn", dsn, "--tag", tag); code != 0 {
		t.Fatalf("idgen segment init --tag %s = exit %d, %q, %q", tag, code, out, errs)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Exec(ctx, `DELETE FROM idgen_segments WHERE biz_tag = $1`, tag)
			c.Close(ctx)
		}
	})
	return tag
}

func TestComparePasswordMasked(t *testing.T) {
	t.Parallel() // a compare run of its own schema and biz tag
	dsn := testenv.PostgresDSN(t)
	pw := withPassword(t, dsn)
	spec := "segment?dsn=" + pw + "&tag=" + segmentTag(t, dsn) + "&auto_create=true"
	dir := filepath.Join(t.TempDir(), "out")
	// One round, 20 reads of each kind: the secret is masked or not
	// whatever the counts.
	code, stdout, stderr := runCompare("--dsn", pw, "--rows", "2000", "--writers", "1", "--batch", "500", "--runs", "1", "--read-ops", "20",
		"--strategies", spec+",uuidv7", "--out", dir)
	if code != 0 {
		t.Fatalf("compare = exit %d, stderr %q", code, stderr)
	}
	masked := strings.Replace(spec, secret, "xxxxx", 1)
	if !strings.Contains(stdout, masked) {
		t.Errorf("compare stdout lacks the masked spec %q:\n%s", masked, stdout)
	}
	checkNoSecret(t, "stdout", stdout)
	checkNoSecret(t, "stderr", stderr)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		n++
		checkNoSecret(t, path, string(b))
		return err
	})
	if err != nil || n < 8 {
		t.Fatalf("walking %s: %d files, %v; want results.json, results.csv and 6 charts", dir, n, err)
	}
}

func TestBenchPasswordMasked(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	spec := "segment?dsn=" + withPassword(t, dsn) + "&tag=" + segmentTag(t, dsn) + "&auto_create=true"
	stdout, stderr, code := run("bench", "-s", spec, "--duration", "20ms", "--goroutines", "1")
	if code != 0 {
		t.Fatalf("bench = exit %d, stderr %q", code, stderr)
	}
	if masked := strings.Replace(spec, secret, "xxxxx", 1); !strings.Contains(stdout, masked) {
		t.Errorf("bench stdout lacks the masked spec %q:\n%s", masked, stdout)
	}
	checkNoSecret(t, "stdout", stdout)
	checkNoSecret(t, "stderr", stderr)
}

func TestBenchPasswordMaskedInErrors(t *testing.T) {
	// A tag that does not exist: the run fails after the spec parsed.
	spec := "segment?dsn=" + withPassword(t, testenv.PostgresDSN(t)) + "&tag=cli_secrets_none&step=x"
	stdout, stderr, code := run("bench", "-s", spec, "--duration", "20ms")
	if code != 2 {
		t.Errorf("bench -s %q = exit %d; want 2", spec, code)
	}
	checkNoSecret(t, "stdout", stdout)
	checkNoSecret(t, "stderr", stderr)
}

func checkNoSecret(t *testing.T, where, s string) {
	t.Helper()
	if n := strings.Count(s, secret); n > 0 {
		i := strings.Index(s, secret)
		t.Errorf("%s holds the password %d times, first in %q", where, n, s[max(0, i-60):min(len(s), i+60)])
	}
}
