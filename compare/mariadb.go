package compare

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/idgenkit/idgen"
	storedsn "github.com/idgenkit/idgen/internal/dsn"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/internal/throwaway"
)

// Engines of Config.Engine.
const (
	// EngineMariaDB is MariaDB (or MySQL) with InnoDB.
	EngineMariaDB = "mariadb"
	// EngineAll runs EnginePostgres, then EngineMariaDB.
	EngineAll = "all"
)

// innodbRecordFixed is the bytes of an InnoDB leaf record of the run's
// table besides its key (ROW_FORMAT=DYNAMIC, every column NOT NULL): the
// 5-byte record header, DB_TRX_ID (6), DB_ROLL_PTR (7), created_at
// DATETIME(6) (8) and the payload BINARY(100).
const innodbRecordFixed = 5 + 6 + 7 + 8 + PayloadSize

// InnoDB monitor counters (information_schema.INNODB_METRICS) the run
// enables and reads.
var innodbMonitors = []string{"index_page_splits", "index_page_merge_attempts", "index_page_merge_successful"}

// resolveEngine fills Engine from the DSN's scheme and checks it.
func (cfg *Config) resolveEngine() error {
	mysqlDSN := strings.HasPrefix(strings.ToLower(cfg.DSN), "mysql://")
	switch cfg.Engine {
	case "":
		cfg.Engine = EnginePostgres
		if mysqlDSN {
			cfg.Engine = EngineMariaDB
		}
	case EnginePostgres, EngineMariaDB:
		if cfg.DSN != "" && mysqlDSN != (cfg.Engine == EngineMariaDB) {
			return fieldErr("Config.Engine", echo.Quote(cfg.Engine), "with a DSN of another engine: give a mysql:// DSN for mariadb, a PostgreSQL one for postgres")
		}
	case EngineAll:
		if cfg.DSN != "" {
			return fieldErr("Config.Engine", echo.Quote(cfg.Engine), "runs two throwaway servers; a DSN names one server: give postgres or mariadb with it")
		}
	default:
		return fieldErr("Config.Engine", echo.Quote(cfg.Engine), "want %s, %s or %s", EnginePostgres, EngineMariaDB, EngineAll)
	}
	if n, ok := throwaway.Size(cfg.BufferPool); cfg.BufferPool != "" && (!ok || n < MinBufferPool) {
		return fieldErr("Config.BufferPool", echo.Quote(cfg.BufferPool), "want at least 6MB (InnoDB's minimum with 16 kB pages)")
	}
	return nil
}

// MinBufferPool is the smallest innodb_buffer_pool_size InnoDB starts with
// 16 kB pages: 6 MiB.
const MinBufferPool = 6 << 20

// myEngine is the MariaDB/InnoDB engine: one meta connection for DDL and
// metrics, one per writer; the embedded harness gives the Config,
// Progress and notes.
type myEngine struct {
	*harness
	mcfg      *mysql.Config
	db        *sql.DB
	meta      *sql.Conn
	writers   []*sql.Conn
	database  string
	pageSize  int64
	payloadX  string // X'...': the payload as a hex literal
	monitors  bool   // INNODB_METRICS counters enabled
	enabled   []string
	noStats   bool // mysql.innodb_index_stats unreadable
	lsnStatus bool // Innodb_lsn_current exists
	// bufferPool is innodb_buffer_pool_size in bytes; 0 when unknown.
	bufferPool int64
}

var _ engine = (*myEngine)(nil)

func parseMySQLConfig(dsn string) (*mysql.Config, error) {
	c, err := storedsn.MySQL(dsn)
	if err != nil {
		return nil, dsnErr(err)
	}
	return c, nil
}

// runSeed returns seed, or a random seed when it is 0.
func runSeed(seed uint64) uint64 {
	if seed != 0 {
		return seed
	}
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])&MaxSeed | 1
}

