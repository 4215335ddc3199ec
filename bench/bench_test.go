package bench_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/bench"
	"github.com/idgenkit/idgen/internal/speccount"
	"github.com/idgenkit/idgen/strategies"
)

func TestSplitSpecs(t *testing.T) {
	tests := []struct {
		name  string
		lists []string
		want  []string
	}{
		{name: "plain", lists: []string{"uuidv7,ulid,xid"}, want: []string{"uuidv7", "ulid", "xid"}},
		{name: "repeated flag", lists: []string{"uuidv7", "ksuid?monotonic=false"}, want: []string{"uuidv7", "ksuid?monotonic=false"}},
		{name: "layout commas", lists: []string{"ulid,snowflake?layout=time:41,worker:10,sequence:12&worker=3,uuidv4"},
			want: []string{"ulid", "snowflake?layout=time:41,worker:10,sequence:12&worker=3", "uuidv4"}},
		{name: "spaces and empties", lists: []string{" uuidv7 , ,ulid,"}, want: []string{"uuidv7", "ulid"}},
		{name: "typo kept for the error", lists: []string{"uuidv7,ulidd"}, want: []string{"uuidv7", "ulidd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := bench.SplitSpecs(tc.lists); !slices.Equal(got, tc.want) {
				t.Fatalf("SplitSpecs(%q) = %q; want %q", tc.lists, got, tc.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	specs := []string{"uuidv7", "ulid", "ksuid", "xid", "flake128", "snowflake?worker=1"}
	parsed := speccount.N()
	rs, err := bench.Run(context.Background(), bench.Config{Specs: specs, Duration: 50 * time.Millisecond, Goroutines: 2})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	// Each spec's text is parsed once (issue 28): checked, then built.
	if n := speccount.N() - parsed; n != int64(len(specs)) {
		t.Fatalf("Run parsed %d spec texts; want %d, one a spec", n, len(specs))
	}
	if len(rs) != len(specs) {
		t.Fatalf("Run gave %d results; want %d", len(rs), len(specs))
	}
	wantText := map[string]int{"uuidv7": 36, "ulid": 26, "ksuid": 27, "xid": 20, "flake128": 32}
	for i, r := range rs {
		if r.Spec != specs[i] || r.IDs == 0 || r.Goroutines != 2 || r.Elapsed < 50*time.Millisecond {
			t.Fatalf("result %d = %+v; want %s, IDs > 0, 2 goroutines, >= 50ms", i, r, specs[i])
		}
		if w, ok := wantText[r.Spec]; ok && r.TextLen != w {
			t.Fatalf("%s TextLen = %d; want %d", r.Spec, r.TextLen, w)
		}
		if got := r.NsPerID(); got <= 0 || got != float64(r.Elapsed.Nanoseconds())*2/float64(r.IDs) {
			t.Fatalf("%s NsPerID() = %v; want Elapsed*2/IDs", r.Spec, got)
		}
	}
	var buf bytes.Buffer
	if err := bench.WriteTable(&buf, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != len(specs)+1 || !strings.HasPrefix(lines[0], "strategy") {
		t.Fatalf("WriteTable = %q; want a header and %d rows", buf.String(), len(specs))
	}
	col := strings.Index(lines[0], "IDs/s")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Fatalf("WriteTable row %q not aligned under IDs/s at %d", l, col)
		}
	}
	if !strings.Contains(lines[1], "  16     yes           36    uuid") {
		t.Fatalf("WriteTable uuidv7 row = %q; want bytes 16, time-ordered yes, text 36, column uuid", lines[1])
	}
}

func TestRunBadSpec(t *testing.T) {
	_, err := bench.Run(context.Background(), bench.Config{Specs: []string{"uuidv7", "ulidd"}, Duration: time.Millisecond})
	if !errors.Is(err, strategies.ErrSpec) {
		t.Fatalf("Run(ulidd) = %v; want ErrSpec", err)
	}
}

func TestDefaultSpecs(t *testing.T) {
	got := bench.DefaultSpecs()
	for _, name := range []string{"flake128", "ksuid", "snowflake", "sonyflake", "ulid", "uuidv4", "uuidv7", "xid"} {
		if !slices.Contains(got, name) {
			t.Fatalf("DefaultSpecs() = %q; want %s in it", got, name)
		}
	}
	for _, name := range got {
		if s, _ := strategies.Lookup(name); s.External {
			t.Fatalf("DefaultSpecs() has %s, which needs an external store", name)
		}
	}
}

// failing fails after a few IDs.
type failing struct{ n int }

var errBoom = errors.New("boom")

func (f *failing) Next(context.Context) (idgen.ID, error) {
	f.n++
	if f.n > 10 {
		return idgen.ID{}, errBoom
	}
	return idgen.Int64Scheme().FromUint64(uint64(f.n)), nil
}

func (f *failing) Scheme() *idgen.Scheme { return idgen.Int64Scheme() }

func TestMeasureError(t *testing.T) {
	r, err := bench.Measure(context.Background(), &failing{}, time.Minute, 1)
	if !errors.Is(err, errBoom) || r.IDs != 10 {
		t.Fatalf("Measure(failing) = %d IDs, %v; want 10, boom", r.IDs, err)
	}
}

func TestMeasureCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	g, _ := strategies.NewText(context.Background(), "uuidv4")
	_, err := bench.Measure(ctx, g, time.Minute, 2)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Measure(canceled) = %v; want context.Canceled", err)
	}
}
