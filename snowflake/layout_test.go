package snowflake_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

func TestParseLayoutInvalid(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"64 bits signed", "time:42,worker:10,sequence:12", "64 bits exceed 63"},
		{"65 bits", "time:43,worker:10,sequence:12;unsigned", "65 bits exceed 64"},
		{"no time", "worker:10,sequence:12", "exactly one time field, found 0"},
		{"two times", "time:20,time:20", "field time appears twice"},
		{"unknown field", "time:41,zone:10,sequence:12", `unknown field "zone"`},
		{"zero bits", "time:41,worker:0", `bits "0" must be a number 1-64`},
		{"not name:bits", "time:41,worker", `"worker" is not name:bits`},
		{"bad tick", "time:41,sequence:12;tick=fast", `tick "fast" must be a positive duration`},
		{"negative tick", "time:41,sequence:12;tick=-1ms", `tick "-1ms" must be a positive duration`},
		{"bad epoch", "time:41,sequence:12;epoch=yesterday", `epoch "yesterday"`},
		{"epoch before 1970", "time:41,sequence:12;epoch=1969-12-31", "epoch 1969-12-31T00:00:00Z outside years 1970-2200"},
		// Go's zero time, which Layout.Epoch takes as "the default epoch".
		{"epoch in year 1", "time:41,sequence:12;epoch=0001-01-01", "epoch 0001-01-01T00:00:00Z outside years 1970-2200"},
		{"epoch in year 1, RFC 3339", "time:41,sequence:12;epoch=0001-01-01T00:00:00Z", "epoch 0001-01-01T00:00:00Z outside years 1970-2200"},
		{"epoch after 2200", "time:41,sequence:12;epoch=2201-01-01", "epoch 2201-01-01T00:00:00Z outside years 1970-2200"},
		{"unknown option", "time:41,sequence:12;color=red", `unknown option "color"`},
		{"empty", "", `field "" is not name:bits`},
		{"lifetime past time.Time", "time:62,sequence:1;tick=1h", "time field of 62 bits at 1h0m0s a tick spans more than 2^62 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := snowflake.ParseLayout(tt.text)
			if !errors.Is(err, snowflake.ErrInvalidLayout) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseLayout(%q) error = %v; want ErrInvalidLayout containing %q", tt.text, err, tt.want)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		end      string
		perSec   float64
		nodes    uint64
		unsigned bool
	}{
		{"twitter", "time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2010-11-04T01:42:54.657Z", "2080-07-10T17:30:30.209Z", 4_096_000, 1024, false},
		{"discord", "time:42,worker:5,process:5,sequence:12;tick=1ms;epoch=2015-01-01T00:00:00Z;unsigned", "2154-05-15T07:35:11.104Z", 4_096_000, 1024, true},
		{"instagram", "time:41,shard:13,sequence:10;tick=1ms;epoch=2011-08-24T21:07:01.721Z;unsigned", "2081-04-30T12:54:37.273Z", 1_024_000, 8192, true},
		{"sonyflake", "time:39,sequence:8,machine:16;tick=10ms;epoch=2025-01-01T00:00:00Z", "2199-03-19T03:28:58.88Z", 25_600, 65536, false},
		{"baidu", "time:28,worker:22,sequence:13;tick=1s;epoch=2016-05-20T00:00:00Z", "2024-11-20T21:24:16Z", 8192, 1 << 22, false},
		{"js53", "time:41,worker:5,sequence:7;tick=1ms;epoch=2026-01-01T00:00:00Z", "2095-09-07T15:47:35.552Z", 128_000, 32, false},
		{"region", "time:41,region:3,worker:10,sequence:10;tick=1ms;epoch=2026-01-01T00:00:00Z;unsigned", "2095-09-07T15:47:35.552Z", 1_024_000, 8192, true},
		{"simpleflake", "time:41,random:22;tick=1ms;epoch=2000-01-01T05:00:00Z", "2069-09-06T20:47:35.552Z", 0, 1, false},
		{"default", "time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z", "2095-09-07T15:47:35.552Z", 4_096_000, 1024, false},
	}
	if got := len(snowflake.Presets()); got != len(tests) {
		t.Fatalf("len(Presets()) = %d; want %d", got, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := snowflake.Preset(tt.name)
			if err != nil {
				t.Fatalf("Preset(%q) error: %v", tt.name, err)
			}
			if got := l.String(); got != tt.text {
				t.Errorf("Preset(%q).String() = %q; want %q", tt.name, got, tt.text)
			}
			if got := l.End().Format(time.RFC3339Nano); got != tt.end {
				t.Errorf("End() = %s; want %s", got, tt.end)
			}
			if got := l.PerSecond(); got != tt.perSec {
				t.Errorf("PerSecond() = %v; want %v", got, tt.perSec)
			}
			if got := l.Nodes(); got != tt.nodes {
				t.Errorf("Nodes() = %d; want %d", got, tt.nodes)
			}
			if l.Unsigned != tt.unsigned {
				t.Errorf("Unsigned = %v; want %v", l.Unsigned, tt.unsigned)
			}
			back, err := snowflake.ParseLayout(l.String())
			if err != nil || back.String() != l.String() {
				t.Errorf("ParseLayout(%q) = %v, %v; want the same layout", l.String(), back, err)
			}
		})
	}
	if _, err := snowflake.Preset("twiter"); !errors.Is(err, snowflake.ErrInvalidLayout) || !strings.Contains(err.Error(), "allowed baidu, default, discord") {
		t.Errorf("Preset(twiter) error = %v; want ErrInvalidLayout listing the presets", err)
	}
}

