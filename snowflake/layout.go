package snowflake

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
)

// Field names with a fixed meaning. Every other field is a node field and
// must be one of NodeFields.
const (
	FieldTime     = "time"     // ticks since the epoch
	FieldSequence = "sequence" // per-tick counter
	FieldRandom   = "random"   // random bits drawn per ID (Simpleflake)
	// FieldClockSeq counts the clock rollbacks the generator bumped past
	// (policy Bump), like UUIDv1's clock sequence: IDs after a bump carry
	// the clock's true time and a higher clockseq. Placed below the time
	// field, IDs across a bump do not sort in time order.
	FieldClockSeq = "clockseq"
)

// Node field names: a node field keeps one node's IDs apart from another's.
const (
	FieldDatacenter = "datacenter"
	FieldWorker     = "worker"
	FieldShard      = "shard"
	FieldRegion     = "region"
	FieldProcess    = "process"
	FieldMachine    = "machine"
)

// NodeFields returns the names a node field may take, in a new slice.
func NodeFields() []string { return slices.Clone(nodeFields) }

var nodeFields = []string{FieldDatacenter, FieldWorker, FieldShard, FieldRegion, FieldProcess, FieldMachine}

// DefaultEpoch returns the epoch of a Layout whose Epoch is zero:
// 2026-01-01T00:00:00Z.
func DefaultEpoch() time.Time { return defaultEpoch }

var defaultEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrInvalidLayout reports a layout that cannot be used; the wrapping error
// names the field or option at fault and what is allowed.
var ErrInvalidLayout = errclass.Invalid("snowflake: invalid layout")

// A LayoutField is one field of a Layout: a name and a width in bits.
type LayoutField struct {
	Name string
	Bits int
}

// A Layout is the bit layout of a 64-bit Snowflake-family ID. Fields run from
// the high bits to the low; the twitter preset, for example, is
//
//	 63  62                   22 21      17 16      12 11          0
//	+---+-----------------------+----------+----------+-------------+
//	| 0 | time: 41 bits of ms   |datacenter|  worker  |  sequence   |
//	+---+-----------------------+----------+----------+-------------+
//
// A layout has exactly one time field, at most one sequence field, at most
// one random field, at most one clockseq field, and node fields named from
// NodeFields. It spans at most
// 63 bits, so that IDs stay positive in a signed bigint, or 64 when Unsigned
// is set. Unused high bits are zero.
type Layout struct {
	// Fields, from the high bits to the low. Required.
	Fields []LayoutField
	// Tick is the time field's unit. Zero means 1 ms.
	Tick time.Duration
	// Epoch is the time of tick 0. The zero Time means DefaultEpoch.
	Epoch time.Time
	// Unsigned allows a 64-bit layout, whose IDs pass 2^63-1 (and no longer
	// fit a signed bigint) once the time field's top bit is set.
	Unsigned bool
}

func (l Layout) tick() time.Duration {
	if l.Tick == 0 {
		return time.Millisecond
	}
	return l.Tick
}

func (l Layout) epoch() time.Time {
	if l.Epoch.IsZero() {
		return defaultEpoch
	}
	return l.Epoch
}

// WithDefaults returns l with the defaults it applies written out: a zero
// Tick becomes 1 ms and a zero Epoch DefaultEpoch. Its IDs are l's.
func (l Layout) WithDefaults() Layout {
	l.Tick, l.Epoch = l.tick(), l.epoch()
	return l
}

// plan is a validated layout compiled to shifts and masks.
type plan struct {
	layout            Layout
	timeShift         uint
	timeBits          int
	timeMax           int64
	seqShift, seqBits uint
	seqMax            uint64
	randShift         uint
	randBits          int
	randMask          uint64
	csShift           uint // the clockseq field's shift in an ID
	csBits            uint
	csMax             uint64
	nodes             []Span // the node fields, high bits first
	tickNs, epochNs   int64
	totalBits         int
	canonical         string
	spans             []Span // every field, high bits first
}

