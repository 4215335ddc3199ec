package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSIGPIPE: a SIGPIPE while stdout and stderr are whole comes from
// a socket whose peer went away (Go delivers it for every fd once it is
// notified): a PostgreSQL restarted under a segment generator sent every
// serve node of the fault campaign one, and each shut down, exit 0, no
// word. serve keeps serving; it stops (gracefully, exit 0, as on SIGTERM) only when the reader
// of its stderr is gone, as `| head` does.
func TestServeSIGPIPE(t *testing.T) {
	bin := buildIdgen(t)
	start := func(t *testing.T, stderr *os.File) (*exec.Cmd, chan error) {
		cmd := exec.Command(bin, "serve", "-s", "snowflake?worker=1", "--addr", "127.0.0.1:0")
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return cmd, exited
	}

	t.Run("stderr a file", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "serve.log")
		f, err := os.Create(log)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd, exited := start(t, f)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(log); strings.Contains(string(b), `"msg":"serving"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("serve did not start within a minute")
			}
		}
		if err := cmd.Process.Signal(syscall.SIGPIPE); err != nil {
			t.Fatal(err)
		}
		// The signal is handled within milliseconds; a second is ample
		// margin on a loaded machine before asserting that nothing
		// happened (the process exiting is what the test watches for).
		select {
		case err := <-exited:
			b, _ := os.ReadFile(log)
			t.Fatalf("serve exited on a SIGPIPE with its stderr whole: %v\n%s", err, b)
		case <-time.After(time.Second):
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("after SIGTERM: %v; want exit 0", err)
		}
	})

	t.Run("reader of stderr gone", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd, exited := start(t, w)
		w.Close()
		buf := make([]byte, 4096)
		for seen := ""; !strings.Contains(seen, `"msg":"serving"`); {
			n, err := r.Read(buf)
			if err != nil {
				t.Fatalf("serve's stderr ended before it served: %v", err)
			}
			seen += string(buf[:n])
		}
		r.Close()
		if err := cmd.Process.Signal(syscall.SIGPIPE); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("exit %v; want 0 (serve stops gracefully, as on SIGTERM)", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("serve still runs a minute after a SIGPIPE with its stderr's reader gone")
		}
	})
}
