package strategies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// conformance lists a spec per adapter, with the suite's options.
var conformance = []struct {
	name string
	spec string
	opts idgentest.Options
}{
	{name: "uuidv4", spec: "uuidv4"},
	{name: "uuidv7", spec: "uuidv7"},
	{name: "ulid", spec: "ulid"},
	{name: "ksuid", spec: "ksuid"},
	// Random payloads: k-sorted by second only.
	{name: "ksuid-random", spec: "ksuid?monotonic=false", opts: idgentest.Options{Unordered: true}},
	// Sonyflake's default issues 25,600 IDs/s: a small run.
	{name: "sonyflake", spec: "sonyflake?machine=3", opts: idgentest.Options{Goroutines: 4, PerGoroutine: 2_000}},
	{name: "sonyflake-1ms", spec: "sonyflake?bits_sequence=12&bits_machine=8&time_unit=1ms&machine=200"},
	// The counter is process-wide and wraps at 2^24: k-sorted by second.
	{name: "xid", spec: "xid", opts: idgentest.Options{Unordered: true}},
	{name: "xid-machine", spec: "xid?machine=16777215", opts: idgentest.Options{Unordered: true}},
	{name: "flake128", spec: "flake128?worker=281474976710655"},
	{name: "snowflake", spec: "snowflake?worker=3"},
}

// perGoroutine is the adapters' conformance size: 8 goroutines × 20,000
// IDs, hundreds in every millisecond, and the race detector sees a missing
// lock in them as in the suite's default 100,000 each (5 times as long:
// a minute for the package under -race).
const perGoroutine = 20_000

func TestConformance(t *testing.T) {
	t.Parallel() // beside TestWorkerSourceBad's wait
	for _, tc := range conformance {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.PerGoroutine == 0 {
				tc.opts.PerGoroutine = perGoroutine
			}
			idgentest.Run(t, fromSpec(tc.spec), tc.opts)
		})
	}
}

// fromSpec is an idgentest.Run constructor: a generator from spec, which
// Run closes.
func fromSpec(spec string) func(t *testing.T) idgen.Generator {
	return func(t *testing.T) idgen.Generator {
		t.Helper()
		g, err := strategies.NewText(context.Background(), spec)
		if err != nil {
			t.Fatalf("New(%q) = %v", spec, err)
		}
		return g
	}
}

// TestSchemeOf checks that every strategy's scheme is the one its generator
// issues, created once, with its native column.
func TestSchemeOf(t *testing.T) {
	tests := []struct {
		name, spec string
		want       *idgen.Scheme
		column     string
		size       int
		ordered    bool
	}{
		{name: "uuidv4", spec: "uuidv4", want: strategies.UUIDv4Scheme(), column: "uuid", size: 16},
		{name: "uuidv7", spec: "uuidv7", want: strategies.UUIDv7Scheme(), column: "uuid", size: 16, ordered: true},
		{name: "ulid", spec: "ulid", want: strategies.ULIDScheme(), column: "uuid", size: 16, ordered: true},
		{name: "ksuid", spec: "ksuid", want: strategies.KSUIDScheme(), column: "bytea", size: 20, ordered: true},
		{name: "xid", spec: "xid", want: strategies.XIDScheme(), column: "bytea", size: 12, ordered: true},
		{name: "flake128", spec: "flake128", want: strategies.Flake128Scheme(), column: "uuid", size: 16, ordered: true},
		{name: "sonyflake", spec: "sonyflake", column: "bigint", size: 8, ordered: true},
		{name: "snowflake", spec: "snowflake", column: "bigint", size: 8, ordered: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := strategies.SchemeOf(strategies.MustParse(tc.spec))
			if err != nil {
				t.Fatalf("SchemeOf(%q) = %v", tc.spec, err)
			}
			if tc.want != nil && s != tc.want {
				t.Fatalf("SchemeOf(%q) = %p; want %p", tc.spec, s, tc.want)
			}
			if s.Name != tc.name || s.Column != tc.column || s.Size != tc.size || s.TimeOrdered != tc.ordered {
				t.Fatalf("SchemeOf(%q) = {%s %s %d %v}; want {%s %s %d %v}", tc.spec, s.Name, s.Column, s.Size, s.TimeOrdered,
					tc.name, tc.column, tc.size, tc.ordered)
			}
			g, err := strategies.NewText(context.Background(), tc.spec)
			if err != nil {
				t.Fatalf("New(%q) = %v", tc.spec, err)
			}
			if g.Scheme() != s {
				t.Fatalf("New(%q).Scheme() = %p; want SchemeOf's %p", tc.spec, g.Scheme(), s)
			}
			again, _ := strategies.SchemeOf(strategies.MustParse(tc.spec))
			if again != s {
				t.Fatalf("SchemeOf(%q) twice gave two schemes", tc.spec)
			}
		})
	}
}

