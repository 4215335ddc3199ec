package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/jackc/pgx/v5"
)

func runSegmentCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSegmentInit(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	tag := fmt.Sprintf("cli_test_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Exec(ctx, `DELETE FROM idgen_segments WHERE biz_tag = $1`, tag)
			c.Close(ctx)
		}
	})
	steps := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"create", []string{"--tag", tag, "--step", "300"}, 0, "created biz tag"},
		{"again", []string{"--tag", tag, "--step", "300"}, 0, "max_id 0, step 300 (unchanged)"},
		{"again with another step", []string{"--tag", tag, "--step", "999"}, 0, "step 300 (unchanged; --step 999 ignored)"},
	}
	for _, s := range steps {
		code, out, errs := runSegmentCmd(append([]string{"segment", "init", "--dsn", dsn}, s.args...)...)
		if code != s.code || !strings.Contains(out, s.out) {
			t.Fatalf("%s: idgen segment init %v = %d, %q, %q; want %d, %q", s.name, s.args, code, out, errs, s.code, s.out)
		}
	}
	a, err := segment.Dial(context.Background(), dsn, segment.Config{Tag: tag})
	if err != nil {
		t.Fatalf("Dial(tag %q) after init = %v", tag, err)
	}
	defer a.Close()
	if st := a.Stats(); st.Step != 300 {
		t.Fatalf("first segment's step = %d; want the 300 init gave the tag", st.Step)
	}
}

func TestSegmentInitInstagram(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	seq := fmt.Sprintf("cli_test_seq_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Exec(ctx, `DROP SEQUENCE IF EXISTS `+seq)
			c.Close(ctx)
		}
	})
	for range 2 {
		code, out, errs := runSegmentCmd("segment", "init", "--instagram", "--dsn", dsn, "--seq", seq)
		if code != 0 || !strings.Contains(out, "installed idgen_instagram_id") {
			t.Fatalf("idgen segment init --instagram = %d, %q, %q; want 0, installed", code, out, errs)
		}
	}
}

func TestSegmentInitBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no dsn", []string{"--tag", "x"}, 2, "--dsn is required"},
		{"no tag", []string{"--dsn", "redis://127.0.0.1:6379/0"}, 2, "--tag is required"},
		{"step 0", []string{"--dsn", "redis://127.0.0.1:6379/0", "--tag", "x", "--step", "0"}, 2, "--step 0"},
		{"step negative", []string{"--dsn", "redis://127.0.0.1:6379/0", "--tag", "x", "--step", "-1"}, 2, "--step -1"},
		{"bad scheme", []string{"--dsn", "sqlite://x/y", "--tag", "x"}, 2, `"sqlite"`},
		{"instagram with tag", []string{"--instagram", "--dsn", "postgres://127.0.0.1/x", "--tag", "x"}, 2, "no --tag"},
		{"unreachable", []string{"--dsn", "redis://127.0.0.1:1/0", "--tag", "x"}, 1, "idgen: cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runSegmentCmd(append([]string{"segment", "init"}, c.args...)...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("idgen segment init %v = %d, %q; want %d, %q", c.args, code, errs, c.code, c.want)
			}
		})
	}
}

// The README's segment init examples name a database that may not exist:
// --create-db creates it; without it the error says what to do.
func TestSegmentInitCreateDB(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			db := fmt.Sprintf("cli_test_db_%d", time.Now().UnixNano())
			dsn := dbDSN(t, kind, db)
			code, out, errs := runSegmentCmd("segment", "init", "--dsn", dsn, "--tag", "order")
			if code != 1 || !strings.Contains(errs, `database "`+db+`"`) || !strings.Contains(errs, "--create-db") {
				t.Fatalf("idgen segment init (no database %s) = %d, %q, %q; want 1, naming it and --create-db", db, code, out, errs)
			}
			for i, want := range []string{"created the database of " + dsn + "\ncreated biz tag", "biz tag \"order\" exists"} {
				code, out, errs := runSegmentCmd("segment", "init", "--dsn", dsn, "--tag", "order", "--create-db")
				if code != 0 || !strings.HasPrefix(out, want) {
					t.Fatalf("idgen segment init --create-db #%d = %d, %q, %q; want 0, %q", i+1, code, out, errs, want)
				}
			}
		})
	}
}

