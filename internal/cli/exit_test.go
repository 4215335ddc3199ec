package cli_test

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/cli"
)

// closedPort returns 127.0.0.1:PORT where nothing listens: a store there
// refuses connections at once.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// busyAddr returns 127.0.0.1:PORT where this test listens until it ends:
// serve fails there (exit 1) rather than serve, should it take input it
// must refuse.
func busyAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// TestExitCodes checks the one rule of idgen's exit codes: 0 ok; 1 a store,
// server or runtime failure; 2 bad input (flags, specs, IDs, files).
func TestExitCodes(t *testing.T) {
	down := closedPort(t)
	pg := "postgres://postgres@" + down + "/idgen?connect_timeout=2"
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"ok", []string{"gen", "-s", "uuidv4"}, 0, ""},
		{"no subcommand prints help", nil, 0, ""},
		{"convert without --to", []string{"convert", "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, 2, "--to is required"},
		{"convert too many args", []string{"convert", "a", "b", "--to", "uuid"}, 2, "convert: want one argument, the ID to convert; got 2"},
		{"unknown command", []string{"gne"}, 2, `unknown command "gne"; did you mean gen?`},
		{"unknown flag", []string{"gen", "--bogus"}, 2, "unknown flag --bogus (idgen gen --help lists the flags)"},
		{"bad flag value", []string{"gen", "-n", "abc"}, 2, "-n"},
		{"unknown strategy", []string{"gen", "-s", "nosuch"}, 2, `unknown strategy "nosuch"`},
		{"future epoch", []string{"gen", "-s", "snowflake?layout=time:41,worker:10,sequence:12;epoch=2099-01-01T00:00:00Z"}, 2, "epoch is 2099-01-01"},
		{"epoch before 1970", []string{"gen", "-s", "snowflake?epoch=1969-12-31"}, 2, "epoch 1969-12-31T00:00:00Z outside years 1970-2200"},
		{"epoch in year 1 (Go's zero time)", []string{"gen", "-s", "snowflake?epoch=0001-01-01"}, 2, "epoch 0001-01-01T00:00:00Z outside years 1970-2200"},
		{"explain epoch in year 1", []string{"explain", "snowflake?epoch=0001-01-01"}, 2, "epoch 0001-01-01T00:00:00Z outside years 1970-2200"},
		{"sonyflake start_time in year 1", []string{"gen", "-s", "sonyflake?start_time=0001-01-01"}, 2, "start_time"},
		{"expired layout", []string{"gen", "-s", "snowflake?preset=baidu"}, 2, "layout lifetime exhausted"},
		{"serve address without a port", []string{"serve", "-s", "uuidv4", "--addr", "notaport"}, 2, "notaport"},
		{"malformed ID", []string{"inspect", "12x4"}, 2, `"12x4"`},
		{"worker source unreachable", []string{"gen", "-s", "snowflake?preset=twitter&datacenter=1", "--worker-source", pg}, 1, "cannot connect to PostgreSQL at "},
		{"segment store unreachable", []string{"gen", "-s", "segment?tag=exit_codes&dsn=" + pg}, 1, "cannot connect to PostgreSQL at "},
		{"segment init store unreachable", []string{"segment", "init", "--dsn", pg, "--tag", "exit_codes"}, 1, "cannot connect to PostgreSQL at "},
		{"compare server unreachable", []string{"compare", "--strategies", "uuidv4", "--dsn", pg}, 1, "cannot connect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := run(tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) || (tt.code == 0) != (errs == "") {
				t.Fatalf("idgen %q = exit %d, stderr %q; want exit %d and %q", tt.args, code, errs, tt.code, tt.want)
			}
		})
	}
}

// TestExitInterrupt checks that SIGINT stops a running command with exit
// code 130. The command runs in a child process (this test binary again),
// so that no SIGINT reaches the tests themselves, and the signal is sent
// once the child prints IDs: Main listens for signals by then.
func TestExitInterrupt(t *testing.T) {
	if os.Getenv("IDGEN_TEST_INTERRUPT_CHILD") == "1" {
		os.Exit(cli.Main([]string{"gen", "-s", "uuidv4", "-n", "2000000000"}, strings.NewReader(""), os.Stdout, os.Stderr))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitInterrupt$")
	cmd.Env = append(os.Environ(), "IDGEN_TEST_INTERRUPT_CHILD=1")
	var errb strings.Builder
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if _, err := stdout.Read(make([]byte, 1)); err != nil {
		t.Fatalf("reading the first ID of gen: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := cmd.ProcessState.ExitCode()
		if code != 130 || errb.String() != "idgen: interrupted (SIGINT)\n" {
			t.Fatalf("gen interrupted by SIGINT = exit %d (%v), stderr %q; want exit 130 and interrupted (SIGINT)", code, err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("gen -n 2000000000 did not stop on SIGINT within 30s")
	}
}
