package cli_test

import (
	"bytes"
	"context"
	"fmt"
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
		{"unreachable", []string{"--dsn", "redis://127.0.0.1:1/0", "--tag", "x"}, 1, "redis://127.0.0.1:1/0"},
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