// dbDSN returns a DSN of the test server kind naming database db, which is
// dropped at the end of the test.
func dbDSN(t *testing.T, kind, db string) string {
	t.Helper()
	ctx := context.Background()
	var dsn string
	switch kind {
	case "postgres":
		dsn = testenv.PostgresDSN(t)
		t.Cleanup(func() {
			if c, err := pgx.Connect(ctx, dsn); err == nil {
				c.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
				c.Close(ctx)
			}
		})
	default:
		dsn = testenv.MySQLDSN(t)
		t.Cleanup(func() {
			cfg, err := segment.MySQLConfig(dsn)
			if err != nil {
				return
			}
			if c, err := sql.Open("mysql", cfg.FormatDSN()); err == nil {
				c.ExecContext(ctx, "DROP DATABASE IF EXISTS "+db)
				c.Close()
			}
		})
	}
	return otherDatabase(t, dsn, db)
}

// ticket init sets up n servers; a spec then works in either order; a
// server listed twice is bad input; a name set up for one server says how
// to renumber; with one server down, gen starts with the other.
func TestTicketInit(t *testing.T) {
	stamp := time.Now().UnixNano()
	name := fmt.Sprintf("cli_tickets_%d", stamp)
	pg := dbDSN(t, "postgres", fmt.Sprintf("cli_ticket_pg_%d", stamp))
	my := dbDSN(t, "mysql", fmt.Sprintf("cli_ticket_my_%d", stamp))
	myp, proxy := testenv.ViaProxy(t, my)
	secret := strings.Replace(pg, "postgres@", "postgres:s3cret@", 1)

	steps := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"one server", []string{"ticket", "init", "--dsn", pg, "--name", name, "--create-db"}, 0,
			"created the database of " + pg + "\n" + pg + ": offset 1, step 1, next ticket 1\n"},
		{"two without reset", []string{"ticket", "init", "--dsn", pg + "," + myp, "--name", name, "--create-db"}, 1,
			"idgen ticket init --dsn '" + pg + "," + myp + "' --name " + name + " --reset"},
		{"two with reset", []string{"ticket", "init", "--dsn", pg + "," + myp, "--name", name, "--reset"}, 0,
			pg + ": offset 1, step 2, next ticket 1\n" + myp + ": offset 2, step 2, next ticket 2\n"},
		{"again, other order", []string{"ticket", "init", "--dsn", myp + "," + pg, "--name", name}, 0,
			myp + ": offset 2, step 2 (unchanged)\n" + pg + ": offset 1, step 2 (unchanged)\n"},
		{"listed twice", []string{"ticket", "init", "--dsn", secret + "," + pg, "--name", name}, 2,
			"is listed twice (#1 and #2)"},
		{"no dsn", []string{"ticket", "init"}, 2, "--dsn is required"},
		// gen takes its 4 IDs in one batch from the first server in turn.
		{"gen, reversed", []string{"gen", "-s", "ticket?dsn=" + myp + "," + pg + "&name=" + name, "-n", "4"}, 0, "2\n4\n6\n8\n"},
	}
	for _, s := range steps {
		code, out, errs := runSegmentCmd(s.args...)
		got := out
		if s.code != 0 {
			got = errs
		}
		if code != s.code || !strings.Contains(got, s.want) || strings.Contains(out+errs, "s3cret") {
			t.Fatalf("%s: idgen %v = %d, %q, %q; want %d, %q", s.name, s.args, code, out, errs, s.code, s.want)
		}
	}
	proxy.Cut()
	code, out, errs := runSegmentCmd("gen", "-s", "ticket?dsn="+pg+","+myp+"&name="+name, "-n", "3")
	if code != 0 || out != "1\n3\n5\n" {
		t.Fatalf("idgen gen (second server down) = %d, %q, %q; want 0, the first server's 1, 3, 5", code, out, errs)
	}
}

// go-redis logs a failed dial to the process's stderr; idgen prints its
// own one line only.
func TestRedisUnreachableOneLine(t *testing.T) {
	if os.Getenv("IDGEN_TEST_CHILD") == "1" {
		os.Exit(cli.Main([]string{"segment", "init", "--dsn", "redis://127.0.0.1:1/0", "--tag", "x"}, strings.NewReader(""), os.Stdout, os.Stderr))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRedisUnreachableOneLine$")
	cmd.Env = append(os.Environ(), "IDGEN_TEST_CHILD=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("idgen segment init (Redis unreachable) = %v; want exit 1", err)
	}
	want := "idgen: cannot connect to Redis at 127.0.0.1:1 (database 0): connection refused\n"
	if stderr.String() != want {
		t.Fatalf("stderr = %q; want %q only", stderr.String(), want)
	}
}
