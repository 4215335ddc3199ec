package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/cli"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/throwaway"
)

// TestCompareCleansUpOnSignal runs compare in a child process (this test
// binary again) on a throwaway cluster and stops it while the cluster
// runs: by closing the pipe its stdout and stderr go to (as `2>&1 | head
// -3` does: its next progress line gets SIGPIPE), by SIGHUP (the terminal
// closed) and by SIGTERM. No postmaster and no directory may remain.
func TestCompareCleansUpOnSignal(t *testing.T) {
	if args := os.Getenv("IDGEN_TEST_COMPARE_CHILD"); args != "" {
		os.Exit(cli.Main(strings.Split(args, " "), strings.NewReader(""), os.Stdout, os.Stderr))
	}
	t.Parallel() // child processes, each on a throwaway cluster in a temporary directory of its own
	testenv.PostgresBin(t)
	for _, tt := range []struct {
		name string
		stop func(cmd *exec.Cmd, pipe *os.File) error
		code int
	}{
		{"reader of stderr gone", func(_ *exec.Cmd, pipe *os.File) error { return pipe.Close() }, 128 + int(syscall.SIGPIPE)},
		{"SIGHUP", func(cmd *exec.Cmd, _ *os.File) error { return cmd.Process.Signal(syscall.SIGHUP) }, 128 + int(syscall.SIGHUP)},
		{"SIGTERM", func(cmd *exec.Cmd, _ *os.File) error { return cmd.Process.Signal(syscall.SIGTERM) }, 128 + int(syscall.SIGTERM)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()                  // a child process and cluster of its own
			tmp := testenv.OpenTempDir(t) // the child's TMPDIR
			// Two rounds: round 1's line is printed when round 2 starts,
			// with the cluster running.
			args := "compare --rows 20000 --runs 2 --writers 1 --scenarios in-memory --reads=false --strategies snowflake"
			cmd := exec.Command(os.Args[0], "-test.run=^TestCompareCleansUpOnSignal$")
			cmd.Env = append(os.Environ(), "IDGEN_TEST_COMPARE_CHILD="+args, "TMPDIR="+tmp)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout, cmd.Stderr = w, w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			t.Cleanup(func() { cmd.Process.Kill() })
			// Read until the cluster runs: its postmaster.pid is there.
			lines := bufio.NewScanner(r)
			var pidFile string
			for deadline := time.Now().Add(2 * time.Minute); pidFile == "" && time.Now().Before(deadline); {
				if !lines.Scan() {
					t.Fatalf("compare ended before its cluster started")
				}
				found, _ := filepath.Glob(filepath.Join(tmp, throwaway.Prefix+"*", "data", "postmaster.pid"))
				if len(found) > 0 {
					pidFile = found[0]
				}
			}
			if pidFile == "" {
				t.Fatal("no throwaway cluster within 2 minutes")
			}
			pid := postmasterOf(t, pidFile)
			if err := tt.stop(cmd, r); err != nil {
				t.Fatal(err)
			}
			rest := make(chan []string, 1)
			if tt.name != "reader of stderr gone" {
				go func() {
					var after []string
					for lines.Scan() {
						after = append(after, lines.Text())
					}
					rest <- after
				}()
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(3 * time.Minute):
				t.Fatal("compare did not stop within 3 minutes")
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code && !(tt.code == 141 && code == 0) {
				t.Errorf("compare stopped by %s = exit %d; want %d", tt.name, code, tt.code)
			}
			if tt.name != "reader of stderr gone" {
				// A cancelled run says only that it was cancelled: no note
				// of what the cancel broke (a WAL measurement, a drop).
				after := <-rest
				want := fmt.Sprintf("idgen: stopped (%s)", tt.name)
				for _, l := range after {
					if strings.Contains(l, "note:") || strings.Contains(l, "context canceled") {
						t.Errorf("after %s compare printed %q; want only %q", tt.name, l, want)
					}
				}
				if len(after) == 0 || after[len(after)-1] != want {
					t.Errorf("after %s compare printed %q; want it to end with %q", tt.name, after, want)
				}
			}
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("postmaster %d still runs after compare ended", pid)
				syscall.Kill(pid, syscall.SIGQUIT)
			}
			left, _ := filepath.Glob(filepath.Join(tmp, throwaway.Prefix+"*"))
			if len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func postmasterOf(t *testing.T, pidFile string) int {
	t.Helper()
	for range 100 {
		b, err := os.ReadFile(pidFile)
		var pid int
		if err == nil {
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no PID in %s", pidFile)
	return 0
}