// connect opens the meta and writer connections, reads the server's
// settings, enables the InnoDB monitors and creates the run's database.
func (h *myEngine) connect(ctx context.Context, rep *Report, sc *Scenario) error {
	h.payloadX = "X'" + hex.EncodeToString(h.payload) + "'"
	mcfg := h.mcfg.Clone()
	if mcfg.Timeout == 0 {
		mcfg.Timeout = 10 * time.Second
	}
	target := storedsn.MySQLTarget(mcfg)
	target.Engine = "MariaDB"
	conn, err := mysql.NewConnector(mcfg)
	if err != nil {
		return dsnErr(err)
	}
	h.db = sql.OpenDB(conn)
	h.db.SetMaxOpenConns(h.cfg.Writers + 1)
	h.db.SetMaxIdleConns(h.cfg.Writers + 1)
	if h.meta, err = h.db.Conn(ctx); err != nil {
		return fmt.Errorf("compare: %w", &storedsn.ConnectError{Target: target, Class: ErrConnectMariaDB, Err: err})
	}
	var version, comment, pool, flush string
	if err := h.meta.QueryRowContext(ctx, "SELECT @@version, @@version_comment, @@innodb_buffer_pool_size, @@innodb_page_size, @@innodb_flush_method").
		Scan(&version, &comment, &pool, &h.pageSize, &flush); err != nil {
		return fmt.Errorf("compare: %w", &storedsn.ConnectError{Target: target, Class: ErrConnectMariaDB, Err: err})
	}
	server := "MariaDB " + version + " (" + comment + "), InnoDB, page size " + strconv.FormatInt(h.pageSize, 10)
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		server = "MySQL " + version + " (" + comment + "), InnoDB, page size " + strconv.FormatInt(h.pageSize, 10)
	}
	rep.addServer(server, version)
	sc.ServerVersion = version
	if n, err := strconv.ParseInt(pool, 10, 64); err == nil {
		sc.Buffer = sizeSetting(n)
		sc.BufferBytes = n
		h.bufferPool = n
		if rep.BufferPool == "" {
			rep.BufferPool = sc.Buffer
		}
	}
	if sc.DataBytes > 0 && sc.BufferBytes > 0 {
		sc.MemoryRatio = float64(sc.DataBytes) / float64(sc.BufferBytes)
	}
	if strings.HasPrefix(strings.ToUpper(flush), "O_DIRECT") {
		sc.DirectIOSetting = "innodb_flush_method = " + flush
	}
	var ignored string
	h.lsnStatus = h.meta.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'").Scan(&ignored, &ignored) == nil
	h.enableMonitors(ctx)

	name, err := createUnique(h.cfg.Schema, "database", func(name string) (bool, error) {
		_, err := h.meta.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(name))
		var me *mysql.MySQLError
		return errors.As(err, &me) && me.Number == 1007, err // ER_DB_CREATE_EXISTS
	})
	if err != nil {
		return err
	}
	h.database = name
	rep.addSchema(name)
	if h.cfg.Keep && h.cfg.DSN != "" {
		h.note("tables kept in database %s; drop them with: DROP DATABASE %s", h.database, h.database)
	}
	if _, err := h.meta.ExecContext(ctx, "USE "+quoteIdent(name)); err != nil {
		return err
	}
	for range h.cfg.Writers {
		c, err := h.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("compare: %w", &storedsn.ConnectError{Target: target, Class: ErrConnectMariaDB, Err: err})
		}
		h.writers = append(h.writers, c)
		if _, err := c.ExecContext(ctx, "USE "+quoteIdent(name)); err != nil {
			return err
		}
	}
	return nil
}

// ErrConnectMariaDB reports a MariaDB or MySQL server that cannot be
// reached.
var ErrConnectMariaDB = errclass.Unavailable("compare: cannot connect to MariaDB")

