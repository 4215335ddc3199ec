package snowflake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

func clockseqLayout(t testing.TB) snowflake.Layout {
	t.Helper()
	l, err := snowflake.ParseLayout("time:41,clockseq:2,worker:8,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestBump: a rollback within MaxAhead (1 s under bump) is held; one beyond
// it bumps the clockseq field and issues at the clock's true time; after
// 2^2-1 bumps Next fails. No ID repeats.
func TestBump(t *testing.T) {
	clk := idgentest.NewClock(t0)
	g := mustNew(t, snowflake.Config{Layout: clockseqLayout(t), Clock: clk, Rollback: snowflake.Bump, Nodes: map[string]int64{"worker": 3}})
	seen := map[idgen.ID]bool{}
	take := func() snowflake.Parts {
		t.Helper()
		id := next(t, g)
		if seen[id] {
			t.Fatalf("duplicate ID %s", id)
		}
		seen[id] = true
		p, _ := g.Decompose(id)
		return p
	}
	for range 100 {
		take()
	}
	clk.Add(-5 * time.Millisecond) // held
	if p := take(); p.ClockSeq != 0 || !p.Time.Equal(t0) {
		t.Fatalf("ID after a 5ms step back: clockseq %d at %v; want 0 at %v (held)", p.ClockSeq, p.Time, t0)
	}
	for bump := uint64(1); bump <= 3; bump++ {
		clk.Add(-2 * time.Second)
		for range 10 {
			p := take()
			if w, _ := p.Node("worker"); p.ClockSeq != bump || !p.Time.Equal(clk.Now()) || w != 3 {
				t.Fatalf("ID after bump %d: clockseq %d at %v, worker %d; want %d at the clock's %v, worker 3", bump, p.ClockSeq, p.Time, w, bump, clk.Now())
			}
		}
		if st := g.Stats(); st.ClockSeq != bump || st.Bumps != bump || st.Ahead != 0 {
			t.Fatalf("Stats() after bump %d = %+v; want ClockSeq %d, Bumps %d, Ahead 0", bump, st, bump, bump)
		}
	}
	clk.Add(-2 * time.Second)
	_, err := g.Next(context.Background())
	var rb *idgen.ClockRollbackError
	if !errors.Is(err, snowflake.ErrClockSeqExhausted) || !errors.As(err, &rb) || rb.Drift != 2*time.Second {
		t.Fatalf("Next() after 3 bumps of a 2-bit clockseq = %v; want ErrClockSeqExhausted and a ClockRollbackError of 2s", err)
	}
	if err := g.Ready(context.Background()); !errors.Is(err, idgen.ErrClockRollback) {
		t.Fatalf("Ready() with the clockseq used up = %v; want ErrClockRollback", err)
	}
}

// TestBumpRestart: the clockseq value is persisted with the mark; a restart
// more than MaxAhead behind the mark bumps, at the clock's true time.
func TestBumpRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hw")
	hw := snowflake.FileHighWater{Path: path}
	seen := map[idgen.ID]bool{}
	now := t0
	for restart := uint64(0); restart <= 2; restart++ {
		clk := idgentest.NewClock(now)
		g := mustNew(t, snowflake.Config{Layout: clockseqLayout(t), Clock: clk, Rollback: snowflake.Bump, HighWater: hw})
		for range 3 {
			for range 100 {
				id := next(t, g)
				if seen[id] {
					t.Fatalf("duplicate ID %s after restart %d", id, restart)
				}
				seen[id] = true
				if p, _ := g.Decompose(id); p.ClockSeq != restart || p.Time.Before(now) || p.Time.After(clk.Now()) {
					t.Fatalf("ID %s after restart %d: clockseq %d at %v; want %d at the clock's time %v", id, restart, p.ClockSeq, p.Time, restart, clk.Now())
				}
			}
			clk.Add(time.Millisecond)
		}
		mark, cs, err := hw.LoadClockSeq(context.Background())
		if err != nil || cs != restart || !mark.After(clk.Now()) {
			t.Fatalf("LoadClockSeq() after restart %d = %v, %d, %v; want a mark after %v, clockseq %d", restart, mark, cs, err, clk.Now(), restart)
		}
		now = now.Add(-5 * time.Second) // the next run's clock is 5 s behind this one's
	}
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(strings.TrimSpace(string(data)), " clockseq=2") {
		t.Errorf("high-water file holds %q; want a time then clockseq=2", data)
	}
}

func TestBumpRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  snowflake.Config
		want string
	}{
		{"no clockseq field", snowflake.Config{Layout: twitter(t), Rollback: snowflake.Bump},
			"snowflake: rollback policy bump needs a clockseq field in the layout, e.g. time:41,clockseq:2,worker:8,sequence:12"},
		{"store without clockseq", snowflake.Config{Layout: clockseqLayout(t), Rollback: snowflake.Bump, HighWater: &memMark{}},
			"snowflake: rollback policy bump needs a high-water store that persists the clockseq value (a ClockSeqStore, such as FileHighWater); *snowflake_test.memMark does not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := snowflake.New(context.Background(), tt.cfg)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("New() = %v; want %q", err, tt.want)
			}
		})
	}
}

func TestClockSeqLayout(t *testing.T) {
	l := clockseqLayout(t)
	v, err := l.Compose(snowflake.Parts{Tick: 1000, ClockSeq: 3, Sequence: 9, Nodes: []idgen.Field{{Name: "worker", Value: 200}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(v)
	if w, _ := p.Node("worker"); err != nil || p.Tick != 1000 || p.ClockSeq != 3 || p.Sequence != 9 || w != 200 {
		t.Fatalf("Decompose(%d) = %+v, %v; want tick 1000, clockseq 3, worker 200, sequence 9", v, p, err)
	}
	if _, err := l.Compose(snowflake.Parts{ClockSeq: 4}); err == nil || err.Error() != "idgen: value out of range: clockseq 4 outside [0, 3]" {
		t.Errorf("Compose(clockseq 4) = %v; want clockseq 4 outside [0, 3]", err)
	}
	s, _ := snowflake.SchemeOf(l)
	var got []string
	for _, f := range s.Decompose(s.FromUint64(v)) {
		got = append(got, f.Name)
	}
	if strings.Join(got, ",") != "time,clockseq,worker,sequence" {
		t.Errorf("Scheme.Decompose fields = %v; want time, clockseq, worker, sequence", got)
	}
	for _, text := range []string{"time:41,clockseq:17,sequence:5", "time:41,clockseq:2,clockseq:2,sequence:12"} {
		if _, err := snowflake.ParseLayout(text); !errors.Is(err, snowflake.ErrInvalidLayout) {
			t.Errorf("ParseLayout(%q) = %v; want ErrInvalidLayout", text, err)
		}
	}
}
