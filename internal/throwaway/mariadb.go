package throwaway

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/idgenkit/idgen/internal/lazyre"
)

// DefaultBufferPool is the throwaway MariaDB server's
// innodb_buffer_pool_size when MariaDBConfig.BufferPool is empty.
const DefaultBufferPool = "128MB"

// mariadbPidFile is the server's PID file, in its directory.
const mariadbPidFile = "mariadbd.pid"

// MariaDBConfig configures StartMariaDB. Every zero value is usable.
type MariaDBConfig struct {
	// BufferPool is innodb_buffer_pool_size in PostgreSQL's units
	// ("128MB", "5MB"). Empty means DefaultBufferPool.
	BufferPool string
	// Args are more mariadbd options ("--innodb-flush-method=O_DIRECT"),
	// after the defaults, so that they win. Empty means none.
	Args []string
	// Keep leaves the stopped server's directory in place after Stop.
	Keep bool
}

// A MariaDB is a throwaway MariaDB server: a data directory and a Unix
// socket in a temporary directory (Prefix*), root with an empty password,
// no TCP listener, no option file read (--no-defaults: the machine's
// my.cnf and its port do not apply). mariadbd is a child of this process
// that the kernel kills if this process dies first.
type MariaDB struct {
	dir    string
	daemon string
	cmd    *exec.Cmd
	exited chan struct{}
	keep   bool
}

// findMariaDB returns the paths of mariadbd and mariadb-install-db: from
// PATH, else /usr/sbin and /usr/bin (Debian installs mariadbd in
// /usr/sbin, outside a user's PATH).
func findMariaDB() (daemon, install string, err error) {
	look := func(name string, dirs ...string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
		return ""
	}
	daemon = look("mariadbd", "/usr/sbin", "/usr/local/mysql/bin", "/usr/local/bin")
	install = look("mariadb-install-db", "/usr/bin", "/usr/local/mysql/scripts", "/usr/local/bin")
	if daemon == "" || install == "" {
		return "", "", fmt.Errorf("%w (mariadbd or mariadb-install-db not in PATH, /usr/sbin or /usr/bin); install them (Debian/Ubuntu: apt-get install mariadb-server; Fedora: dnf install mariadb-server; macOS: brew install mariadb), or give a running server's mysql:// DSN", ErrNoMariaDB)
	}
	return daemon, install, nil
}

// sizeRE is a size in PostgreSQL's units, which StartPostgres takes for
// shared buffers and Size turns into bytes.
var sizeRE = lazyre.MustCompile(`^([0-9]+)(kB|MB|GB|TB)?$`)

// Size turns a size in PostgreSQL's units ("128MB"; kB, MB, GB, TB are
// powers of 1024) into bytes; false when s is not one.
func Size(s string) (int64, bool) {
	m := sizeRE().FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, false
	}
	mult := map[string]int64{"": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[m[2]]
	if n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

// StartMariaDB creates and starts a throwaway MariaDB server with
// mariadb-install-db and mariadbd. Run as root, both run as the mysql user.
// Stop it when done. Missing binaries wrap ErrNoMariaDB.
func StartMariaDB(ctx context.Context, cfg MariaDBConfig) (*MariaDB, error) {
	daemon, install, err := findMariaDB()
	if err != nil {
		return nil, err
	}
	bp := cfg.BufferPool
	if bp == "" {
		bp = DefaultBufferPool
	}
	pool, ok := Size(bp)
	if !ok {
		return nil, fmt.Errorf("%w: buffer pool %q: want a size such as 128MB or 1GB", ErrBadConfig, bp)
	}
	m := &MariaDB{daemon: daemon, keep: cfg.Keep}
	uid, gid, asMySQL, err := serverUser("mysql", "the throwaway MariaDB server needs the mysql user")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if asMySQL {
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if m.dir, err = makeDir(Prefix+"mariadb-", uid, gid); err != nil {
		return nil, err
	}
	fail := func(err error) (*MariaDB, error) {
		m.stop()
		m.remove()
		return nil, err
	}
	args := []string{"--no-defaults", "--datadir=" + m.DataDir(), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve"}
	if asMySQL {
		args = append(args, "--user=mysql")
	}
	cmd := exec.CommandContext(ctx, install, args...)
	cmd.Dir = m.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("throwaway: mariadb-install-db: %w: %s", err, lastLines(out.Bytes(), 5)))
	}
	args = []string{"--no-defaults", "--datadir=" + m.DataDir(), "--socket=" + m.Socket(), "--skip-networking",
		"--pid-file=" + filepath.Join(m.dir, mariadbPidFile), "--log-error=" + m.logFile(),
		"--innodb-buffer-pool-size=" + strconv.FormatInt(pool, 10), "--max-connections=300",
		"--innodb-stats-persistent=ON", "--innodb-stats-auto-recalc=OFF", "--skip-name-resolve",
		"--innodb-flush-log-at-trx-commit=2", "--max-allowed-packet=64M"}
	args = append(args, cfg.Args...)
	// The server outlives ctx's cancellation only until Stop. It runs as
	// the mysql user from the start (not --user, whose setuid would clear
	// the parent-death signal), and dies with this process.
	m.cmd = exec.Command(daemon, args...)
	m.cmd.Dir = m.dir
	m.cmd.SysProcAttr = childAttr(cred, syscall.SIGKILL)
	if err := m.cmd.Start(); err != nil {
		return fail(fmt.Errorf("throwaway: starting mariadbd: %w", err))
	}
	m.exited = make(chan struct{})
	go func() { m.cmd.Wait(); close(m.exited) }() // owned by m: Stop waits for it
	db, err := m.open()
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(60 * time.Second); ; {
		err := db.PingContext(ctx)
		if err == nil {
			break
		}
		select {
		case <-m.exited:
			log, _ := os.ReadFile(m.logFile())
			return fail(fmt.Errorf("throwaway: mariadbd exited: %s", lastLines(log, 5)))
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(m.logFile())
			return fail(fmt.Errorf("throwaway: the MariaDB server did not answer within 60 s: %w: %s", err, lastLines(log, 5)))
		}
	}
	return m, nil
}

// Config returns the driver configuration of the server's socket, as root.
func (m *MariaDB) Config() *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "unix", m.Socket()
	c.Timeout = 10 * time.Second
	return c
}

func (m *MariaDB) open() (*sql.DB, error) {
	conn, err := mysql.NewConnector(m.Config())
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// Dir is the server's temporary directory.
func (m *MariaDB) Dir() string { return m.dir }

// DataDir is the server's data directory.
func (m *MariaDB) DataDir() string { return filepath.Join(m.dir, "data") }

// Socket is the path of the server's Unix socket.
func (m *MariaDB) Socket() string { return filepath.Join(m.dir, "mariadb.sock") }

func (m *MariaDB) logFile() string { return filepath.Join(m.dir, "mariadbd.log") }

// Stop shuts the server down (SIGTERM, its normal shutdown; killed after a
// minute) and removes its directory (unless Keep).
func (m *MariaDB) Stop() error {
	err := m.stop()
	if m.keep {
		os.Remove(filepath.Join(m.dir, ownerFile)) // kept: never stale
	} else if rerr := m.remove(); err == nil {
		err = rerr
	}
	return err
}

func (m *MariaDB) stop() error {
	if m.cmd == nil || m.cmd.Process == nil {
		return nil
	}
	return stopChild(m.cmd, m.exited, syscall.SIGTERM, syscall.SIGKILL, "the throwaway MariaDB server in "+m.dir)
}

func (m *MariaDB) remove() error {
	if m.dir == "" {
		return nil
	}
	return os.RemoveAll(m.dir)
}