func TestCrossing(t *testing.T) {
	l, _ := snowflake.Preset("twitter")
	js, ok := l.Crossing(53)
	// 2^53 >> 22 = 2^31 ms after the epoch.
	if want := l.Epoch.Add((1 << 31) * time.Millisecond); !ok || !js.Equal(want) {
		t.Errorf("Crossing(53) = %v, %v; want %v, true", js, ok, want)
	}
	if _, ok := l.Crossing(63); ok {
		t.Errorf("Crossing(63) ok = true for a 63-bit layout; want false")
	}
	d, _ := snowflake.Preset("discord")
	if got, ok := d.Crossing(63); !ok || !got.Equal(d.Epoch.Add((1<<41)*time.Millisecond)) {
		t.Errorf("discord Crossing(63) = %v, %v; want epoch + 2^41 ms", got, ok)
	}
}

func TestComposeDecompose(t *testing.T) {
	l, _ := snowflake.Preset("twitter")
	parts := snowflake.Parts{Tick: 123456789, Sequence: 4095}
	parts.Nodes = append(parts.Nodes, nodeField("datacenter", 31), nodeField("worker", 7))
	v, err := l.Compose(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(123456789)<<22 | 31<<17 | 7<<12 | 4095; v != want {
		t.Fatalf("Compose = %d; want %d", v, want)
	}
	got, err := l.Decompose(v)
	if err != nil || got.Tick != 123456789 || got.Sequence != 4095 {
		t.Fatalf("Decompose(%d) = %+v, %v", v, got, err)
	}
	if dc, _ := got.Node("datacenter"); dc != 31 {
		t.Errorf("datacenter = %d; want 31", dc)
	}
	if w, _ := got.Node("worker"); w != 7 {
		t.Errorf("worker = %d; want 7", w)
	}
	if !got.Time.Equal(l.Epoch.Add(123456789 * time.Millisecond)) {
		t.Errorf("Time = %v; want epoch + 123456789 ms", got.Time)
	}
	bad := []snowflake.Parts{
		{Tick: 1 << 41},
		{Tick: -1},
		{Sequence: 4096},
		{Nodes: append([]snowflakeField(nil), nodeField("worker", 32))},
		{Nodes: append([]snowflakeField(nil), nodeField("shard", 1))},
	}
	for _, p := range bad {
		if _, err := l.Compose(p); err == nil {
			t.Errorf("Compose(%+v) error = nil; want an error", p)
		}
	}
	if _, err := l.Decompose(1 << 63); err == nil {
		t.Errorf("Decompose(2^63) error = nil; want out of range for a 63-bit layout")
	}
}

func FuzzParseLayout(f *testing.F) {
	for _, n := range snowflake.Presets() {
		l, _ := snowflake.Preset(n)
		f.Add(l.String())
	}
	f.Add("time:41,worker:10,sequence:12;tick=1ms;epoch=1288834974657")
	f.Add("time:62,sequence:1;tick=1ns;epoch=2026-01-01")
	f.Add("time:1;unsigned")
	f.Add("time:62,sequence:1;tick=1h")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := snowflake.ParseLayout(text)
		if err != nil {
			return
		}
		canon := l.String()
		back, err := snowflake.ParseLayout(canon)
		if err != nil {
			t.Fatalf("ParseLayout(%q) error %v for the canonical form of %q", canon, err, text)
		}
		if back.String() != canon {
			t.Fatalf("ParseLayout(%q).String() = %q; want %q", canon, back.String(), canon)
		}
		if b := l.Bits(); b > 64 || (b > 63 && !l.Unsigned) {
			t.Fatalf("ParseLayout(%q) accepted %d bits", text, b)
		}
		l.End()
		l.Crossing(53)
	})
}

