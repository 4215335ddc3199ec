package throwaway

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idgenkit/idgen/internal/lazyre"
)

// PostgresConfig configures StartPostgres. Every zero value is usable.
type PostgresConfig struct {
	// BinDir holds initdb, pg_ctl and postgres. Empty means FindPostgres.
	BinDir string
	// SharedBuffers is shared_buffers ("128MB"). Empty means
	// DefaultSharedBuffers.
	SharedBuffers string
	// Settings are more postgresql.conf lines ("debug_io_direct = data"),
	// written after the defaults (postgresSettings), so that they win.
	// Empty means none.
	Settings []string
	// HBA are pg_hba.conf lines put before initdb's (trust for every
	// local and host connection), so that they win: "hostssl all idgen
	// 127.0.0.1/32 scram-sha-256 clientcert=verify-full". Empty means none.
	HBA []string
	// Keep leaves the stopped cluster's directory in place after Stop.
	Keep bool
}

// DefaultSharedBuffers is the cluster's shared_buffers when
// PostgresConfig.SharedBuffers is empty.
const DefaultSharedBuffers = "128MB"

// postgresSettings are the cluster's settings besides shared_buffers.
// Checkpoints come every 30 s or every ~135 MB of WAL (max_wal_size / (1 +
// checkpoint_completion_target)), so a measured phase of a million rows
// crosses some: after each one the first change to a page writes a
// full-page image, which is what makes scattered keys cost WAL.
var postgresSettings = []string{
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

// A Postgres is a throwaway PostgreSQL cluster: a data directory and a
// Unix socket in a temporary directory (Prefix*), superuser postgres, trust
// authentication, no TCP listener. Its postmaster is a child of this
// process that the kernel stops (SIGQUIT, PostgreSQL's immediate shutdown)
// if this process dies first; the directory of a cluster whose owner died
// is removed by the next RemoveStale.
type Postgres struct {
	dir    string
	bin    string
	cred   *syscall.Credential // run the binaries as postgres when we are root
	keep   bool
	cmd    *exec.Cmd
	exited chan struct{}
}

// PG18Cache is where .ci/pg18.sh unpacks PostgreSQL 18 from the npm
// registry (<version>/native/bin below it); FindPostgres looks there too.
const PG18Cache = "/var/cache/idgen/pg18"

// FindPostgres returns the directory holding initdb, pg_ctl and postgres
// of the newest server found, by `postgres --version`: initdb's directory
// from PATH (which wins a tie), /usr/lib/postgresql/*/bin,
// PG18Cache/*/native/bin and /usr/local/pgsql/bin. The newest, because
// direct I/O (debug_io_direct) and pg_stat_io need PostgreSQL 16. None
// found, the error wraps ErrNoPostgres and says how to install them.
func FindPostgres() (string, error) { return newestPostgres(PostgresDirs()) }

// PostgresDirs lists the directories FindPostgres looks in, PATH's first.
func PostgresDirs() []string {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", PG18Cache + "/*/native/bin"} {
		found, _ := filepath.Glob(pattern)
		dirs = append(dirs, found...)
	}
	return append(dirs, "/usr/local/pgsql/bin")
}

func newestPostgres(dirs []string) (string, error) {
	best, bestVersion := "", -1
	for _, d := range dirs {
		if CheckPostgres(d) != nil {
			continue
		}
		if v := PostgresVersion(d); v > bestVersion {
			best, bestVersion = d, v
		}
	}
	if best == "" {
		return "", noPostgres("initdb not in PATH, /usr/lib/postgresql/*/bin, " + PG18Cache + " or /usr/local/pgsql/bin")
	}
	return best, nil
}

func noPostgres(where string) error {
	return fmt.Errorf("%w (%s); install them (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server postgresql-contrib; macOS: brew install postgresql), or give a running server's DSN", ErrNoPostgres, where)
}

