package compare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ClusterConfig configures StartCluster. Every zero value is usable.
type ClusterConfig struct {
	// BinDir holds initdb, pg_ctl and postgres. Empty means initdb's
	// directory from PATH, else the newest /usr/lib/postgresql/*/bin, else
	// /usr/local/pgsql/bin.
	BinDir string
	// SharedBuffers is shared_buffers ("128MB"). Empty means
	// DefaultSharedBuffers.
	SharedBuffers string
	// Keep leaves the stopped cluster's directory in place after Stop.
	Keep bool
}

// Settings of the throwaway cluster besides shared_buffers. Checkpoints
// come every 30 s or every ~135 MB of WAL (max_wal_size / (1 +
// checkpoint_completion_target)), so a measured phase of a million rows
// crosses some: after each one the first change to a page writes a
// full-page image, which is what makes scattered keys cost WAL.
var clusterSettings = []string{
	"listen_addresses = ''",
	"max_connections = 300",
	"checkpoint_timeout = 30s",
	"max_wal_size = 256MB",
	"min_wal_size = 80MB",
	"full_page_writes = on",
	"wal_compression = off",
	"log_checkpoints = off",
	"logging_collector = off",
}

// A Cluster is a throwaway PostgreSQL cluster: a data directory and a Unix
// socket in a temporary directory, superuser postgres, trust
// authentication, no TCP listener.
type Cluster struct {
	dir  string
	bin  string
	cred *syscall.Credential // run the binaries as postgres when we are root
	keep bool
}

// FindBinDir returns the directory holding initdb, pg_ctl and postgres, or
// an error wrapping ErrNoPostgres that says how to install them.
func FindBinDir() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(found, func(a, b string) int { return versionOf(b) - versionOf(a) })
	dirs = append(dirs, found...)
	dirs = append(dirs, "/usr/local/pgsql/bin")
	for _, d := range dirs {
		if checkBinDir(d) == nil {
			return d, nil
		}
	}
	return "", noPostgres("initdb not in PATH, /usr/lib/postgresql/*/bin or /usr/local/pgsql/bin")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func noPostgres(where string) error {
	return fmt.Errorf("%w (%s); install them (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server postgresql-contrib; macOS: brew install postgresql), or set Config.DSN to use a running server", ErrNoPostgres, where)
}

func checkBinDir(dir string) error {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return noPostgres(filepath.Join(dir, b) + " missing")
		}
	}
	return nil
}

// StartCluster creates and starts a throwaway cluster. Run as root, it runs
// the server as the postgres user (initdb refuses root). Stop it when done.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	bin := cfg.BinDir
	if bin == "" {
		var err error
		if bin, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if err := checkBinDir(bin); err != nil {
		return nil, err
	}
	sb := cfg.SharedBuffers
	if sb == "" {
		sb = DefaultSharedBuffers
	}
	if !sizeRE.MatchString(sb) {
		return nil, badInput("shared buffers %q: want a size such as 128MB or 1GB", sb)
	}
	c := &Cluster{bin: bin, keep: cfg.Keep}
	uid, gid, asUser, err := serverUser("postgres", "the throwaway cluster needs the postgres user (initdb refuses root)")
	if err != nil {
		return nil, err
	}
	if asUser {
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "idgen-compare-")
	if err != nil {
		return nil, err
	}
	c.dir = dir
	if uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			c.remove()
			return nil, err
		}
	}
	fail := func(err error) (*Cluster, error) {
		c.stop()
		c.remove()
		return nil, err
	}
	if out, err := c.run(ctx, "initdb", "-D", c.DataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return fail(fmt.Errorf("compare: initdb: %w: %s", err, lastLines(out, 5)))
	}
	conf := "\n# idgen compare\n" + strings.Join(clusterSettings, "\n") +
		fmt.Sprintf("\nunix_socket_directories = '%s'\nshared_buffers = %s\n", dir, sb)
	f, err := os.OpenFile(filepath.Join(c.DataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fail(err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if out, err := c.run(ctx, "pg_ctl", "-D", c.DataDir(), "-l", c.logFile(), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(c.logFile())
		return fail(fmt.Errorf("compare: starting the throwaway cluster: %w: %s %s", err, lastLines(out, 3), lastLines(log, 5)))
	}
	return c, nil
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "; ")
}

// Dir is the cluster's temporary directory, also its socket directory.
func (c *Cluster) Dir() string { return c.dir }

// DataDir is the cluster's data directory.
func (c *Cluster) DataDir() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) logFile() string { return filepath.Join(c.dir, "postgres.log") }

// StartCommand returns the shell command that starts the cluster again
// after Stop with Keep: pg_ctl by its full path with the data directory and
// log file. When the process is root it runs pg_ctl as the postgres user
// (runuser -u postgres -- ..., or su postgres -c '...' without runuser),
// since pg_ctl refuses root.
func (c *Cluster) StartCommand() string {
	cmd := shellQuote(filepath.Join(c.bin, "pg_ctl")) + " -D " + shellQuote(c.DataDir()) +
		" -l " + shellQuote(c.logFile()) + " start"
	switch {
	case c.cred == nil:
		return cmd
	case hasRunuser():
		return "runuser -u postgres -- " + cmd
	default:
		return "su postgres -c " + shellQuote(cmd)
	}
}

func hasRunuser() bool {
	_, err := exec.LookPath("runuser")
	return err == nil
}

var shellSafeRE = regexp.MustCompile(`^[A-Za-z0-9_/.,:=@%+-]+$`)

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if shellSafeRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DSN returns the key=value connection string of the cluster's socket.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", c.dir)
}

// Stop stops the server and removes the directory (unless Keep).
func (c *Cluster) Stop() error {
	err := c.stop()
	if !c.keep {
		if rerr := c.remove(); err == nil {
			err = rerr
		}
	}
	return err
}

func (c *Cluster) stop() error {
	if _, err := os.Stat(filepath.Join(c.DataDir(), "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "pg_ctl", "-D", c.DataDir(), "-m", "fast", "-w", "stop")
	if err != nil {
		if _, ierr := c.run(ctx, "pg_ctl", "-D", c.DataDir(), "-m", "immediate", "-w", "stop"); ierr != nil {
			return fmt.Errorf("compare: stopping the throwaway cluster in %s: %w: %s", c.dir, err, lastLines(out, 3))
		}
	}
	return nil
}

func (c *Cluster) remove() error {
	if c.dir == "" {
		return nil
	}
	return os.RemoveAll(c.dir)
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
		return -1, -1, false, fmt.Errorf("compare: running as root, %s: %w", why, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, true, nil
}
