package strategies

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

func init() {
	register(&Strategy{
		Name: "typeid",
		Doc:  "TypeID (spec 0.3.0): prefix_ then a UUIDv7 as 26 lowercase Crockford base32 chars, 16 B, uuid column",
		Keys: []Key{{Name: "prefix", Doc: "type prefix: up to 63 of a-z and _, starting and ending with a-z; default empty (no _ either)"}},
		Build: func(_ context.Context, p *Params) (idgen.Generator, error) {
			s, err := typeIDSchemeOf(p)
			if err != nil {
				return nil, err
			}
			return &TypeIDGenerator{v7: NewUUIDv7(), scheme: s}, nil
		},
		Scheme: typeIDSchemeOf,
	})
}

func typeIDSchemeOf(p *Params) (*idgen.Scheme, error) {
	prefix := p.String("prefix", "")
	if err := public.ValidTypeIDPrefix(prefix); err != nil {
		return nil, p.bad("prefix", prefix, "at most 63 of a-z and _, starting and ending with a-z")
	}
	return TypeIDScheme(prefix), nil
}

var typeIDSchemes sync.Map // prefix -> *idgen.Scheme

// TypeIDScheme returns the scheme of TypeIDs with prefix (which must pass
// public.ValidTypeIDPrefix), one per prefix: 16 bytes, the UUID's, stored
// in a uuid column; text prefix_ and 26 lowercase Crockford base32 chars.
// Its parser takes only TypeIDs of this prefix and refuses the rest per the
// spec; Time and Decompose are the UUIDv7's (unix_ts_ms, ver, rand_a, var,
// rand_b).
func TypeIDScheme(prefix string) *idgen.Scheme {
	if s, ok := typeIDSchemes.Load(prefix); ok {
		return s.(*idgen.Scheme)
	}
	s := &idgen.Scheme{Name: "typeid", Size: 16, Column: idgen.ColumnUUID, TimeOrdered: true, Codec: typeIDCodec{prefix: prefix}}
	got, _ := typeIDSchemes.LoadOrStore(prefix, s)
	return got.(*idgen.Scheme)
}

// TypeIDPrefix returns the prefix of a TypeID; ok is false for an ID of
// another scheme.
func TypeIDPrefix(id idgen.ID) (prefix string, ok bool) {
	if s := id.Scheme(); s != nil {
		if c, ok := s.Codec.(typeIDCodec); ok {
			return c.prefix, true
		}
	}
	return "", false
}

type typeIDCodec struct{ prefix string }

func (c typeIDCodec) AppendText(dst, b []byte) []byte { return public.AppendTypeID(dst, c.prefix, b) }

func (c typeIDCodec) ParseText(b, text []byte) error {
	prefix, err := public.ParseTypeID(b, string(text))
	if err != nil {
		return err
	}
	if prefix != c.prefix {
		return fmt.Errorf("%w: TypeID %s has prefix %q; want %q", idgen.ErrSyntax, quote(string(text)), prefix, c.prefix)
	}
	return nil
}

func (typeIDCodec) Time(b []byte) time.Time { return UUIDv7Scheme().Codec.Time(b) }

func (typeIDCodec) Decompose(b []byte) []idgen.Field { return UUIDv7Scheme().Codec.Decompose(b) }

// TypeIDGenerator issues TypeIDs: UUIDv7s (see UUIDv7Generator) of a
// TypeIDScheme. Safe for concurrent use.
type TypeIDGenerator struct {
	closeFlag
	v7     *UUIDv7Generator
	scheme *idgen.Scheme
}

// Scheme returns the TypeIDScheme of the generator's prefix.
func (g *TypeIDGenerator) Scheme() *idgen.Scheme { return g.scheme }

// Next returns a new TypeID. It fails only after Close (idgen.ErrClosed).
func (g *TypeIDGenerator) Next(ctx context.Context) (idgen.ID, error) {
	if err := g.check(); err != nil {
		return idgen.ID{}, err
	}
	id, err := g.v7.Next(ctx)
	if err != nil {
		return idgen.ID{}, err
	}
	return g.scheme.FromBytes(id.Bytes())
}