// CheckPostgres reports whether dir holds initdb, pg_ctl and postgres, with
// an error wrapping ErrNoPostgres that names the one missing.
func CheckPostgres(dir string) error {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return noPostgres(filepath.Join(dir, b) + " missing")
		}
	}
	return nil
}

// PostgresVersion returns the major version of the server in binDir
// (postgres --version: "postgres (PostgreSQL) 18.4" gives 18), or 0.
func PostgresVersion(binDir string) int {
	out, err := exec.Command(filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`\) (\d+)`).FindSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// StartPostgres creates and starts a throwaway cluster: initdb, then the
// postmaster as a child of this process. Run as root, it runs both as the
// postgres user (initdb refuses root). Stop it when done. Missing binaries
// wrap ErrNoPostgres.
func StartPostgres(ctx context.Context, cfg PostgresConfig) (*Postgres, error) {
	bin := cfg.BinDir
	if bin == "" {
		var err error
		if bin, err = FindPostgres(); err != nil {
			return nil, err
		}
	} else if err := CheckPostgres(bin); err != nil {
		return nil, err
	}
	sb := cfg.SharedBuffers
	if sb == "" {
		sb = DefaultSharedBuffers
	}
	if !sizeRE().MatchString(sb) {
		return nil, fmt.Errorf("%w: shared buffers %q: want a size such as 128MB or 1GB", ErrBadConfig, sb)
	}
	c := &Postgres{bin: bin, keep: cfg.Keep}
	uid, gid, asUser, err := serverUser("postgres", "the throwaway cluster needs the postgres user (initdb refuses root)")
	if err != nil {
		return nil, err
	}
	if asUser {
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if c.dir, err = makeDir(Prefix, uid, gid); err != nil {
		return nil, err
	}
	fail := func(err error) (*Postgres, error) {
		c.stop()
		c.remove()
		return nil, err
	}
	if out, err := c.run(ctx, "initdb", "-D", c.DataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return fail(fmt.Errorf("throwaway: initdb: %w: %s", err, lastLines(out, 5)))
	}
	conf := "\n# idgen throwaway\n" + strings.Join(postgresSettings, "\n") +
		fmt.Sprintf("\nunix_socket_directories = '%s'\nshared_buffers = %s\n", c.dir, sb)
	if len(cfg.Settings) > 0 {
		conf += strings.Join(cfg.Settings, "\n") + "\n"
	}
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
	if err := prepend(filepath.Join(c.DataDir(), "pg_hba.conf"), cfg.HBA); err != nil {
		return fail(err)
	}
	if err := c.start(ctx); err != nil {
		return fail(err)
	}
	return c, nil
}

// prepend writes lines at the top of the file (nothing when none).
func prepend(path string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(strings.Join(lines, "\n")+"\n"), old...), 0o600)
}

// start runs the postmaster as a child, in its own process group, with
// SIGQUIT as its parent-death signal, and waits until postmaster.pid says
// it is ready (as pg_ctl -w does).
func (c *Postgres) start(ctx context.Context) error {
	log, err := os.OpenFile(c.logFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	if c.cred != nil { // pg_ctl, run as postgres, appends to it after a Keep
		if err := log.Chown(int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return err
		}
	}
	c.cmd = exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.DataDir())
	c.cmd.Dir = c.dir
	c.cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	c.cmd.Stdout, c.cmd.Stderr = log, log
	c.cmd.SysProcAttr = childAttr(c.cred, syscall.SIGQUIT)
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("throwaway: starting postgres: %w", err)
	}
	c.exited = make(chan struct{})
	go func() { c.cmd.Wait(); close(c.exited) }() // owned by c: Stop waits for it
	return waitReady(ctx, c.exited, c.logFile(), "the throwaway cluster", func() bool {
		b, err := os.ReadFile(filepath.Join(c.DataDir(), "postmaster.pid"))
		lines := strings.Split(string(b), "\n")
		return err == nil && len(lines) >= 8 && strings.TrimSpace(lines[7]) == "ready"
	})
}

