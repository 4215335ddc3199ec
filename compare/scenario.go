package compare

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/idgenkit/idgen/internal/stats"
	"github.com/idgenkit/idgen/internal/throwaway"
)

// Scenarios of Config.Scenarios.
const (
	// ScenarioInMemory runs with the configured buffer (SharedBuffers,
	// BufferPool), which holds all the data at the default sizes.
	ScenarioInMemory = "in-memory"
	// ScenarioOutOfMemory runs every row with one buffer sized so that the
	// Baseline's final table and index are MemoryRatio times the buffer,
	// and misses going to the device: debug_io_direct = data on
	// PostgreSQL 16 or later, innodb_flush_method = O_DIRECT on InnoDB, on
	// the throwaway servers. The run checks that direct I/O took effect.
	ScenarioOutOfMemory = "out-of-memory"
)

// smallBufferPool is the out-of-memory buffer pool below which InnoDB's
// own working set (internal pages, undo, the change buffer) misses too, so
// that the scale model overstates device reads (TestScaleModel: 200,000
// rows with 6MB against 1,600,000 with 55MB).
const smallBufferPool = 32 << 20

// DefaultMemoryRatio is Config.MemoryRatio's default: the out-of-memory
// scenario's data is 8 times its buffer.
const DefaultMemoryRatio = 8

// MaxMemoryRatio is the largest Config.MemoryRatio.
const MaxMemoryRatio = 1000

// Estimated bytes of the Baseline's table and index per row, when the
// in-memory scenario has not measured them: on PostgreSQL a 148-byte heap
// tuple and line pointer, 55 to a page (149 B), and a bigint index entry at
// 90 % (22 B); on InnoDB a 134-byte record at 15/16 of a 16 kB page.
const (
	pgBytesPerRow     = 171
	innodbBytesPerRow = 146
)

// A Scenario is one engine and buffer a run measured every row on, for
// results.json's meta and the report.
type Scenario struct {
	Engine string `json:"engine"`
	// Name is ScenarioInMemory or ScenarioOutOfMemory; empty on a
	// server given by DSN, whose settings apply.
	Name string `json:"name,omitempty"`
	// Buffer is the server's cache setting: shared_buffers or
	// innodb_buffer_pool_size, as the server reports it; BufferBytes the
	// same in bytes (0 when unknown).
	Buffer      string `json:"buffer"`
	BufferBytes int64  `json:"buffer_bytes"`
	// DataBytes is the Baseline's table and index the out-of-memory
	// buffer was sized from (measured in memory, or estimated), and
	// MemoryRatio DataBytes over BufferBytes; zero in memory.
	DataBytes   int64   `json:"data_bytes,omitempty"`
	MemoryRatio float64 `json:"memory_ratio,omitempty"`
	// DirectIO reports that misses in the buffer go to the device, not to
	// the OS page cache: the setting (DirectIOSetting) is on and, on a
	// throwaway server, the server's open data files were checked for
	// O_DIRECT (DirectIOCheck says how).
	DirectIO        bool   `json:"direct_io"`
	DirectIOSetting string `json:"direct_io_setting"`
	DirectIOCheck   string `json:"direct_io_check,omitempty"`
	// OSCache says whether misses in the buffer can be served from the OS
	// page cache, and what that means for the figures.
	OSCache string `json:"os_cache"`
	// ServerVersion is the server's version; IOMethod PostgreSQL 18's
	// io_method (worker, io_uring, sync), empty before 18.
	ServerVersion string `json:"server_version"`
	IOMethod      string `json:"io_method,omitempty"`

	major    int    // PostgreSQL's major version; 0 on MariaDB
	dataDir  string // the throwaway server's, for the O_DIRECT check
	serverPK map[string]bool
}

// label names the scenario in progress lines: "postgres in-memory".
func (sc *Scenario) label() string {
	if sc.Name == "" {
		return sc.Engine
	}
	return sc.Engine + " " + sc.Name
}

// engines returns the engines of the run, in order.
func (cfg Config) engines() []string {
	if cfg.Engine == EngineAll {
		return []string{EnginePostgres, EngineMariaDB}
	}
	return []string{cfg.Engine}
}

