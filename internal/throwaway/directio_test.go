package throwaway_test

import (
	"context"
	"database/sql"
	"os/exec"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/throwaway"
	"github.com/jackc/pgx/v5"
)

// TestDirectFilesPostgres: with debug_io_direct = data, every data file the
// cluster holds open has O_DIRECT; without it, none does.
func TestDirectFilesPostgres(t *testing.T) {
	bin := testenv.PG18Bin(t)
	testenv.OwnTempDir(t)
	for _, tt := range []struct {
		name     string
		settings []string
		direct   bool
	}{
		{"buffered", nil, false},
		{"direct", []string{"debug_io_direct = data"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, err := throwaway.StartPostgres(ctx, throwaway.PostgresConfig{BinDir: bin, SharedBuffers: "1MB", Settings: tt.settings})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			conn, err := pgx.Connect(ctx, c.DSN())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g; SELECT count(*) FROM t"); err != nil {
				t.Fatal(err)
			}
			files, direct := throwaway.DirectFiles(c.DataDir())
			if files == 0 || (direct == files) != tt.direct || (direct == 0) == tt.direct {
				t.Errorf("DirectFiles = %d of %d open data files with O_DIRECT; want all %v", direct, files, tt.direct)
			}
		})
	}
}

// TestDirectFilesMariaDB: with innodb_flush_method = O_DIRECT every InnoDB
// tablespace the server holds open has O_DIRECT.
func TestDirectFilesMariaDB(t *testing.T) {
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err := exec.LookPath("/usr/sbin/mariadbd"); err != nil {
			if testenv.CI() {
				t.Fatal("mariadbd not installed under CI=true")
			}
			t.Skip("mariadbd not installed")
		}
	}
	testenv.OwnTempDir(t)
	m, err := throwaway.StartMariaDB(context.Background(), throwaway.MariaDBConfig{BufferPool: "6MB", Args: []string{"--innodb-flush-method=O_DIRECT"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	conn, err := mysql.NewConnector(m.Config())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var method string
	if err := db.QueryRow("SELECT @@innodb_flush_method").Scan(&method); err != nil || method != "O_DIRECT" {
		t.Fatalf("innodb_flush_method = %q, %v; want O_DIRECT", method, err)
	}
	if _, err := db.Exec("CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE d.t (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO d.t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	files, direct := throwaway.DirectFiles(m.DataDir())
	if files == 0 || direct != files {
		t.Errorf("DirectFiles = %d of %d open tablespaces with O_DIRECT; want all", direct, files)
	}
}
