package compare_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/internal/speccount"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/strategies"
)

// unreachable is a DSN nothing listens on: a run that got as far as
// connecting would fail with ErrConnect instead of ErrBadInput.
const unreachable = "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"

func TestRunBadInput(t *testing.T) {
	tests := []struct {
		name string
		cfg  compare.Config
		want string // in the message
	}{
		{"negative rows", compare.Config{Rows: -1}, "Config.Rows -1: want a positive number of rows"},
		{"negative writers", compare.Config{Writers: -2}, "Config.Writers -2"},
		{"too many writers", compare.Config{Writers: compare.MaxWriters + 1}, "Config.Writers 257: want 1 to 256"},
		{"huge batch", compare.Config{Batch: compare.MaxBatch + 1}, "Config.Batch 1000001"},
		{"negative preload", compare.Config{Preload: -5}, "Config.Preload -5"},
		{"unknown strategy", compare.Config{Strategies: []string{"snowflake", "nope"}}, `unknown strategy "nope"`},
		{"unknown key", compare.Config{Strategies: []string{"snowflake?bogus=1"}}, `unknown key "bogus"`},
		{"bad value", compare.Config{Strategies: []string{"snowflake?preset=zzz"}}, "zzz"},
		{"empty spec", compare.Config{Strategies: []string{"uuidv4", ""}}, `Config.Strategies "uuidv4,": empty strategy spec`},
		{"reference as strategy", compare.Config{Strategies: []string{compare.Reference}}, "row of the harness check"},
		{"client series as strategy", compare.Config{Strategies: []string{compare.ClientSeries}}, "row of the harness check"},
		{"negative runs", compare.Config{Runs: -1}, "Config.Runs -1: want 1 to 100"},
		{"too many runs", compare.Config{Runs: compare.MaxRuns + 1}, "Config.Runs 101"},
		{"huge seed", compare.Config{Seed: 1 << 60}, "Config.Seed 1152921504606846976: want 0 (random) to 9007199254740991"},
		{"too many workers", compare.Config{Strategies: []string{"snowflake?preset=twitter"}, Writers: 40}, "worker"},
		{"bad shared buffers", compare.Config{SharedBuffers: "lots"}, `Config.SharedBuffers "lots": want a size`},
		{"bad schema", compare.Config{Schema: "Robert'); DROP"}, `Config.Schema "Robert'); DROP": want a lower-case identifier`},
		{"bad dsn", compare.Config{DSN: "postgres://[::1"}, "Config.DSN: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.DSN == "" && cfg.SharedBuffers == "" {
				cfg.DSN = unreachable
			}
			rep, err := compare.Run(context.Background(), cfg)
			if !errors.Is(err, compare.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run(%+v) = %v, %v; want ErrBadInput mentioning %q", tt.cfg, rep, err, tt.want)
			}
			checkField(t, err, tt.want)
		})
	}
}

// checkField checks that err, whose text has want, carries an
// *idgen.FieldError of the field want names first ("Config.Rows -1"), if
// any.
func checkField(t *testing.T, err error, want string) {
	t.Helper()
	field, _, _ := strings.Cut(strings.TrimSuffix(strings.Fields(want)[0], ":"), ":")
	if !strings.HasPrefix(field, "Config.") {
		return
	}
	if fe, ok := errors.AsType[*idgen.FieldError](err); !ok || fe.Field != field || !strings.HasSuffix(err.Error(), fe.Error()) {
		t.Errorf("Run = %v; want an *idgen.FieldError of %s ending it", err, field)
	}
}

func TestRunSharedBuffersWithDSN(t *testing.T) {
	_, err := compare.Run(context.Background(), compare.Config{DSN: unreachable, SharedBuffers: "1GB"})
	if !errors.Is(err, compare.ErrBadInput) {
		t.Fatalf("Run(DSN and SharedBuffers) = %v; want ErrBadInput", err)
	}
}

