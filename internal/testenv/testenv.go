// Package testenv finds the real servers tests run against: PostgreSQL,
// MariaDB and Redis on this machine. A test that needs a server it cannot
// reach fails when CI=true and skips otherwise (a developer's laptop).
package testenv

import (
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/throwaway"
)

// Defaults, overridable by the environment variables of the same name.
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultMySQLDSN    = "mysql://root@127.0.0.1:3306/test"
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
)

// CI reports whether tests run under CI (CI=true), where a missing server
// is a failure, not a skip.
func CI() bool { return os.Getenv("CI") == "true" }

// need fails (CI) or skips the test when addr does not accept a connection.
func need(t testing.TB, what, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return
	}
	if CI() {
		t.Fatalf("%s at %s unreachable under CI=true: %v", what, addr, err)
	}
	t.Skipf("%s at %s unreachable: %v", what, addr, err)
}

// Binary returns the path of the program name on PATH; without it the test
// fails under CI=true and skips otherwise, naming pkg, the package that
// has it.
func Binary(t testing.TB, name, pkg string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin
	}
	if CI() {
		t.Fatalf("%s missing under CI=true (apt-get install %s): %v", name, pkg, err)
	}
	t.Skipf("%s missing (apt-get install %s): %v", name, pkg, err)
	return ""
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// PostgresDSN returns the DSN of the test PostgreSQL (IDGEN_TEST_POSTGRES).
func PostgresDSN(t testing.TB) string {
	t.Helper()
	need(t, "PostgreSQL", "127.0.0.1:5432")
	return env("IDGEN_TEST_POSTGRES", DefaultPostgresDSN)
}

// MySQLDSN returns the mysql:// URL of the test MariaDB (IDGEN_TEST_MYSQL).
func MySQLDSN(t testing.TB) string {
	t.Helper()
	need(t, "MariaDB", "127.0.0.1:3306")
	return env("IDGEN_TEST_MYSQL", DefaultMySQLDSN)
}

// RedisURL returns the redis:// URL of the test Redis (IDGEN_TEST_REDIS).
func RedisURL(t testing.TB) string {
	t.Helper()
	need(t, "Redis", "127.0.0.1:6379")
	return env("IDGEN_TEST_REDIS", DefaultRedisURL)
}

// PG18Bin returns the directory of the PostgreSQL 18 server binaries
// (IDGEN_TEST_PG18_BIN; .ci/pg18.sh installs them and CI sets it), for
// tests that start a throwaway PostgreSQL 18 cluster
// (internal/throwaway.StartPostgres with BinDir). Unset, the test fails
// under CI=true and skips otherwise.
func PG18Bin(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("IDGEN_TEST_PG18_BIN")
	if dir == "" {
		if CI() {
			t.Fatal("IDGEN_TEST_PG18_BIN unset under CI=true: bash .ci/pg18.sh installs PostgreSQL 18 and prints the directory")
		}
		t.Skip("IDGEN_TEST_PG18_BIN unset: bash .ci/pg18.sh installs PostgreSQL 18 and prints the directory")
	}
	return dir
}

// PostgresBin returns the directory of the newest PostgreSQL server
// binaries found (throwaway.FindPostgres), for tests that start a
// throwaway cluster. None found, the test fails under CI=true and skips
// otherwise.
func PostgresBin(t testing.TB) string {
	t.Helper()
	bin, err := throwaway.FindPostgres()
	if err != nil {
		if CI() {
			t.Fatalf("no PostgreSQL server binaries under CI=true: %v", err)
		}
		t.Skipf("no PostgreSQL server binaries: %v", err)
	}
	return bin
}

// OwnTempDir points TMPDIR at a new directory of the test's own (open to
// the postgres and mysql users a throwaway server runs as, like /tmp:
// mariadb-install-db writes its own temporary files there), removed at
// the end, so that other tests' throwaway servers are neither seen nor
// removed; it returns the directory. A parallel test, which may not set
// the environment, gives a child process the directory of OpenTempDir
// as its TMPDIR instead.
func OwnTempDir(t testing.TB) string {
	t.Helper()
	tmp := OpenTempDir(t)
	t.Setenv("TMPDIR", tmp)
	return tmp
}

// OpenTempDir returns a new directory of the test's own, open to every
// user as /tmp is (mode 1777), removed at the end; it leaves TMPDIR alone.
func OpenTempDir(t testing.TB) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "idgen-test-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	return tmp
}