func (c *Postgres) run(ctx context.Context, name string, args ...string) ([]byte, error) {
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

// Dir is the cluster's temporary directory, also its socket directory.
func (c *Postgres) Dir() string { return c.dir }

// DataDir is the cluster's data directory.
func (c *Postgres) DataDir() string { return filepath.Join(c.dir, "data") }

// BinDir is the directory of the cluster's server binaries.
func (c *Postgres) BinDir() string { return c.bin }

func (c *Postgres) logFile() string { return filepath.Join(c.dir, "postgres.log") }

// StartCommand returns the shell command that starts the cluster again
// after Stop with Keep: pg_ctl by its full path with the data directory and
// log file. When the process is root it runs pg_ctl as the postgres user
// (runuser -u postgres -- ..., or su postgres -c '...' without runuser),
// since pg_ctl refuses root.
func (c *Postgres) StartCommand() string {
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

var shellSafeRE = lazyre.MustCompile(`^[A-Za-z0-9_/.,:=@%+-]+$`)

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if shellSafeRE().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DSN returns the key=value connection string of the cluster's socket.
func (c *Postgres) DSN() string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", c.dir)
}

// Stop stops the server (a fast shutdown, an immediate one after a minute)
// and removes the directory (unless Keep).
func (c *Postgres) Stop() error {
	err := c.stop()
	if c.keep {
		os.Remove(filepath.Join(c.dir, ownerFile)) // kept: never stale
	} else if rerr := c.remove(); err == nil {
		err = rerr
	}
	return err
}

// RestartImmediate is `pg_ctl restart -m immediate`: the postmaster gets
// SIGQUIT (immediate shutdown: every backend ends at once, nothing is
// flushed, the next start runs crash recovery), then starts again on the
// same data directory and settings and waits until it is ready (at most
// 60 s). Errors come from the start (the server's last log lines).
func (c *Postgres) RestartImmediate(ctx context.Context) error {
	if c.cmd == nil || c.cmd.Process == nil {
		return fmt.Errorf("throwaway: restart: the cluster in %s is not running", c.dir)
	}
	if err := stopChild(c.cmd, c.exited, syscall.SIGQUIT, syscall.SIGKILL, "the throwaway cluster in "+c.dir); err != nil {
		return err
	}
	return c.start(ctx)
}

func (c *Postgres) stop() error {
	if c.cmd == nil || c.cmd.Process == nil {
		return nil
	}
	// SIGINT is PostgreSQL's fast shutdown, SIGQUIT its immediate one.
	return stopChild(c.cmd, c.exited, syscall.SIGINT, syscall.SIGQUIT, "the throwaway cluster in "+c.dir)
}

func (c *Postgres) remove() error {
	if c.dir == "" {
		return nil
	}
	return os.RemoveAll(c.dir)
}

// stopChild signals a server child with soft, then hard after a minute,
// and waits for it to exit.
func stopChild(cmd *exec.Cmd, exited chan struct{}, soft, hard syscall.Signal, what string) error {
	select {
	case <-exited:
		return nil
	default:
	}
	cmd.Process.Signal(soft)
	select {
	case <-exited:
		return nil
	case <-time.After(time.Minute):
		cmd.Process.Signal(hard)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		return fmt.Errorf("throwaway: %s did not shut down within a minute; stopped with %s", what, hard)
	}
}

// waitReady waits up to 60 s for ready to report true, failing early when
// the server exits (with the last lines of its log) or ctx ends.
func waitReady(ctx context.Context, exited chan struct{}, logFile, what string, ready func() bool) error {
	deadline := time.Now().Add(60 * time.Second)
	for !ready() {
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("throwaway: %s exited while starting: %s", what, lastLines(log, 5))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("throwaway: %s was not ready within 60 s: %s", what, lastLines(log, 5))
		}
	}
	return nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "; ")
}