func TestRunUnreachable(t *testing.T) {
	_, err := compare.Run(context.Background(), compare.Config{DSN: unreachable, Strategies: []string{"uuidv4"}})
	want := "compare: cannot connect to PostgreSQL at 127.0.0.1:1 (user postgres, database postgres): connection refused"
	if !errors.Is(err, compare.ErrConnect) || !errors.Is(err, idgen.ErrUnavailable) || err.Error() != want {
		t.Fatalf("Run(unreachable) = %v; want ErrConnect and idgen.ErrUnavailable, %q", err, want)
	}
}

func TestRunWorkerIDFromEnv(t *testing.T) {
	_, err := compare.Run(context.Background(), compare.Config{DSN: unreachable, Strategies: []string{"snowflake"}, Writers: 2,
		SpecOptions: strategies.Options{WorkerID: "3"}})
	if !errors.Is(err, compare.ErrBadInput) || !strings.Contains(err.Error(), strategies.EnvWorkerID) {
		t.Fatalf("Run with %s set and 2 writers = %v; want ErrBadInput naming it", strategies.EnvWorkerID, err)
	}
}

func TestDefaultStrategies(t *testing.T) {
	got := compare.DefaultStrategies()
	var want []string
	for _, s := range strategies.List() {
		if !s.External {
			want = append(want, s.Name)
			if s.Name == "uuidv1" {
				want = append(want, compare.SwappedV1) // a row of the comparison, not a strategy
			}
		}
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("DefaultStrategies() = %v; want %v", got, want)
	}
	for _, name := range got {
		if name == compare.SwappedV1 {
			continue
		}
		if s, _ := strategies.Lookup(name); s.External {
			t.Errorf("DefaultStrategies() has %q, which needs an external store", name)
		}
	}
}

func TestWriterSpecs(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		writers int
		key     string
		specs   []string
		field   string // decomposed field that must differ per writer
		values  []uint64
	}{
		{"snowflake default", "snowflake", 3, "worker",
			[]string{"snowflake?worker=0", "snowflake?worker=1", "snowflake?worker=2"}, "worker", []uint64{0, 1, 2}},
		{"base from the spec", "snowflake?preset=twitter&worker=5", 2, "worker",
			[]string{"snowflake?preset=twitter&worker=5", "snowflake?preset=twitter&worker=6"}, "worker", []uint64{5, 6}},
		{"layout without worker", "snowflake?preset=instagram", 2, "shard",
			[]string{"snowflake?preset=instagram&shard=0", "snowflake?preset=instagram&shard=1"}, "shard", []uint64{0, 1}},
		{"no worker key", "uuidv4", 2, "", []string{"uuidv4", "uuidv4"}, "", nil},
		// The layout's WorkerField: process, where compare used to take
		// shard (its own list had shard first), and datacenter, where it
		// found no key and let the writers share the spec.
		{"process before shard", "snowflake?layout=time:41,shard:5,process:5,sequence:11", 2, "process",
			[]string{"snowflake?layout=time:41,shard:5,process:5,sequence:11&process=0", "snowflake?layout=time:41,shard:5,process:5,sequence:11&process=1"},
			"process", []uint64{0, 1}},
		{"datacenter only", "snowflake?layout=time:41,datacenter:5,sequence:12", 2, "datacenter",
			[]string{"snowflake?layout=time:41,datacenter:5,sequence:12&datacenter=0", "snowflake?layout=time:41,datacenter:5,sequence:12&datacenter=1"},
			"datacenter", []uint64{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed := speccount.N()
			specs, key, err := compare.WriterSpecs(context.Background(), tt.spec, tt.writers)
			if err != nil || key != tt.key || !slices.Equal(specs, tt.specs) {
				t.Fatalf("WriterSpecs(%q, %d) = %q, %q, %v; want %q, %q", tt.spec, tt.writers, specs, key, err, tt.specs, tt.key)
			}
			// The spec is parsed once; each writer's is the parsed Spec
			// with its worker key set (issue 28).
			if n := speccount.N() - parsed; n != 1 {
				t.Fatalf("WriterSpecs(%q, %d) parsed %d spec texts; want 1", tt.spec, tt.writers, n)
			}
			for i, s := range specs {
				if tt.field == "" {
					continue
				}
				g, err := strategies.NewText(context.Background(), s)
				if err != nil {
					t.Fatalf("New(%q) = %v", s, err)
				}
				id, err := g.Next(context.Background())
				if err != nil {
					t.Fatalf("Next() = %v", err)
				}
				if v := field(id, tt.field); v != tt.values[i] {
					t.Errorf("writer %d: %s of %s = %d; want %d", i, tt.field, id, v, tt.values[i])
				}
			}
		})
	}
}