// A Span is where one field of a compiled Layout sits in a 64-bit ID: the
// field's value in ID v is v>>Shift & Mask, Width bits wide, and its bits
// are Shift (low) to Shift+Width-1 (high), bit 0 being the lowest.
type Span struct {
	Name  string // the field's name (FieldTime, FieldSequence, a node field, ...)
	Shift uint   // bits below the field
	Width int    // the field's width in bits, 1-64
	Mask  uint64 // 2^Width-1: the field's largest value
}

// Value returns the field's value in the ID v: v>>Shift & Mask.
func (s Span) Value(v uint64) uint64 { return v >> s.Shift & s.Mask }

// High returns the number of the field's highest bit: Shift+Width-1.
func (s Span) High() int { return int(s.Shift) + s.Width - 1 }

func mask(bits int) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(bits) - 1
}

// invalid returns an error wrapping ErrInvalidLayout; string arguments,
// parts of the input, are cut to about 64 bytes.
func invalid(format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = echo.Cut(s)
		}
	}
	return fmt.Errorf("%w: %s", ErrInvalidLayout, fmt.Sprintf(format, args...))
}

// Validate reports whether l can be used, naming the field at fault.
func (l Layout) Validate() error {
	_, err := l.compile()
	return err
}

func (l Layout) compile() (*plan, error) {
	if len(l.Fields) == 0 {
		return nil, invalid("no fields; want e.g. time:41,worker:10,sequence:12")
	}
	if l.Tick < 0 {
		return nil, invalid("tick %v must be positive", l.Tick)
	}
	if err := epochInRange(l.epoch()); err != nil {
		return nil, err
	}
	total := 0
	for _, f := range l.Fields {
		if f.Bits < 1 || f.Bits > 64 {
			return nil, invalid("field %s has %d bits; allowed 1-64", f.Name, f.Bits)
		}
		total += f.Bits
	}
	maxBits := 63
	if l.Unsigned {
		maxBits = 64
	}
	if total > maxBits {
		if total == 64 {
			return nil, invalid("%d bits exceed 63 (the sign bit must stay 0); set unsigned to allow 64", total)
		}
		return nil, invalid("%d bits exceed %d", total, maxBits)
	}
	p := &plan{layout: l, tickNs: int64(l.tick()), epochNs: l.epoch().UnixNano(), totalBits: total}
	var seen []string
	shift := total
	nTime := 0
	for _, f := range l.Fields {
		shift -= f.Bits
		if slices.Contains(seen, f.Name) {
			return nil, invalid("field %s appears twice", f.Name)
		}
		seen = append(seen, f.Name)
		sp := Span{Name: f.Name, Shift: uint(shift), Width: f.Bits, Mask: mask(f.Bits)}
		p.spans = append(p.spans, sp)
		switch f.Name {
		case FieldTime:
			nTime++
			if f.Bits > 62 {
				return nil, invalid("time field has %d bits; allowed 1-62", f.Bits)
			}
			p.timeShift, p.timeBits, p.timeMax = uint(shift), f.Bits, int64(mask(f.Bits))
		case FieldSequence:
			p.seqShift, p.seqBits, p.seqMax = uint(shift), uint(f.Bits), mask(f.Bits)
		case FieldRandom:
			p.randShift, p.randBits, p.randMask = uint(shift), f.Bits, mask(f.Bits)
		case FieldClockSeq:
			if f.Bits > 16 {
				return nil, invalid("clockseq field has %d bits; allowed 1-16", f.Bits)
			}
			p.csShift, p.csBits, p.csMax = uint(shift), uint(f.Bits), mask(f.Bits)
		default:
			if !slices.Contains(nodeFields, f.Name) {
				return nil, invalid("unknown field %q; allowed time, sequence, random, clockseq, %s", f.Name, strings.Join(nodeFields, ", "))
			}
			p.nodes = append(p.nodes, sp)
		}
	}
	if nTime != 1 {
		return nil, invalid("a layout needs exactly one time field, found %d", nTime)
	}
	// The lifetime, 2^timebits ticks, must be a time a time.Time holds.
	if !lifetimeFits(p.timeBits, p.tickNs) {
		return nil, invalid("time field of %d bits at %v a tick spans more than 2^62 seconds; want fewer time bits or a shorter tick", p.timeBits, l.tick())
	}
	if p.timeBits+int(p.seqBits) > 64 {
		return nil, invalid("time and sequence fields together exceed 64 bits")
	}
	p.canonical = l.String()
	return p, nil
}

