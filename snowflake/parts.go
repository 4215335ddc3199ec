package snowflake

import (
	"fmt"
	"time"

	"github.com/idgenkit/idgen"
)

// Parts is a Snowflake-family ID taken apart by its layout.
type Parts struct {
	Tick     int64         // ticks since the epoch
	Time     time.Time     // start of the tick, UTC
	Sequence uint64        // 0 when the layout has no sequence field
	Random   uint64        // 0 when the layout has no random field
	ClockSeq uint64        // 0 when the layout has no clockseq field
	Nodes    []idgen.Field // node fields, high bits first
}

// Node returns the value of the named node field and whether it is present.
func (p Parts) Node(name string) (uint64, bool) {
	for _, f := range p.Nodes {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

func (p *plan) node(name string) (Span, bool) {
	for _, f := range p.nodes {
		if f.Name == name {
			return f, true
		}
	}
	return Span{}, false
}

func (p *plan) nodeNames() string {
	s := ""
	for i, f := range p.nodes {
		if i > 0 {
			s += ", "
		}
		s += f.Name
	}
	if s == "" {
		return "no node fields"
	}
	return s
}

func (p *plan) decompose(v uint64) Parts {
	t := int64(v>>p.timeShift) & p.timeMax
	parts := Parts{
		Tick:     t,
		Time:     p.layout.TickTime(t),
		Sequence: v >> p.seqShift & p.seqMax,
		Random:   v >> p.randShift & p.randMask,
		ClockSeq: v >> p.csShift & p.csMax,
	}
	for _, f := range p.nodes {
		parts.Nodes = append(parts.Nodes, idgen.Field{Name: f.Name, Value: f.Value(v), Bits: f.Width})
	}
	return parts
}

// Decompose takes the 64-bit ID v apart. It fails when the layout is invalid
// or v has bits set above the layout's width.
func (l Layout) Decompose(v uint64) (Parts, error) {
	p, err := l.compile()
	if err != nil {
		return Parts{}, err
	}
	if p.totalBits < 64 && v>>uint(p.totalBits) != 0 {
		return Parts{}, fmt.Errorf("%w: %d has bits above the layout's %d", idgen.ErrOutOfRange, v, p.totalBits)
	}
	return p.decompose(v), nil
}

// Compose builds the ID of parts (Time is ignored; Tick counts). Each value
// must fit its field; errors wrap idgen.ErrOutOfRange and name the field.
func (l Layout) Compose(parts Parts) (uint64, error) {
	p, err := l.compile()
	if err != nil {
		return 0, err
	}
	check := func(name string, v, max uint64) error {
		if v > max {
			return fmt.Errorf("%w: %s %d outside [0, %d]", idgen.ErrOutOfRange, name, v, max)
		}
		return nil
	}
	if parts.Tick < 0 || parts.Tick > p.timeMax {
		return 0, fmt.Errorf("%w: tick %d outside [0, %d]", idgen.ErrOutOfRange, parts.Tick, p.timeMax)
	}
	if err := check(FieldSequence, parts.Sequence, p.seqMax); err != nil {
		return 0, err
	}
	if err := check(FieldRandom, parts.Random, p.randMask); err != nil {
		return 0, err
	}
	if err := check(FieldClockSeq, parts.ClockSeq, p.csMax); err != nil {
		return 0, err
	}
	v := uint64(parts.Tick)<<p.timeShift | parts.Sequence<<p.seqShift | parts.Random<<p.randShift | parts.ClockSeq<<p.csShift
	for _, nf := range parts.Nodes {
		f, ok := p.node(nf.Name)
		if !ok {
			return 0, fmt.Errorf("snowflake: layout has no node field %q; it has %s", nf.Name, p.nodeNames())
		}
		if err := check(nf.Name, nf.Value, f.Mask); err != nil {
			return 0, err
		}
		v |= nf.Value << f.Shift
	}
	return v, nil
}
