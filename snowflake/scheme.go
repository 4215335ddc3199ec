package snowflake

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
)

// codec is the idgen.Codec of one layout: decimal text, fields by layout.
type codec struct {
	idgen.Uint64Codec
	p *plan
}

func (c codec) ParseText(b, text []byte) error {
	v, err := idgen.ParseUint64(text)
	if err != nil {
		return err
	}
	if c.p.totalBits < 64 && v>>uint(c.p.totalBits) != 0 {
		return fmt.Errorf("%w: %s exceeds the layout's %d bits", idgen.ErrOutOfRange, text, c.p.totalBits)
	}
	binary.BigEndian.PutUint64(b, v)
	return nil
}

func (c codec) Time(b []byte) time.Time {
	return c.p.decompose(binary.BigEndian.Uint64(b)).Time
}

func (c codec) Decompose(b []byte) []idgen.Field {
	v := binary.BigEndian.Uint64(b)
	out := make([]idgen.Field, 0, len(c.p.spans))
	for _, f := range c.p.spans {
		out = append(out, idgen.Field{Name: f.Name, Value: f.Value(v), Bits: f.Width})
	}
	return out
}

var schemes sync.Map // canonical layout text -> *idgen.Scheme

// schemeFor returns the one Scheme of p's layout, so that IDs of equal
// layouts compare equal.
func schemeFor(p *plan) *idgen.Scheme {
	if s, ok := schemes.Load(p.canonical); ok {
		return s.(*idgen.Scheme)
	}
	s, _ := schemes.LoadOrStore(p.canonical, &idgen.Scheme{
		Name:        "snowflake",
		Size:        8,
		Column:      idgen.ColumnBigint,
		TimeOrdered: true,
		Codec:       codec{p: p},
	})
	return s.(*idgen.Scheme)
}

// SchemeOf returns the Scheme of l's IDs: "snowflake", 8 bytes, bigint,
// time-ordered. The same layout always gives the same *Scheme.
func SchemeOf(l Layout) (*idgen.Scheme, error) {
	p, err := l.compile()
	if err != nil {
		return nil, err
	}
	return schemeFor(p), nil
}

// LayoutOf returns the layout behind a Snowflake scheme, also one written in
// another text encoding (a codec with an Unwrap() idgen.Codec method, as
// the spec key encoding= gives), and false for any other scheme.
func LayoutOf(s *idgen.Scheme) (Layout, bool) {
	cd := s.Codec
	for {
		if c, ok := cd.(codec); ok {
			return c.p.layout, true
		}
		u, ok := cd.(interface{ Unwrap() idgen.Codec })
		if !ok {
			return Layout{}, false
		}
		cd = u.Unwrap()
	}
}

// findScheme is package snowflake's idgen.SchemeFinder: the scheme of a
// layout's text (ParseLayout's form); names alone are other packages'.
func findScheme(_, layout string) (*idgen.Scheme, bool, error) {
	if layout == "" {
		return nil, false, nil
	}
	l, err := ParseLayout(layout)
	if err != nil {
		return nil, true, fmt.Errorf("layout %q: %w", echo.Cut(layout), err)
	}
	s, err := SchemeOf(l)
	return s, true, err
}

func init() { idgen.RegisterSchemeFinder(findScheme) }
