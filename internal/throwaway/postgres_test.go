package throwaway_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/throwaway"
	"github.com/jackc/pgx/v5"
)

func needPostgres(t *testing.T) string { return testenv.PostgresBin(t) }

func ownTempDir(t *testing.T) string { return testenv.OwnTempDir(t) }

func TestStartPostgresNoBinaries(t *testing.T) {
	_, err := throwaway.StartPostgres(context.Background(), throwaway.PostgresConfig{BinDir: t.TempDir()})
	if !errors.Is(err, throwaway.ErrNoPostgres) || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Fatalf("StartPostgres(empty bin dir) = %v; want ErrNoPostgres saying how to install", err)
	}
}

func TestStartPostgres(t *testing.T) {
	bin := needPostgres(t)
	tmp := ownTempDir(t)
	ctx := context.Background()
	c, err := throwaway.StartPostgres(ctx, throwaway.PostgresConfig{BinDir: bin, SharedBuffers: "16MB", Settings: []string{"work_mem = 5MB"}})
	if err != nil {
		t.Fatalf("StartPostgres = %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		t.Fatalf("connect to %s: %v", c.DSN(), err)
	}
	var sb, listen, wm string
	err = conn.QueryRow(ctx, "SELECT current_setting('shared_buffers'), current_setting('listen_addresses'), current_setting('work_mem')").Scan(&sb, &listen, &wm)
	conn.Close(ctx)
	if err != nil || sb != "16MB" || listen != "" || wm != "5MB" {
		t.Errorf("shared_buffers, listen_addresses, work_mem = %q, %q, %q, %v; want 16MB, no TCP listener, 5MB", sb, listen, wm, err)
	}
	if !strings.HasPrefix(c.Dir(), filepath.Join(tmp, throwaway.Prefix)) || c.BinDir() != bin {
		t.Errorf("Dir(), BinDir() = %q, %q; want under %s, %s", c.Dir(), c.BinDir(), tmp, bin)
	}
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(%s) after Stop = %v; want it removed", c.Dir(), err)
	}
}

// TestServerDiesWithOwner starts a cluster from a child process, kills
// that process with SIGKILL (nothing of it runs after), and checks that
// the postmaster stops by itself and that RemoveStale then removes the
// directory, while a live owner's cluster stays.
func TestServerDiesWithOwner(t *testing.T) {
	bin := needPostgres(t)
	tmp := ownTempDir(t)
	if os.Getenv("IDGEN_THROWAWAY_CHILD") == "1" {
		return // the child runs TestHelperOwner only
	}
	child := exec.Command(os.Args[0], "-test.run=^TestHelperOwner$", "-test.v")
	child.Env = append(os.Environ(), "IDGEN_THROWAWAY_CHILD=1", "IDGEN_THROWAWAY_BIN="+bin, "TMPDIR="+tmp)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	buf := make([]byte, 4096)
	var got strings.Builder
	deadline := time.Now().Add(2 * time.Minute)
	for dir == "" && time.Now().Before(deadline) {
		n, err := out.Read(buf)
		got.Write(buf[:n])
		if _, rest, ok := strings.Cut(got.String(), "DIR "); ok {
			if d, _, ok := strings.Cut(rest, "\n"); ok {
				dir = d
			}
		}
		if err != nil {
			break
		}
	}
	if dir == "" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("the child started no cluster: %s", got.String())
	}
	pm := postmasterPID(t, dir)
	child.Process.Kill()
	child.Wait()
	for i := 0; processRuns(pm); i++ {
		if i > 300 {
			t.Fatalf("postmaster %d still runs 30 s after its owner was killed", pm)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A live owner's directory (this process's) is left alone.
	mine, err := throwaway.StartPostgres(context.Background(), throwaway.PostgresConfig{BinDir: bin, SharedBuffers: "16MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Stop()
	removed, err := throwaway.RemoveStale()
	if err != nil || len(removed) != 1 || removed[0] != dir {
		t.Errorf("RemoveStale() = %v, %v; want [%s]", removed, err, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(%s) after RemoveStale = %v; want it removed", dir, err)
	}
	if _, err := os.Stat(mine.DataDir()); err != nil {
		t.Errorf("RemoveStale removed a live owner's cluster: %v", err)
	}
}

// TestHelperOwner is the child of TestServerDiesWithOwner: it starts a
// cluster, prints its directory and waits to be killed.
func TestHelperOwner(t *testing.T) {
	if os.Getenv("IDGEN_THROWAWAY_CHILD") != "1" {
		t.Skip("run by TestServerDiesWithOwner")
	}
	c, err := throwaway.StartPostgres(context.Background(), throwaway.PostgresConfig{BinDir: os.Getenv("IDGEN_THROWAWAY_BIN"), SharedBuffers: "16MB"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("DIR %s\n", c.Dir())
	time.Sleep(5 * time.Minute)
}

func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func processRuns(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && len(b) > i+2 && b[i+2] != 'Z' // a zombie has stopped
}

// TestFindPostgresNewest: with Debian's 15 first in PATH (as on this
// machine and in .ci/run) and 18 unpacked where .ci/pg18.sh puts it,
// FindPostgres picks 18, the newest: direct I/O needs 16.
func TestFindPostgresNewest(t *testing.T) {
	pg18 := testenv.PG18Bin(t)
	if !strings.HasPrefix(pg18, throwaway.PG18Cache+"/") {
		t.Skipf("IDGEN_TEST_PG18_BIN %q is not under %s", pg18, throwaway.PG18Cache)
	}
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/initdb"); err == nil {
		t.Setenv("PATH", "/usr/lib/postgresql/15/bin:"+os.Getenv("PATH"))
	}
	got, err := throwaway.FindPostgres()
	if err != nil {
		t.Fatalf("FindPostgres() = %v", err)
	}
	if v := throwaway.PostgresVersion(got); v < 18 {
		t.Errorf("FindPostgres() = %q (PostgreSQL %d); want 18 or later (%s)", got, v, pg18)
	}
}