// scenarios returns the scenarios of the run, in order: in memory first,
// whose Baseline sizes the out-of-memory buffer. A DSN has one: the
// server's ("").
func (cfg Config) scenarios() []string {
	if cfg.DSN != "" {
		return []string{""}
	}
	var out []string
	for _, s := range []string{ScenarioInMemory, ScenarioOutOfMemory} {
		for _, want := range cfg.Scenarios {
			if want == s {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// outOfMemoryBuffer returns the buffer of the out-of-memory scenario on
// eng, in bytes, and the data size it was computed from: the median of
// the Baseline's table and index (on InnoDB, the table: its clustered and
// secondary indexes) over its in-memory trials, or an estimate from the
// rows.
func (h *harness) outOfMemoryBuffer(rep *Report, eng string) (buffer, data int64, measured bool) {
	var sizes []float64
	for _, ts := range rep.Trials {
		for _, t := range ts {
			if t.Engine == eng && t.Scenario == ScenarioInMemory && t.Strategy == Baseline {
				size := t.TableBytes + t.IndexBytes
				if eng == EngineMariaDB {
					size = t.TableBytes // an InnoDB table is its indexes: TableBytes holds IndexBytes
				}
				sizes = append(sizes, float64(size))
			}
		}
	}
	rows := int64(h.cfg.Preload + h.cfg.Rows)
	if len(sizes) > 0 {
		data, measured = int64(stats.Median(sizes)), true
	} else if eng == EngineMariaDB {
		data = rows * innodbBytesPerRow
	} else {
		data = rows * pgBytesPerRow
	}
	buffer = int64(float64(data) / h.cfg.MemoryRatio)
	return buffer, data, measured
}

// kB writes bytes as a server size setting in kB, at least min.
func kB(bytes, min int64) string {
	return strconv.FormatInt(max(bytes, min)>>10, 10) + "kB"
}

// startPostgres starts the throwaway cluster of sc (unless DSN), with the
// scenario's buffer and I/O, and returns the engine on it and the function
// that stops it.
func (h *harness) startPostgres(ctx context.Context, rep *Report, sc *Scenario, rows []*plan) (engine, func(), error) {
	e := &pgEngine{harness: h}
	if h.cfg.DSN != "" {
		pgcfg, err := parsePGConfig(h.cfg.DSN)
		if err != nil {
			return nil, nil, err
		}
		e.pgcfg = pgcfg
		return e, func() {}, nil
	}
	bin := h.cfg.PGBin
	if bin == "" {
		var err error
		if bin, err = throwaway.FindPostgres(); err != nil {
			return nil, nil, err
		}
	}
	major := throwaway.PostgresVersion(bin)
	sb, setting := h.cfg.SharedBuffers, "shared_buffers="+h.cfg.SharedBuffers
	var settings []string
	if sc.Name == ScenarioOutOfMemory {
		buf, data, measured := h.outOfMemoryBuffer(rep, EnginePostgres)
		sb = kB(buf, 128<<10) // PostgreSQL's least: 16 buffers
		sc.DataBytes = data
		setting = fmt.Sprintf("shared_buffers=%s, 1/%g of the baseline's %s table and index", sb, h.cfg.MemoryRatio, sizeWords(data, measured))
		if major >= 16 {
			settings = append(settings, "debug_io_direct = data")
			setting += ", debug_io_direct=data"
		}
	}
	cl, stop, err := startThrowaway(h.cfg, "PostgreSQL "+strconv.Itoa(major)+" cluster", setting, func() (*throwaway.Postgres, error) {
		return throwaway.StartPostgres(ctx, throwaway.PostgresConfig{BinDir: bin, SharedBuffers: sb, Settings: settings, Keep: h.cfg.Keep})
	})
	if err != nil {
		return nil, nil, err
	}
	if h.cfg.Keep {
		h.note("cluster kept in %s; start it with: %s; connect with: psql -h %s -U postgres (%s)",
			cl.Dir(), cl.StartCommand(), cl.Dir(), sc.label())
	}
	rep.Throwaway = true
	sc.dataDir = cl.DataDir()
	pgcfg, err := parsePGConfig(cl.DSN())
	if err != nil {
		stop()
		return nil, nil, err
	}
	e.pgcfg = pgcfg
	return e, stop, nil
}

// startMariaDB starts the throwaway MariaDB server of sc (unless DSN).
func (h *harness) startMariaDB(ctx context.Context, rep *Report, sc *Scenario) (engine, func(), error) {
	e := &myEngine{harness: h}
	if h.cfg.DSN != "" {
		mcfg, err := parseMySQLConfig(h.cfg.DSN)
		if err != nil {
			return nil, nil, err
		}
		e.mcfg = mcfg
		return e, func() {}, nil
	}
	pool, setting := h.cfg.BufferPool, "innodb_buffer_pool_size="+h.cfg.BufferPool
	var args []string
	if sc.Name == ScenarioOutOfMemory {
		buf, data, measured := h.outOfMemoryBuffer(rep, EngineMariaDB)
		pool = kB(buf, MinBufferPool)
		sc.DataBytes = data
		setting = fmt.Sprintf("innodb_buffer_pool_size=%s, 1/%g of the baseline's %s clustered index", pool, h.cfg.MemoryRatio, sizeWords(data, measured))
		if buf < MinBufferPool {
			setting = fmt.Sprintf("innodb_buffer_pool_size=%s (InnoDB's least), 1/%.1f of the baseline's %s clustered index", pool,
				float64(data)/MinBufferPool, sizeWords(data, measured))
			h.note("%s: InnoDB's buffer pool cannot be below 6MB: the baseline's %.1f MB are %.1f× the buffer, not %g×; %s %d or more gives %g×",
				sc.label(), float64(data)/(1<<20), float64(data)/MinBufferPool, h.cfg.MemoryRatio, h.cfg.name("Config.Rows"),
				int64(math.Ceil(h.cfg.MemoryRatio*MinBufferPool/innodbBytesPerRow))-int64(h.cfg.Preload), h.cfg.MemoryRatio)
		}
		if buf < smallBufferPool {
			h.note("%s: a buffer pool under 32MB keeps too few of InnoDB's own pages (internal B-tree pages, undo, the change buffer): in-order keys read about 7 pages per 1,000 inserts at 6MB that a 55MB pool keeps (TestScaleModel), and random keys' device reads come out about 30 %% high; their insert ratios hold. %s %d or more sizes the pool above 32MB",
				sc.label(), h.cfg.name("Config.Rows"), int64(math.Ceil(h.cfg.MemoryRatio*smallBufferPool/innodbBytesPerRow))-int64(h.cfg.Preload))
		}
		args = append(args, "--innodb-flush-method=O_DIRECT")
		setting += ", innodb_flush_method=O_DIRECT"
	}
	srv, stop, err := startThrowaway(h.cfg, "MariaDB server", setting, func() (*throwaway.MariaDB, error) {
		return throwaway.StartMariaDB(ctx, throwaway.MariaDBConfig{BufferPool: pool, Args: args, Keep: h.cfg.Keep})
	})
	if err != nil {
		return nil, nil, err
	}
	if h.cfg.Keep {
		h.note("MariaDB data directory kept in %s (stopped; %s)", srv.Dir(), sc.label())
	}
	rep.Throwaway = true
	sc.dataDir = srv.DataDir()
	e.mcfg = srv.Config()
	return e, stop, nil
}

func sizeWords(bytes int64, measured bool) string {
	if measured {
		return fmt.Sprintf("%.1f MB", float64(bytes)/(1<<20))
	}
	return fmt.Sprintf("~%.1f MB (estimated)", float64(bytes)/(1<<20))
}

// checkDirectIO checks, on a throwaway server, that the server's open data
// files carry O_DIRECT when the scenario asks for it, and says whether
// misses can be served from the OS page cache.
func (h *harness) checkDirectIO(sc *Scenario) {
	osCache := "misses in the buffer can be served from the OS page cache: on a machine with free memory, a table larger than the buffer but smaller than the memory costs memory reads, not device reads, and its insert and read ratios understate what a table larger than the memory costs"
	if sc.DirectIOSetting == "" {
		sc.OSCache = osCache
		if sc.Name == ScenarioOutOfMemory {
			h.note("%s: no direct I/O on PostgreSQL %d (debug_io_direct needs 16 or later): %s", sc.label(), sc.major, osCache)
		}
		return
	}
	if sc.dataDir == "" { // a server given by DSN: its setting is all we know
		sc.DirectIO = true
		sc.OSCache = "no: " + sc.DirectIOSetting + ": misses go to the device"
		return
	}
	files, direct := throwaway.DirectFiles(sc.dataDir)
	sc.DirectIOCheck = fmt.Sprintf("%d of %d open data files of the server have O_DIRECT", direct, files)
	sc.DirectIO = files > 0 && direct == files
	if sc.DirectIO {
		sc.OSCache = "no: " + sc.DirectIOSetting + " (" + sc.DirectIOCheck + "): misses go to the device"
		return
	}
	sc.OSCache = osCache
	h.note("%s: %s did not take effect (%s): %s", sc.label(), sc.DirectIOSetting, sc.DirectIOCheck, osCache)
}
