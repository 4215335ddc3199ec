package strategies

import (
	"sync"

	"github.com/idgenkit/idgen"
)

// Kinds of the strategies' fixed schemes, for idgen.TypedID: a field,
// slice or map of idgen.TypedID[strategies.UUIDv7] decodes from JSON, text
// and SQL with no preparation, into IDs == to the ones the uuidv7 strategy
// issued. The snowflake strategy's Kinds are in package snowflake (one per
// preset: snowflake.Default for a bare "snowflake" spec); segment, ticket
// and instagram's in package segment. A scheme that depends on a spec's
// keys (a TypeID prefix, a public spec's keys, a sonyflake spec's bits)
// gets a Kind of the program's own, whose Scheme returns
// MustSchemeOf(spec)'s scheme kept in a package variable.
type (
	UUIDv4    struct{} // UUIDv4Scheme()
	UUIDv7    struct{} // UUIDv7Scheme()
	UUIDv1    struct{} // UUIDv1Scheme()
	UUIDv6    struct{} // UUIDv6Scheme()
	UUID      struct{} // UUIDScheme(), a UUID of any version
	ULID      struct{} // ULIDScheme()
	KSUID     struct{} // KSUIDScheme()
	XID       struct{} // XIDScheme()
	Flake128  struct{} // Flake128Scheme()
	Sonyflake struct{} // the sonyflake strategy's scheme at its default settings
)

// Scheme returns UUIDv4Scheme().
func (UUIDv4) Scheme() *idgen.Scheme { return UUIDv4Scheme() }

// Scheme returns UUIDv7Scheme().
func (UUIDv7) Scheme() *idgen.Scheme { return UUIDv7Scheme() }

// Scheme returns UUIDv1Scheme().
func (UUIDv1) Scheme() *idgen.Scheme { return UUIDv1Scheme() }

// Scheme returns UUIDv6Scheme().
func (UUIDv6) Scheme() *idgen.Scheme { return UUIDv6Scheme() }

// Scheme returns UUIDScheme().
func (UUID) Scheme() *idgen.Scheme { return UUIDScheme() }

// Scheme returns ULIDScheme().
func (ULID) Scheme() *idgen.Scheme { return ULIDScheme() }

// Scheme returns KSUIDScheme().
func (KSUID) Scheme() *idgen.Scheme { return KSUIDScheme() }

// Scheme returns XIDScheme().
func (XID) Scheme() *idgen.Scheme { return XIDScheme() }

// Scheme returns Flake128Scheme().
func (Flake128) Scheme() *idgen.Scheme { return Flake128Scheme() }

var defaultSonyflakeScheme = sync.OnceValue(func() *idgen.Scheme {
	s, err := SonyflakeScheme(SonyflakeSettings{})
	if err != nil {
		panic(err)
	}
	return s
})

// Scheme returns the scheme of a bare "sonyflake" spec (SonyflakeSettings'
// defaults: 39 bits of 10 ms, 8 sequence, 16 machine).
func (Sonyflake) Scheme() *idgen.Scheme { return defaultSonyflakeScheme() }

// MustSchemeOf is like SchemeOf but panics on error. For package-level
// schemes, such as a Kind's.
func MustSchemeOf(spec string) *idgen.Scheme {
	parsed, err := CheckSpec(spec)
	if err != nil {
		panic(err)
	}
	s, err := SchemeOf(parsed)
	if err != nil {
		panic(err)
	}
	return s
}
