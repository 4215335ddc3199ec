package strategies

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

// EncodingKey is the spec key every strategy takes to write its IDs in
// another text encoding: "snowflake?preset=twitter&encoding=crockford".
// The IDs, their bytes, time and fields are unchanged; only their text (and
// so the text that parses) is the encoding's.
const EncodingKey = "encoding"

// EncodingDoc returns the documentation of EncodingKey.
func EncodingDoc() string { return encodingDoc }

var encodingDoc = "text encoding of the IDs: " + strings.Join(public.EncodingNames(), ", ") + " (default: the scheme's own text)"

// withEncoding makes s honour EncodingKey, unless s takes the key itself.
func withEncoding(s *Strategy) *Strategy {
	if slices.ContainsFunc(s.Keys, func(k Key) bool { return k.Name == EncodingKey }) {
		return s
	}
	build, scheme := s.Build, s.Scheme
	s.Build = func(ctx context.Context, p *Params) (idgen.Generator, error) {
		enc, err := p.encoding()
		if err != nil {
			return nil, err
		}
		g, err := build(ctx, p)
		if err != nil || enc == nil {
			return g, err
		}
		es, err := p.encodedScheme(g.Scheme(), enc)
		if err != nil {
			if c, ok := g.(interface{ Close() error }); ok {
				c.Close()
			}
			return nil, err
		}
		return &encodedGenerator{inner: g, scheme: es}, nil
	}
	s.Scheme = func(p *Params) (*idgen.Scheme, error) {
		enc, err := p.encoding()
		if err != nil {
			return nil, err
		}
		sc, err := scheme(p)
		if err != nil || enc == nil {
			return sc, err
		}
		return p.encodedScheme(sc, enc)
	}
	return s
}

// encoding returns the encoding the spec names, nil when it names none.
func (p *Params) encoding() (*public.Encoding, error) {
	name, ok := p.values[EncodingKey]
	if !ok {
		return nil, nil
	}
	enc, err := public.LookupEncoding(name)
	if err != nil {
		return nil, p.bad(EncodingKey, name, "one of "+strings.Join(public.EncodingNames(), ", "))
	}
	return enc, nil
}

type encodedKey struct {
	inner *idgen.Scheme
	enc   *public.Encoding
}

// encodedSchemes holds one scheme per (scheme, encoding), so that IDs of a
// spec compare equal however often the spec is parsed.
var encodedSchemes sync.Map // encodedKey -> *idgen.Scheme

// encodedScheme returns inner written in enc: same name, size, column, time
// and fields.
func (p *Params) encodedScheme(inner *idgen.Scheme, enc *public.Encoding) (*idgen.Scheme, error) {
	if err := enc.Fits(inner.Size); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSpec, p.strategy, err)
	}
	k := encodedKey{inner, enc}
	if s, ok := encodedSchemes.Load(k); ok {
		return s.(*idgen.Scheme), nil
	}
	s := &idgen.Scheme{Name: inner.Name, Size: inner.Size, Column: inner.Column, TimeOrdered: inner.TimeOrdered,
		Codec: encodedCodec{Codec: inner.Codec, enc: enc}}
	got, _ := encodedSchemes.LoadOrStore(k, s)
	return got.(*idgen.Scheme), nil
}

// encodedCodec is a scheme's codec with its text in another encoding.
type encodedCodec struct {
	idgen.Codec
	enc *public.Encoding
}

// Unwrap returns the scheme's own codec (snowflake.LayoutOf reads the
// layout through it).
func (c encodedCodec) Unwrap() idgen.Codec { return c.Codec }

func (c encodedCodec) AppendText(dst, b []byte) []byte { return c.enc.AppendText(dst, b) }
func (c encodedCodec) ParseText(b, text []byte) error  { return c.enc.ParseText(b, text) }

// encodedGenerator issues an inner generator's IDs as IDs of the encoded
// scheme.
type encodedGenerator struct {
	inner  idgen.Generator
	scheme *idgen.Scheme
}

func (g *encodedGenerator) Scheme() *idgen.Scheme { return g.scheme }

// Unwrap returns the generator whose IDs it writes in the encoding, so
// that a server reads its readiness, clock and metrics through it.
func (g *encodedGenerator) Unwrap() idgen.Generator { return g.inner }

func (g *encodedGenerator) Next(ctx context.Context) (idgen.ID, error) {
	id, err := g.inner.Next(ctx)
	if err != nil {
		return idgen.ID{}, err
	}
	return g.rescheme(id), nil
}

func (g *encodedGenerator) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	n, err := idgen.NextN(ctx, g.inner, dst)
	for i := range dst[:n] {
		dst[i] = g.rescheme(dst[i])
	}
	return n, err
}

func (g *encodedGenerator) rescheme(id idgen.ID) idgen.ID {
	if v, ok := id.Uint64(); ok {
		return g.scheme.FromUint64(v)
	}
	out, _ := g.scheme.FromBytes(id.Bytes())
	return out
}

func (g *encodedGenerator) Close() error {
	if c, ok := g.inner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
