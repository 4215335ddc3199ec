package compare

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/internal/stats"
)

// A ConfigRecord is the run's Config as resolved, for results.json: every
// flag of the command, with any password in the DSN replaced by "xxxxx".
type ConfigRecord struct {
	Strategies    []string `json:"strategies"` // without the Baseline, which always runs
	Rows          int      `json:"rows"`
	Writers       int      `json:"writers"`
	Batch         int      `json:"batch"`
	Preload       int      `json:"preload"`
	Runs          int      `json:"runs"`
	Seed          uint64   `json:"seed"` // as given; 0 means random (Meta.Seed is the one used)
	DSN           string   `json:"dsn,omitempty"`
	Schema        string   `json:"schema,omitempty"`
	Keep          bool     `json:"keep"`
	SharedBuffers string   `json:"shared_buffers,omitempty"`
	Engine        string   `json:"engine"`
	BufferPool    string   `json:"buffer_pool,omitempty"`
	Span          string   `json:"span,omitempty"` // Config.Span; empty in real time
	Reads         bool     `json:"reads"`
	ReadOps       int      `json:"read_ops"`
	ReadTimeSec   float64  `json:"read_time_sec"`
	PGBin         string   `json:"pg_bin,omitempty"`
	Scenarios     []string `json:"scenarios,omitempty"`
	MemoryRatio   float64  `json:"memory_ratio,omitempty"`
}

func (cfg Config) record() ConfigRecord {
	return ConfigRecord{Strategies: redact.Specs(cfg.Strategies), Rows: cfg.Rows, Writers: cfg.Writers, Batch: cfg.Batch,
		Preload: cfg.Preload, Runs: cfg.Runs, Seed: cfg.Seed, DSN: redact.Spec(cfg.DSN), Schema: cfg.Schema,
		Keep: cfg.Keep, SharedBuffers: cfg.SharedBuffers, Engine: cfg.Engine, BufferPool: cfg.BufferPool,
		PGBin: cfg.PGBin, Scenarios: cfg.Scenarios, MemoryRatio: cfg.MemoryRatio}
}

// A Machine describes where the run ran.
type Machine struct {
	Cores       int    `json:"cores"`        // runtime.NumCPU
	MemoryBytes int64  `json:"memory_bytes"` // MemTotal of /proc/meminfo; 0 when unknown
	OS          string `json:"os"`           // PRETTY_NAME of /etc/os-release, or GOOS
	Kernel      string `json:"kernel,omitempty"`
	Arch        string `json:"arch"`
}

// ThisMachine returns the Machine the process runs on.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					m.MemoryBytes = kb << 10
				}
			}
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
				m.OS = runtime.GOOS + " (" + strings.Trim(v, `"`) + ")"
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// A Build identifies the idgen that ran.
type Build struct {
	Version string `json:"version"` // the module version, "(devel)" for a local build
	// Commit is the git revision the binary was built from, "unknown" when
	// neither the build nor the source tree tells.
	Commit string `json:"commit"`
	// Modified reports uncommitted changes in that tree; null when unknown.
	Modified *bool `json:"modified"`
	// CommitFrom says where Commit comes from: "vcs stamp" (go build in a
	// git work tree), "git work tree" (go run and go test binaries carry no
	// stamp: git is asked in the tree the source was compiled from), or
	// "unknown".
	CommitFrom string `json:"commit_from"`
	GoVersion  string `json:"go_version"`
}

// ThisBuild returns the Build of the running binary: the VCS stamp of its
// build info; without one, what git says of the work tree its source was
// compiled from, when that tree is still there.
func ThisBuild() Build {
	return buildOf(debug.ReadBuildInfo())
}

func buildOf(info *debug.BuildInfo, ok bool) Build {
	b := Build{Version: "unknown", Commit: Unknown, CommitFrom: Unknown, GoVersion: runtime.Version()}
	if ok {
		b.Version = info.Main.Version
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit, b.CommitFrom = s.Value, "vcs stamp"
			case "vcs.modified":
				b.Modified = ptr(s.Value == "true")
			}
		}
	}
	if b.CommitFrom == Unknown {
		if commit, modified, ok := gitTree(); ok {
			b.Commit, b.Modified, b.CommitFrom = commit, &modified, "git work tree"
		}
	}
	return b
}

// Unknown is what Build says of what it cannot know.
const Unknown = "unknown"

// gitTree asks git for the commit and the state of the work tree that
// holds this file's source, if the binary recorded its path (not built
// with -trimpath) and the tree is still there.
func gitTree() (commit string, modified bool, ok bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", false, false
	}
	dir := filepath.Dir(file)
	if _, err := os.Stat(dir); err != nil {
		return "", false, false
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	commit = strings.TrimSpace(string(out))
	st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return "", false, false
	}
	return commit, len(strings.TrimSpace(string(st))) > 0, true
}

// Meta is the "meta" object of results.json: what ran, where, how, and the
// harness check's verdict.
type Meta struct {
	Tool          string        `json:"tool"` // "idgen compare"
	Build         Build         `json:"idgen"`
	Engine        string        `json:"engine"`
	Server        string        `json:"server"`                // version()
	ServerVersion string        `json:"server_version"`        // server_version
	SharedBuffers string        `json:"shared_buffers"`        // the server's setting
	BufferPool    string        `json:"buffer_pool,omitempty"` // innodb_buffer_pool_size (engine "mariadb" or "all")
	Throwaway     bool          `json:"throwaway"`
	Schema        string        `json:"schema"`
	Config        ConfigRecord  `json:"config"`
	Machine       Machine       `json:"machine"`
	Started       time.Time     `json:"started"`
	DurationSec   float64       `json:"duration_s"`
	Seed          uint64        `json:"seed"`
	StatsMethod   string        `json:"stats_method"`
	Resamples     int           `json:"resamples"`
	Confidence    float64       `json:"confidence"`
	Harness       *HarnessCheck `json:"harness_check"`
	// Scenarios are the engines and buffers the rows ran in: each with
	// its server version, buffer, direct I/O and io_method.
	Scenarios []Scenario `json:"scenarios"`
	Warnings  []string   `json:"warnings"`
	Notes     []string   `json:"notes"`
}

// Meta returns the report's Meta.
func (r *Report) Meta() Meta {
	return Meta{Tool: "idgen compare", Build: ThisBuild(), Engine: r.Engine, Server: r.Server, ServerVersion: r.ServerVersion,
		SharedBuffers: r.SharedBuffers, BufferPool: r.BufferPool, Throwaway: r.Throwaway, Schema: r.Schema, Config: r.Config, Machine: r.Machine,
		Started: r.Started.UTC(), DurationSec: r.Elapsed.Seconds(), Seed: r.Seed, StatsMethod: r.StatsMethod,
		Resamples: stats.Resamples, Confidence: stats.Confidence, Harness: r.Harness, Scenarios: r.Scenarios, Warnings: nonNil(r.Warnings), Notes: nonNil(r.Notes)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