// enableMonitors enables the InnoDB monitor counters that are off, and
// remembers them to disable them again at the end.
func (h *myEngine) enableMonitors(ctx context.Context) {
	for _, m := range innodbMonitors {
		var on int
		if err := h.meta.QueryRowContext(ctx, "SELECT enabled FROM information_schema.INNODB_METRICS WHERE name = ?", m).Scan(&on); err != nil {
			h.note("information_schema.INNODB_METRICS unreadable (%v): page splits and merges not measured", err)
			return
		}
		if on == 1 {
			continue
		}
		if _, err := h.meta.ExecContext(ctx, "SET GLOBAL innodb_monitor_enable = '"+m+"'"); err != nil {
			h.note("cannot enable the InnoDB monitor %s (%v; it needs SUPER or SYSTEM_VARIABLES_ADMIN): page splits and merges not measured", m, err)
			return
		}
		h.enabled = append(h.enabled, m)
	}
	h.monitors = true
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (h *myEngine) close() {
	h.dropDatabase()
	if h.meta == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, m := range h.enabled {
		h.meta.ExecContext(ctx, "SET GLOBAL innodb_monitor_disable = '"+m+"'")
	}
	for _, c := range append(h.writers, h.meta) {
		if c != nil {
			c.Close()
		}
	}
	if h.db != nil {
		h.db.Close()
	}
}

// dropDatabase drops the run's database, unless Keep.
func (h *myEngine) dropDatabase() {
	if h.cfg.Keep || h.database == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.meta.ExecContext(ctx, "DROP DATABASE "+quoteIdent(h.database)); err != nil {
		h.cfg.logger().Warn("dropping the run's database", "database", h.database, "err", err)
		h.prog.Note(fmt.Sprintf("dropping database %s: %v", h.database, err))
	}
}

// mysqlColumn is the key column of a plan on InnoDB: BIGINT, BINARY(16)
// for 128-bit keys, VARBINARY or an ASCII VARCHAR for the others.
func mysqlColumn(p *plan) string {
	switch p.column {
	case idgen.ColumnBigint:
		return "BIGINT"
	case idgen.ColumnUUID:
		return "BINARY(16)"
	case idgen.ColumnBytea:
		return fmt.Sprintf("VARBINARY(%d)", max(1, p.keyBytes-1))
	default:
		return fmt.Sprintf("VARCHAR(%d) CHARACTER SET ascii COLLATE ascii_bin", max(1, p.keyBytes-1))
	}
}

// createTable creates a table of the run's shape and returns its quoted
// name.
func (h *myEngine) createTable(ctx context.Context, name string, p *plan) (*table, error) {
	t := &table{name: name, quoted: quoteIdent(h.database) + "." + quoteIdent(name)}
	key := "id " + mysqlColumn(p) + " NOT NULL PRIMARY KEY"
	if p.scheme == nil && !p.series {
		key = "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"
	}
	if _, err := h.meta.ExecContext(ctx, "CREATE TABLE "+t.quoted+" ("+key+
		", created_at DATETIME(6) NOT NULL, payload BINARY(100) NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC STATS_PERSISTENT=1 STATS_AUTO_RECALC=0"); err != nil {
		return nil, err
	}
	return t, nil
}

func (h *myEngine) dropTable(ctx context.Context, t *table) error {
	_, err := h.meta.ExecContext(ctx, "DROP TABLE "+t.quoted)
	return err
}

// warmUp sends one batch per writer of each kind of row into a scratch
// table, so that the first row measured does not pay for the connections'
// first statements.
func (h *myEngine) warmUp(ctx context.Context, rows []*plan) error {
	n := min(h.cfg.Rows, h.cfg.Writers*h.cfg.Batch)
	for i, p := range rows[:3] {
		t, err := h.createTable(ctx, fmt.Sprintf("warmup%d", i), p)
		if err != nil {
			return fmt.Errorf("compare: warm-up: %w", err)
		}
		if _, err := h.load(ctx, p, t, 1, n, nil); err != nil {
			return fmt.Errorf("compare: warm-up: %w", err)
		}
		if err := h.dropTable(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// innodbCounters are the server-wide counters read before and after the
// measured phase.
type innodbCounters struct {
	lsn                 int64
	lsnOK               bool
	poolReads, poolReqs int64
	poolOK              bool
	splits, merges      int64
	monitorsOK          bool
	pagesRead, written  int64 // Innodb_pages_read, Innodb_pages_written
}

func (h *myEngine) readCounters(ctx context.Context) innodbCounters {
	var c innodbCounters
	if h.lsnStatus {
		var name string
		c.lsnOK = h.meta.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'").Scan(&name, &c.lsn) == nil
	} else {
		var typ, name, status string
		if err := h.meta.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err == nil {
			c.lsn, c.lsnOK = parseInnoDBLSN(status)
		}
	}
	if !c.lsnOK {
		h.noteOnce("lsn", "neither Innodb_lsn_current nor SHOW ENGINE INNODB STATUS gave the LSN: redo bytes not measured")
	}
	pool := h.readPool(ctx)
	c.poolReads, c.poolReqs, c.poolOK = pool.poolReads, pool.poolReqs, pool.poolOK
	c.pagesRead, c.written = pool.pagesRead, pool.written
	if h.monitors {
		err := h.meta.QueryRowContext(ctx, `SELECT
			SUM(IF(name = 'index_page_splits', count, 0)), SUM(IF(name = 'index_page_merge_successful', count, 0))
			FROM information_schema.INNODB_METRICS WHERE name IN ('index_page_splits', 'index_page_merge_successful')`).Scan(&c.splits, &c.merges)
		c.monitorsOK = err == nil
		if err != nil {
			h.noteOnce("monitors", "information_schema.INNODB_METRICS unreadable (%v): page splits and merges not measured", err)
		}
	}
	return c
}

// readPool reads the server's Innodb_buffer_pool_reads and
// Innodb_buffer_pool_read_requests into poolReads and poolReqs.
func (h *myEngine) readPool(ctx context.Context) innodbCounters {
	var c innodbCounters
	rows, err := h.meta.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_reads', 'Innodb_buffer_pool_read_requests', 'Innodb_pages_read', 'Innodb_pages_written')")
	if err == nil {
		n := 0
		for rows.Next() {
			var name string
			var v int64
			if rows.Scan(&name, &v) == nil {
				n++
				switch name {
				case "Innodb_buffer_pool_reads":
					c.poolReads = v
				case "Innodb_buffer_pool_read_requests":
					c.poolReqs = v
				case "Innodb_pages_read":
					c.pagesRead = v
				case "Innodb_pages_written":
					c.written = v
				}
			}
		}
		rows.Close()
		c.poolOK = n == 4
	}
	if !c.poolOK {
		h.noteOnce("poolreads", "Innodb_buffer_pool_reads unreadable (%v): buffer-pool reads not measured", err)
	}
	return c
}

// parseInnoDBLSN finds "Log sequence number N" in SHOW ENGINE INNODB
// STATUS.
func parseInnoDBLSN(status string) (int64, bool) {
	const label = "Log sequence number"
	_, rest, ok := strings.Cut(status, label)
	if !ok {
		return 0, false
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(f[0], 10, 64)
	return v, err == nil
}

// indexStats runs ANALYZE TABLE and reads the persistent statistics of
// the table's indexes: the clustered index's leaf pages and pages, and the
// pages of the secondary indexes.
func (h *myEngine) indexStats(ctx context.Context, name string) (leaf, primary, secondary int64, ok bool) {
	if h.noStats {
		return 0, 0, 0, false
	}
	table := quoteIdent(h.database) + "." + quoteIdent(name)
	rows, err := h.meta.QueryContext(ctx, "ANALYZE TABLE "+table+" PERSISTENT FOR ALL")
	if err == nil {
		rows.Close()
		rows, err = h.meta.QueryContext(ctx, `SELECT index_name, stat_name, stat_value FROM mysql.innodb_index_stats
			WHERE database_name = ? AND table_name = ? AND stat_name IN ('n_leaf_pages', 'size')`, h.database, name)
	}
	if err != nil {
		h.noStats = true
		h.note("ANALYZE TABLE or mysql.innodb_index_stats failed (%v): leaf pages, leaf fill and index sizes not measured", err)
		return 0, 0, 0, false
	}
	defer rows.Close()
	for rows.Next() {
		var index, stat string
		var v int64
		if err := rows.Scan(&index, &stat, &v); err != nil {
			return 0, 0, 0, false
		}
		switch {
		case index == "PRIMARY" && stat == "n_leaf_pages":
			leaf, ok = v, true
		case index == "PRIMARY" && stat == "size":
			primary = v
		case stat == "size":
			secondary += v
		}
	}
	return leaf, primary, secondary, ok && rows.Err() == nil
}

// dataBytes scans the table and sums the sizes of its leaf records: the
// fixed part (innodbRecordFixed) and the key, plus one length byte per
// record for a variable-length key (VARBINARY, VARCHAR).
func (h *myEngine) dataBytes(ctx context.Context, table string, p *plan) (int64, error) {
	var rows, keys int64
	switch p.column {
	case idgen.ColumnBytea, idgen.ColumnText:
		if err := h.meta.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(LENGTH(id)), 0) FROM "+table).Scan(&rows, &keys); err != nil {
			return 0, err
		}
		return rows*(innodbRecordFixed+1) + keys, nil
	}
	if err := h.meta.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&rows); err != nil {
		return 0, err
	}
	key := int64(8) // BIGINT
	if p.column == idgen.ColumnUUID {
		key = 16 // BINARY(16)
	}
	return rows * (innodbRecordFixed + key), nil
}

// result returns a MariaDB trial's Result before its figures.
func (h *myEngine) result(p *plan) Result {
	return h.newResult(p, rowShape{EngineMariaDB, mysqlColumn(p), "BIGINT AUTO_INCREMENT", "multi-row insert", "insert-select json_table"})
}

func (h *myEngine) before(ctx context.Context, t *table) (snapshot, error) {
	return h.readCounters(ctx), nil
}

func (h *myEngine) after(ctx context.Context, t *table, p *plan, b snapshot, res *Result) error {
	before, after := b.(innodbCounters), h.readCounters(ctx)
	if before.lsnOK && after.lsnOK {
		res.WALBytes = after.lsn - before.lsn
	}
	if before.poolOK && after.poolOK {
		res.BufferPoolReads = ptr(after.poolReads - before.poolReads)
		res.BufferPoolReadRequests = ptr(after.poolReqs - before.poolReqs)
		res.DeviceReads = ptr(after.pagesRead - before.pagesRead)
		res.DeviceWrites = ptr(after.written - before.written)
	}
	if before.monitorsOK && after.monitorsOK {
		res.PageSplits = ptr(after.splits - before.splits)
		res.PageMerges = ptr(after.merges - before.merges)
	}
	if leaf, primary, secondary, ok := h.indexStats(ctx, t.name); ok {
		res.IndexBytes = primary * h.pageSize
		res.SecondaryIndexBytes = ptr(secondary * h.pageSize)
		res.TableBytes = (primary + secondary) * h.pageSize
		res.LeafPages = ptr(leaf)
		data, err := h.dataBytes(ctx, t.quoted, p)
		if err != nil {
			return fmt.Errorf("scanning the table: %w", err)
		}
		if leaf > 0 {
			res.AvgLeafDensity = ptr(100 * float64(data) / float64(leaf*h.pageSize))
			res.LeafFillSource = "full scan: record sizes over n_leaf_pages"
		}
	}
	if h.bufferPool > 0 && res.IndexBytes > 0 {
		res.IndexFitsCache = ptr(res.IndexBytes <= h.bufferPool)
	}
	return nil
}

func (h *myEngine) target(ctx context.Context, t *table, p *plan) (readTarget, error) {
	return h.mysqlTarget(ctx, t.quoted, p)
}

// unavailableMariaDB names the nil metrics of a MariaDB Result; the
// PostgreSQL-only ones (fragmentation, WAL records, FPI, idx_blks_*) are
// not InnoDB's and are not listed.
func unavailableMariaDB(r *Result) []string {
	return missing([]metric{
		{"leaf_pages", r.LeafPages == nil},
		{"avg_leaf_density", r.AvgLeafDensity == nil},
		{"page_splits", r.PageSplits == nil},
		{"page_merges", r.PageMerges == nil},
		{"buffer_pool_reads", r.BufferPoolReads == nil},
	})
}

// load inserts n rows into table with every writer and returns the
// timings, as harness.load does for PostgreSQL.
func (h *myEngine) load(ctx context.Context, p *plan, t *table, first int64, n int, onRows func(int)) (phaseResult, error) {
	return fanOut(ctx, p, writersOf(p, len(h.writers)), first, n, onRows, func(ctx context.Context, w int, gen idgen.Generator, bs batches, rec *recorder) ([]float64, error) {
		return h.writer(ctx, h.writers[w], p, gen, t.quoted, bs, rec)
	})
}

// writer claims batches until n rows are claimed, sends each as one
// statement (a multi-row INSERT; for the Reference an INSERT ... SELECT
// from the sequence engine's seq_<lo>_to_<hi>; for ClientSeries the same
// INSERT ... SELECT from JSON_TABLE over the keys the client writes out),
// autocommitted, and returns its statement latencies in ms.
func (h *myEngine) writer(ctx context.Context, conn *sql.Conn, p *plan, gen idgen.Generator, table string, bs batches, rec *recorder) ([]float64, error) {
	var lats []float64
	ids := make([]idgen.ID, h.cfg.Batch)
	var buf, key []byte
	for ctx.Err() == nil {
		first, cnt := bs.claim(h.cfg.Batch)
		if cnt == 0 {
			break
		}
		ts := "'" + time.Now().UTC().Format("2006-01-02 15:04:05.000000") + "'"
		buf = buf[:0]
		switch {
		case p.server:
			buf = fmt.Appendf(buf, "INSERT INTO %s (id, created_at, payload) SELECT seq, %s, %s FROM seq_%d_to_%d",
				table, ts, h.payloadX, first, first+int64(cnt)-1)
		case p.series && h.cfg.Batch > 1:
			// The harness half of the check in the Reference's shape: the
			// same INSERT ... SELECT, over keys the client writes out.
			buf = fmt.Appendf(buf, "INSERT INTO %s (id, created_at, payload) SELECT k, %s, %s FROM JSON_TABLE('[", table, ts, h.payloadX)
			for i := range int64(cnt) {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = strconv.AppendInt(buf, first+i, 10)
			}
			buf = append(buf, "]', '$[*]' COLUMNS (k BIGINT PATH '$')) AS jt"...)
		case gen == nil && !p.series:
			buf = append(buf, "INSERT INTO "+table+" (created_at, payload) VALUES "...)
			for i := range cnt {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, "("+ts+","+h.payloadX+")"...)
			}
		default:
			if gen != nil {
				if err := h.issue(ctx, p, gen, ids[:cnt], first); err != nil {
					return lats, err
				}
			}
			buf = append(buf, "INSERT INTO "+table+" (id, created_at, payload) VALUES "...)
			for i := range cnt {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, '(')
				switch {
				case p.series:
					buf = strconv.AppendInt(buf, first+int64(i), 10)
				default:
					var err error
					if key, err = storeKey(key[:0], ids[i], p); err != nil {
						return lats, fmt.Errorf("%s: %w", p.label, err)
					}
					h.sample.keep(first-1+int64(i), key)
					if p.column == idgen.ColumnBigint {
						buf = strconv.AppendInt(buf, int64(binary.BigEndian.Uint64(key)), 10)
					} else {
						buf = append(buf, "X'"...)
						buf = hex.AppendEncode(buf, key)
						buf = append(buf, '\'')
					}
				}
				buf = append(buf, ","+ts+","+h.payloadX+")"...)
			}
		}
		t0 := time.Now()
		_, err := conn.ExecContext(ctx, string(buf))
		lat := time.Since(t0)
		if err != nil {
			if ctx.Err() != nil {
				return lats, context.Cause(ctx)
			}
			return lats, mysqlInsertError(p, err)
		}
		lats = append(lats, float64(lat)/float64(time.Millisecond))
		rec.done(cnt)
	}
	return lats, context.Cause(ctx)
}

// mysqlInsertError explains a failed insert; a duplicate key means the
// strategy issued the same ID twice.
func mysqlInsertError(p *plan, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1062 { // ER_DUP_ENTRY
		hint := ""
		if p.workerKey == "" && len(p.gens) > 1 {
			hint = " (its writers have no worker key to tell them apart)"
		}
		return fmt.Errorf("%s issued a duplicate ID%s: %w", p.label, hint, err)
	}
	return fmt.Errorf("%s: insert: %w", p.label, err)
}

// sizeSetting writes bytes as a server size setting: "128MB", or in kB
// when it is not a whole number of MB.
func sizeSetting(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + "MB"
	}
	return strconv.FormatInt(n>>10, 10) + "kB"
}
