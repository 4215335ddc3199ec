// Package throwaway starts throwaway database servers for measurements and
// tests: a PostgreSQL cluster (StartPostgres) or a MariaDB server
// (StartMariaDB) in a temporary directory named Prefix*, listening on a
// Unix socket only, removed by Stop.
//
// No server outlives its owner: the server is a child of this process with
// a parent-death signal, so the kernel stops it when this process dies,
// whatever killed it (SIGKILL, SIGPIPE, a crash). Each directory records
// its owner (PID and start time, in the file "owner"); RemoveStale removes
// the directories, and stops the servers, of owners that are gone.
//
//	c, err := throwaway.StartPostgres(ctx, throwaway.PostgresConfig{BinDir: bin})
//	...
//	defer c.Stop()
//	conn, err := pgx.Connect(ctx, c.DSN())
package throwaway

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/idgenkit/idgen/internal/errclass"
)

// Errors.
var (
	// ErrNoPostgres reports that the PostgreSQL server binaries (initdb,
	// pg_ctl, postgres) are not installed.
	ErrNoPostgres = errclass.Unavailable("throwaway: PostgreSQL server binaries not found")
	// ErrNoMariaDB reports that the MariaDB server binaries (mariadbd and
	// mariadb-install-db) are not installed.
	ErrNoMariaDB = errclass.Unavailable("throwaway: MariaDB server binaries not found")
	// ErrBadConfig reports a setting the server cannot start with (a bad
	// size).
	ErrBadConfig = errclass.Invalid("throwaway: invalid setting")
)

// Prefix starts the name of every throwaway directory in os.TempDir().
const Prefix = "idgen-compare-"

// ownerFile, in a throwaway directory, holds "PID START" of the process
// that owns the server: START is the process's start time in clock ticks
// since boot (field 22 of /proc/PID/stat), so that a reused PID is not
// taken for the owner.
const ownerFile = "owner"

// makeDir creates a temporary directory named prefix*, owned by uid:gid
// when uid ≥ 0, with the owner file.
func makeDir(prefix string, uid, gid int) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	pid := os.Getpid()
	if err := os.WriteFile(filepath.Join(dir, ownerFile), fmt.Appendf(nil, "%d %d\n", pid, startTime(pid)), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// startTime returns the start time of process pid in clock ticks since
// boot, or 0 when it is unknown (no such process).
func startTime(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseInt(f[19], 10, 64) // field 22
	return v
}

// alive reports whether the owner recorded in dir still runs. A directory
// without an owner file (a kept one, or another tool's) counts as alive.
func alive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return true
	}
	var pid int
	var start int64
	if _, err := fmt.Sscan(string(b), &pid, &start); err != nil || pid <= 0 {
		return true
	}
	return startTime(pid) == start
}

// RemoveStale stops the servers and removes the directories (Prefix* in
// os.TempDir()) whose owner process is gone, and returns the directories
// removed. Directories of live owners, and kept ones (Keep), are left
// alone.
func RemoveStale() ([]string, error) {
	found, err := filepath.Glob(filepath.Join(os.TempDir(), Prefix+"*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, dir := range found {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || alive(dir) {
			continue
		}
		for _, pidFile := range []string{filepath.Join(dir, "data", "postmaster.pid"), filepath.Join(dir, mariadbPidFile)} {
			killServer(pidFile, dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// killServer kills the process group of the server whose PID file is
// pidFile, if that process still runs with dir on its command line or as
// its working directory (not a reused PID).
func killServer(pidFile, dir string) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 1 {
		return
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if !strings.Contains(string(cmdline), dir) && !strings.HasPrefix(cwd, dir) {
		return
	}
	syscall.Kill(-pid, syscall.SIGKILL) // its process group: the server and its children
	syscall.Kill(pid, syscall.SIGKILL)
}

// childAttr returns the attributes of a server child: its own process
// group (a terminal's Ctrl-C reaches this process, which stops the server
// in order), the credentials to run as, and the signal the kernel sends it
// when this process dies. The parent-death signal is set after the
// credentials change, so it holds.
func childAttr(cred *syscall.Credential, deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: deathSig}
}

// serverUser returns the uid and gid of the system user name that a
// throwaway server runs as when this process is root (asUser true), or -1,
// -1 and false otherwise; why says what needs the user, for the error.
func serverUser(name, why string) (uid, gid int, asUser bool, err error) {
	if os.Geteuid() != 0 {
		return -1, -1, false, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return -1, -1, false, fmt.Errorf("throwaway: running as root, %s: %w", why, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, true, nil
}
