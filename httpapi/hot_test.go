package httpapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// The end of a JSON answer is formatted once per second: the same bytes
// within a second, the next second's after.
func TestStamp(t *testing.T) {
	var h Handler
	t0 := time.Date(2026, 6, 1, 11, 7, 0, 0, time.FixedZone("x", 3600))
	a := h.stamp(t0)
	b := h.stamp(t0.Add(999 * time.Millisecond))
	c := h.stamp(t0.Add(time.Second))
	if want := `],"generated_at":"2026-06-01T10:07:00Z"}` + "\n"; string(a) != want || &a[0] != &b[0] {
		t.Errorf("stamp(t0), stamp(t0+999ms) = %q, %q; want %q, shared", a, b, want)
	}
	if want := `],"generated_at":"2026-06-01T10:07:01Z"}` + "\n"; string(c) != want {
		t.Errorf("stamp(t0+1s) = %q; want %q", c, want)
	}
}

// A latency lands in the bucket whose upper bound it does not pass (le),
// as a Prometheus histogram places it; count and sum follow.
func TestLatencyHist(t *testing.T) {
	var l latencyHist
	for _, d := range []time.Duration{25 * time.Microsecond, 25*time.Microsecond + 1, time.Second, 3 * time.Second} {
		l.observe(d)
	}
	desc := prometheus.NewDesc("x", "x", nil, nil)
	reg := prometheus.NewRegistry()
	reg.MustRegister(oneMetric{desc, l.metric(desc)})
	mfs, err := reg.Gather() // read through the getters: no client_model import
	if err != nil || len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("Gather() = %v, %v; want one metric", mfs, err)
	}
	h := mfs[0].GetMetric()[0].GetHistogram()
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for ub, want := range map[float64]uint64{25e-6: 1, 50e-6: 2, 0.25: 2, 1: 3, 2.5: 3} {
		if got[ub] != want {
			t.Errorf("bucket le=%v = %d; want %d", ub, got[ub], want)
		}
	}
	if h.GetSampleCount() != 4 || h.GetSampleSum() != 4.000050001 {
		t.Errorf("count, sum = %d, %v; want 4, 4.000050001", h.GetSampleCount(), h.GetSampleSum())
	}
}

// oneMetric is a collector of one metric.
type oneMetric struct {
	desc *prometheus.Desc
	m    prometheus.Metric
}

func (o oneMetric) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }
func (o oneMetric) Collect(ch chan<- prometheus.Metric) { ch <- o.m }

// The field texts held for narrow fields give the digits formatting gives.
func TestEncoderFieldText(t *testing.T) {
	_, sch, e := twitterEncoder(t)
	if len(e.fields) != 3 {
		t.Fatalf("twitter's non-time fields: %d; want 3", len(e.fields))
	}
	for _, f := range e.fields {
		if len(f.ends) != 1<<f.Width {
			t.Fatalf("field %s (%d bits): %d texts; want %d", f.Name, f.Width, len(f.ends), 1<<f.Width)
		}
		for v := range f.ends {
			if s := string(f.text(uint64(v))); s != strconv.Itoa(v) {
				t.Fatalf("field %s: text(%d) = %q", f.Name, v, s)
			}
		}
	}
	var v uint64
	for i, x := range []uint64{31, 17, 4095} { // datacenter, worker, sequence: high to low
		v |= x << e.fields[i].Shift
	}
	b := string(e.appendObject(nil, sch.FromUint64(v)))
	if !strings.HasSuffix(b, `"datacenter_id":31,"worker_id":17,"sequence_number":4095}}`) {
		t.Errorf("appendObject = %s; want datacenter 31, worker 17, sequence 4095", b)
	}
}

// A tick's timestamp_ms digits are formatted once and reused by the IDs of
// the same tick, and the next tick's are its own.
func TestEncoderTickText(t *testing.T) {
	l, sch, e := twitterEncoder(t)
	shift := e.time.Shift
	for _, c := range []struct {
		tick uint64
		seq  uint64
	}{{5, 0}, {5, 1}, {6, 0}, {5, 2}} {
		b := string(e.appendObject(nil, sch.FromUint64(c.tick<<shift|c.seq)))
		want := `"timestamp_ms":` + strconv.FormatInt(l.TickTime(int64(c.tick)).UnixMilli(), 10) + `,`
		if !strings.Contains(b, want) {
			t.Errorf("tick %d seq %d: %s; want %s", c.tick, c.seq, b, want)
		}
	}
}

// twitterEncoder returns the twitter layout, its scheme and its encoder.
func twitterEncoder(t *testing.T) (snowflake.Layout, *idgen.Scheme, *idEncoder) {
	t.Helper()
	l, _ := snowflake.Preset("twitter")
	sch, err := snowflake.SchemeOf(l)
	if err != nil {
		t.Fatal(err)
	}
	return l, sch, encoderFor(sch)
}

// The template of a tick gives the text formatting gives, for every
// sequence of a tick, whatever the sequence's place and width (twitter's
// lowest 12 bits, sonyflake's 8 bits above the machine, 14 bits without a
// table), keys whose digits carry (…9999) or pass into one more digit
// (the sum reaches 10^18: formatted in full), and ticks that alternate.
func TestEncoderTemplate(t *testing.T) {
	for _, spec := range []string{"twitter", "sonyflake", "time:41,worker:8,sequence:14;tick=1ms"} {
		l, err := snowflake.Preset(spec)
		if err != nil {
			if l, err = snowflake.ParseLayout(spec); err != nil {
				t.Fatal(err)
			}
		}
		sch, err := snowflake.SchemeOf(l)
		if err != nil {
			t.Fatal(err)
		}
		e := encoderFor(sch)
		sq := e.fields[e.seq]
		clear := ^(sq.Mask << sq.Shift)
		keys := []uint64{
			0,
			(1_000_000_000_000_000_000 - 1) & clear, // + the sequence passes 10^18
			9_999_999_999_999_990_000 / 10 & clear,  // 999…: carries
			0x1d79d9c362427000 & clear,
			0x0123456789abcdef & clear,
		}
		for _, key := range keys {
			for seq := uint64(0); seq <= sq.Mask; seq++ {
				for _, v := range []uint64{key | seq<<sq.Shift, keys[3] | seq<<sq.Shift} { // alternating ticks
					got := string(e.appendObject([]byte("x"), sch.FromUint64(v)))
					if want := "x" + string(e.appendSnowflake(nil, v)); got != want {
						t.Fatalf("%s: appendObject(%#x) = %s; want %s", spec, v, got, want)
					}
				}
			}
		}
	}
}