func TestWithDefaults(t *testing.T) {
	l, err := snowflake.ParseLayout("time:41,worker:10,sequence:12")
	if err != nil {
		t.Fatal(err)
	}
	d := l.WithDefaults()
	if d.Tick != time.Millisecond || !d.Epoch.Equal(snowflake.DefaultEpoch()) {
		t.Errorf("WithDefaults() tick %v, epoch %v; want 1ms, %v", d.Tick, d.Epoch, snowflake.DefaultEpoch())
	}
	if d.String() != l.String() || !d.End().Equal(l.End()) {
		t.Errorf("WithDefaults() = %s ending %v; want %s ending %v", d, d.End(), l, l.End())
	}
}

func TestSpans(t *testing.T) {
	l, err := snowflake.ParseLayout("time:40,clockseq:2,region:3,worker:6,sequence:12")
	if err != nil {
		t.Fatal(err)
	}
	want := []snowflake.Span{
		{Name: "time", Shift: 23, Width: 40, Mask: 1<<40 - 1},
		{Name: "clockseq", Shift: 21, Width: 2, Mask: 3},
		{Name: "region", Shift: 18, Width: 3, Mask: 7},
		{Name: "worker", Shift: 12, Width: 6, Mask: 63},
		{Name: "sequence", Shift: 0, Width: 12, Mask: 4095},
	}
	if got := l.Spans(); !slices.Equal(got, want) {
		t.Errorf("Spans() = %+v; want %+v", got, want)
	}
	// Each span takes its field back out of a composed ID.
	v, err := l.Compose(snowflake.Parts{Tick: 123456789, ClockSeq: 2, Sequence: 4000,
		Nodes: []idgen.Field{{Name: "region", Value: 5}, {Name: "worker", Value: 33}}})
	if err != nil {
		t.Fatal(err)
	}
	for s, wantV := range map[string]uint64{"time": 123456789, "clockseq": 2, "region": 5, "worker": 33, "sequence": 4000} {
		i := slices.IndexFunc(want, func(sp snowflake.Span) bool { return sp.Name == s })
		if got := want[i].Value(v); got != wantV {
			t.Errorf("%s Value(%d) = %d; want %d", s, v, got, wantV)
		}
	}
	full, _ := snowflake.ParseLayout("time:52,sequence:12;unsigned")
	if got := full.Spans()[0]; got.High() != 63 || got.Shift != 12 {
		t.Errorf("unsigned time span %+v: High() = %d; want 63, Shift 12", got, got.High())
	}
	if got := (snowflake.Layout{Fields: []snowflake.LayoutField{{Name: "worker", Bits: 10}}}).Spans(); got != nil {
		t.Errorf("Spans() of a layout without a time field = %+v; want nil", got)
	}
}