func TestSonyflakeLayout(t *testing.T) {
	s, err := strategies.SchemeOf(strategies.MustParse("sonyflake?bits_sequence=10&bits_machine=12&time_unit=5ms&start_time=2020-01-01"))
	if err != nil {
		t.Fatal(err)
	}
	l, ok := snowflake.LayoutOf(s)
	if !ok {
		t.Fatalf("LayoutOf(sonyflake scheme) not ok")
	}
	want := "time:41,sequence:10,machine:12;tick=5ms;epoch=2020-01-01T00:00:00Z"
	if l.String() != want {
		t.Fatalf("LayoutOf(sonyflake) = %s; want %s", l, want)
	}
}

func TestSonyflakeFields(t *testing.T) {
	g, err := strategies.NewText(context.Background(), "sonyflake?machine=513&bits_sequence=9&bits_machine=10")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := id.Scheme().Decompose(id)
	if len(f) != 3 || f[0].Name != "time" || f[0].Bits != 44 || f[1].Name != "sequence" || f[1].Bits != 9 ||
		f[2].Name != "machine" || f[2].Value != 513 || f[2].Bits != 10 {
		t.Fatalf("Decompose(%s) = %+v; want time:44, sequence:9, machine:10 = 513", id, f)
	}
	if d := id.Time().Sub(before.Truncate(10 * time.Millisecond)); d < 0 || d > time.Second {
		t.Fatalf("Time() = %v; want within a second after %v", id.Time(), before)
	}
}

func TestEnvWorkerID(t *testing.T) {
	tests := []struct {
		name, spec, field string
		want              uint64
	}{
		{name: "sonyflake", spec: "sonyflake?machine=3", field: "machine", want: 17},
		{name: "flake128", spec: "flake128?worker=3", field: "worker", want: 17},
		{name: "xid", spec: "xid?machine=3", field: "machine", want: 17},
		{name: "snowflake", spec: "snowflake?worker=3", field: "worker", want: 17},
	}
	opts := strategies.Options{WorkerID: "17"} // what IDGEN_WORKER_ID=17 gives in the CLI
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := opts.NewText(context.Background(), tc.spec)
			if err != nil {
				t.Fatalf("New(%q) = %v", tc.spec, err)
			}
			id, err := g.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, ok := field(id, tc.field)
			if !ok || got != tc.want {
				t.Fatalf("New(%q) with %s=17: %s = %d (%v); want %d", tc.spec, strategies.EnvWorkerID, tc.field, got, ok, tc.want)
			}
		})
	}
}

func TestEnvWorkerIDOutOfRange(t *testing.T) {
	_, err := strategies.Options{WorkerID: "70000"}.NewText(context.Background(), "sonyflake")
	want := `strategies: invalid spec: sonyflake: IDGEN_WORKER_ID="70000": want an integer in [0, 65535]`
	if err == nil || err.Error() != want || !errors.Is(err, strategies.ErrSpec) {
		t.Fatalf("New(sonyflake) with IDGEN_WORKER_ID=70000 = %v; want %s", err, want)
	}
}

func field(id idgen.ID, name string) (uint64, bool) {
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

func idgentestRoundTrip(t *testing.T, id idgen.ID) {
	t.Helper()
	idgentest.RoundTrip(t, id)
}