// lifetimeFits reports whether 2^timeBits ticks of tickNs are at most 2^62
// seconds, so that End and TickTime hold in a time.Time.
func lifetimeFits(timeBits int, tickNs int64) bool {
	hi, lo := bits.Mul64(uint64(1)<<uint(timeBits), uint64(tickNs))
	if hi >= uint64(time.Second) {
		return false
	}
	sec, _ := bits.Div64(hi, lo, uint64(time.Second))
	return sec <= 1<<62
}

// String returns the layout's text form, which ParseLayout reads back:
//
//	time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2026-01-01T00:00:00Z
//
// with ";unsigned" appended for unsigned layouts.
func (l Layout) String() string {
	var b strings.Builder
	for i, f := range l.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.Bits))
	}
	b.WriteString(";tick=")
	b.WriteString(l.tick().String())
	b.WriteString(";epoch=")
	b.WriteString(l.epoch().UTC().Format(time.RFC3339Nano))
	if l.Unsigned {
		b.WriteString(";unsigned")
	}
	return b.String()
}

// ParseLayout reads a layout's text form: comma-separated name:bits fields
// from high to low, then optional ";tick=DURATION" (default 1ms),
// ";epoch=RFC3339-or-unix-ms" (default DefaultEpoch) and ";unsigned".
// Errors wrap ErrInvalidLayout and name the part at fault.
func ParseLayout(text string) (Layout, error) {
	parts := strings.Split(text, ";")
	var l Layout
	for f := range strings.SplitSeq(parts[0], ",") {
		name, width, ok := strings.Cut(strings.TrimSpace(f), ":")
		if !ok {
			return Layout{}, invalid("field %q is not name:bits", f)
		}
		n, err := strconv.Atoi(width)
		if err != nil || n < 1 || n > 64 {
			return Layout{}, invalid("field %q: bits %q must be a number 1-64", name, width)
		}
		l.Fields = append(l.Fields, LayoutField{Name: name, Bits: n})
	}
	for _, opt := range parts[1:] {
		key, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
		switch key {
		case "tick":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return Layout{}, invalid("tick %q must be a positive duration such as 1ms, 10ms, 1s", val)
			}
			l.Tick = d
		case "epoch":
			t, err := ParseEpoch(val)
			if err != nil {
				return Layout{}, err
			}
			l.Epoch = t
		case "unsigned":
			if val != "" && val != "true" {
				return Layout{}, invalid("unsigned takes no value, got %q", val)
			}
			l.Unsigned = true
		default:
			return Layout{}, invalid("unknown option %q; allowed tick, epoch, unsigned", key)
		}
	}
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// ParseEpoch reads an epoch as RFC 3339 (2026-01-01T00:00:00Z), a date
// (2026-01-01, UTC) or Unix milliseconds (1288834974657), in the years
// 1970-2200. A time outside them, Go's zero time 0001-01-01 included (which
// Layout.Epoch would take for DefaultEpoch), wraps ErrInvalidLayout.
func ParseEpoch(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 || ms > 7258118400000 {
			return time.Time{}, invalid("epoch %q: unix ms must be 0-7258118400000 (1970-2200)", s)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, f := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(f, s); err == nil {
			if err := epochInRange(t); err != nil {
				return time.Time{}, err
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalid("epoch %q: want RFC 3339 (2026-01-01T00:00:00Z), a date (2026-01-01) or unix ms", s)
}

// epochInRange refuses an epoch outside the years 1970-2200.
func epochInRange(t time.Time) error {
	if y := t.UTC().Year(); y < 1970 || y > 2200 {
		return invalid("epoch %s outside years 1970-2200", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// Spans returns where each field sits in an ID, from the high bits to the
// low, as the generator compiles them; nil when l is invalid (see
// Validate). The bits above the first span are zero.
func (l Layout) Spans() []Span {
	p, err := l.compile()
	if err != nil {
		return nil
	}
	return p.spans
}

// Bits returns the number of bits the layout spans.
func (l Layout) Bits() int {
	n := 0
	for _, f := range l.Fields {
		n += f.Bits
	}
	return n
}

// Field returns the width of the named field, and whether the layout has it.
func (l Layout) Field(name string) (bits int, ok bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f.Bits, true
		}
	}
	return 0, false
}

// workerFields are the node fields WorkerField chooses from, finest first.
var workerFields = []string{FieldWorker, FieldMachine, FieldProcess, FieldShard, FieldRegion, FieldDatacenter}

// WorkerField returns the node field that tells one generator of the
// layout from another, with its width in bits: the one rule for the
// field a Lease's Identity fills with its WorkerID, that
// strategies.Options.WorkerID (IDGEN_WORKER_ID) sets, that package
// migrate reserves worker IDs in, and that idgen compare's writers count
// through. It is the layout's first field of worker, machine, process,
// shard, region and datacenter, in that order: the finest-grained node
// field it has. So the presets twitter, default, discord, baidu, region
// and js53 give worker, sonyflake machine, instagram shard, and a layout
// whose only node field is datacenter gives datacenter (a Lease's
// DatacenterID then has no field of its own). ok is false for a layout
// without a node field (simpleflake).
func (l Layout) WorkerField() (name string, bits int, ok bool) {
	for _, name := range workerFields {
		if bits, ok := l.Field(name); ok {
			return name, bits, true
		}
	}
	return "", 0, false
}

// TickTime returns the start of tick t: Epoch + t*Tick, without overflow for
// any tick the layout can hold.
func (l Layout) TickTime(t int64) time.Time {
	hi, lo := bits.Mul64(uint64(t), uint64(l.tick()))
	sec, ns := bits.Div64(hi, lo, uint64(time.Second))
	e := l.epoch()
	return time.Unix(e.Unix()+int64(sec), int64(e.Nanosecond())+int64(ns)).UTC()
}

// End returns the time the layout's lifetime ends: the start of tick
// 2^timebits, the first tick its time field cannot hold.
func (l Layout) End() time.Time {
	b, _ := l.Field(FieldTime)
	return l.TickTime(int64(1) << uint(b))
}

// PerSecond returns how many IDs one node can issue per second:
// 2^sequence per tick. A layout with a random field and no sequence returns 0
// (unbounded, uniqueness is probabilistic).
func (l Layout) PerSecond() float64 {
	seq, hasSeq := l.Field(FieldSequence)
	if !hasSeq {
		if _, r := l.Field(FieldRandom); r {
			return 0
		}
	}
	return float64(uint64(1)<<uint(seq)) * float64(time.Second) / float64(l.tick())
}

// Nodes returns 2^(sum of node field bits): how many distinct nodes the
// layout can tell apart.
func (l Layout) Nodes() uint64 {
	n := 0
	for _, f := range l.Fields {
		if slices.Contains(nodeFields, f.Name) {
			n += f.Bits
		}
	}
	return uint64(1) << uint(n)
}

// Crossing returns when IDs first reach 2^bits: the start of the first tick
// whose smallest ID is at least 2^bits. ok is false when the layout's IDs
// never reach it. Crossing(53) is when IDs stop being exact JavaScript
// numbers; Crossing(63), when they stop fitting a signed int64.
func (l Layout) Crossing(b int) (t time.Time, ok bool) {
	p, err := l.compile()
	if err != nil || b >= p.totalBits {
		return time.Time{}, false
	}
	if int(p.timeShift) >= b {
		return l.TickTime(1), true
	}
	return l.TickTime(int64(1) << uint(b-int(p.timeShift))), true
}