func TestWriterSpecsRange(t *testing.T) {
	// The twitter layout's worker field has 5 bits: 32 writers fit, 33 do not.
	if _, _, err := compare.WriterSpecs(context.Background(), "snowflake?preset=twitter", 32); err != nil {
		t.Fatalf("WriterSpecs(twitter, 32) = %v; want nil", err)
	}
	_, _, err := compare.WriterSpecs(context.Background(), "snowflake?preset=twitter", 33)
	if !errors.Is(err, compare.ErrBadInput) || !errors.Is(err, idgen.ErrOutOfRange) {
		t.Fatalf("WriterSpecs(twitter, 33) = %v; want ErrBadInput and ErrOutOfRange", err)
	}
}

func field(id idgen.ID, name string) uint64 {
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name == name {
			return f.Value
		}
	}
	return 1<<64 - 1
}

func TestSplitSpecs(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"plain", "uuidv4,uuidv7", []string{"uuidv4", "uuidv7"}},
		{"one", "snowflake", []string{"snowflake"}},
		{"layout commas", "snowflake?layout=time:41,worker:10,sequence:12,uuidv4",
			[]string{"snowflake?layout=time:41,worker:10,sequence:12", "uuidv4"}},
		{"query then spec", "snowflake?preset=twitter,snowflake?preset=discord,bigserial",
			[]string{"snowflake?preset=twitter", "snowflake?preset=discord", "bigserial"}},
		{"unknown name stays visible", "uuidv4,nope", []string{"uuidv4", "nope"}},
		{"empty item", "uuidv4,,uuidv7", []string{"uuidv4", "", "uuidv7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compare.SplitSpecs(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("SplitSpecs(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

// statusLog is a Progress that keeps the status lines.
type statusLog struct {
	mu     sync.Mutex
	status []string
}

func (s *statusLog) Status(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = append(s.status, msg)
}
func (s *statusLog) Phase(string, string, int) {}
func (s *statusLog) Rows(int)                  {}
func (s *statusLog) PhaseDone(time.Duration)   {}
func (s *statusLog) Note(string)               {}

// TestFieldNames: Config.FieldName names the fields in the status lines
// (the seed line names Config.Seed), and a key the span puts before the
// layout's epoch fails the run with an *idgen.FieldError of Config.Span
// whose cause is idgen.ErrBeforeEpoch.
func TestFieldNames(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	needStrategies(t, "snowflake")
	prog := &statusLog{}
	_, err := compare.Run(context.Background(), compare.Config{
		DSN: dsn, Schema: uniqueSchema(t), Rows: 10, Writers: 1, Batch: 10, Runs: 1, Seed: 7, NoReads: true,
		Strategies: []string{"snowflake?epoch=2026-01-01"}, Span: compare.MaxSpan, Progress: prog,
		FieldName: func(field string) string { return map[string]string{"Config.Seed": "--seed"}[field] },
	})
	fe, ok := errors.AsType[*idgen.FieldError](err)
	if !ok || fe.Field != "Config.Span" || fe.Value != compare.MaxSpan.String() || !errors.Is(err, idgen.ErrBeforeEpoch) ||
		!strings.HasSuffix(err.Error(), fe.Error()) || !strings.HasPrefix(fe.Error(), "Config.Span 87600h0m0s: snowflake") {
		t.Errorf("Run with a span before the epoch = %v; want an *idgen.FieldError of Config.Span, caused by ErrBeforeEpoch", err)
	}
	if len(prog.status) == 0 || !slices.Contains(prog.status, "1 round, seed 7 (--seed 7 repeats the order)") {
		t.Errorf("status lines %q; want the seed line to name --seed", prog.status)
	}
}
