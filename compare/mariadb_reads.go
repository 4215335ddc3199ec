package compare

import (
	"context"
	"database/sql"
	"encoding/binary"

	"github.com/idgenkit/idgen"
)

// mysqlTarget reads an InnoDB table back on one connection (the first
// writer's), with prepared statements. The clustered index holds the rows,
// so a read's pages are all the index's: indexMisses are the misses.
// Innodb_buffer_pool_reads is server-wide: on a shared server (--dsn) other
// sessions' reads count too.
type mysqlTarget struct {
	h          *myEngine
	column     string // the plan's key column (idgen.Column*)
	lookupStmt *sql.Stmt
	scanStmt   *sql.Stmt
}

func (h *myEngine) mysqlTarget(ctx context.Context, table string, p *plan) (readTarget, error) {
	c := h.writers[0]
	lookup, err := c.PrepareContext(ctx, "SELECT id, created_at, payload FROM "+table+" WHERE id = ?")
	if err != nil {
		return nil, err
	}
	scan, err := c.PrepareContext(ctx, "SELECT id, created_at, payload FROM "+table+" WHERE id >= ? ORDER BY id LIMIT ?")
	if err != nil {
		lookup.Close()
		return nil, err
	}
	column := p.column
	if p.scheme == nil {
		column = idgen.ColumnBigint // the Baseline's AUTO_INCREMENT
	}
	return &mysqlTarget{h: h, column: column, lookupStmt: lookup, scanStmt: scan}, nil
}

// arg is key (the key column's bytes, as storeKey gives them) as the
// statements' parameter: an integer for BIGINT, a string for VARCHAR,
// bytes for BINARY and VARBINARY.
func (t *mysqlTarget) arg(key []byte) any {
	switch t.column {
	case idgen.ColumnBigint:
		return int64(binary.BigEndian.Uint64(key))
	case idgen.ColumnText:
		return string(key)
	}
	return key
}

func (t *mysqlTarget) rows(ctx context.Context, stmt *sql.Stmt, args ...any) (int, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

func (t *mysqlTarget) lookup(ctx context.Context, key []byte) (bool, error) {
	n, err := t.rows(ctx, t.lookupStmt, t.arg(key))
	return n == 1, err
}

func (t *mysqlTarget) scan(ctx context.Context, key []byte, n int) (int, error) {
	return t.rows(ctx, t.scanStmt, t.arg(key), n)
}

// blocks returns Innodb_buffer_pool_reads (pages read from disk) and
// Innodb_buffer_pool_read_requests (pages asked of the buffer pool) less
// those reads.
func (t *mysqlTarget) blocks(ctx context.Context) (misses, indexMisses, hits int64, ok bool) {
	c := t.h.readPool(ctx)
	if !c.poolOK {
		return 0, 0, 0, false
	}
	return c.poolReads, c.poolReads, c.poolReqs - c.poolReads, true
}

func (t *mysqlTarget) close() {
	t.lookupStmt.Close()
	t.scanStmt.Close()
}
