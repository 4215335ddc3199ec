package strategies_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

var fuzzSeeds = []string{
	"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "919108f7-52d1-4320-9bac-f847db4148a8",
	"C232AB00-9414-11EC-B3C8-9F6BDECED846", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01arz3ndektsv4rrffq69g5fav",
	"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "aWgEPTl1tmebfsQzFP4bxwgy80V",
	"aWgEPTl1tmebfsQzFP4bxwgy80W", "9m4e2mr0ui3e8a215n4g", "vvvvvvvvvvvvvvvvvvvv", "99999999999999999999",
	"0000019aa1b2c3d4a1b2c3d4e5f60007", "4194304", "18446744073709551615", "0", "", "-1", " 1", "+4194304\r\n", "user_01h455vb4pex5vsknk084sn02q",
	"01ARZ3NDEKTSV4RRFFQ69G5FA!", "zzzzzzzzzzzzzzzzzzzzzzzzzzz", "017f22e2-79b0-7cc3-98c4-dc0c0c07398",
}

// FuzzParse checks that whatever Parse accepts survives the round trip: its
// canonical text parses back to the same ID, by detection and by its scheme.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		id, err := strategies.Parse(text)
		if err != nil {
			if !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) {
				t.Fatalf("Parse(%q) = %v; want ErrSyntax or ErrOutOfRange", text, err)
			}
			return
		}
		canon := id.String()
		if back, err := strategies.Parse(canon); err != nil || back != id {
			t.Fatalf("Parse(%q) = %v; Parse(%q) = %v, %v; want the same ID", text, id, canon, back, err)
		}
		// Parse trims spaces and line ends, and a + before a decimal; the
		// scheme's own parser takes the text so trimmed.
		trimmed := strings.TrimSpace(text)
		if rest, ok := strings.CutPrefix(trimmed, "+"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			trimmed = rest
		}
		if back, err := id.Scheme().Parse(trimmed); err != nil || back != id {
			t.Fatalf("Parse(%q) = %v (%s); %s.Parse(%q) = %v, %v; want the same ID", text, id, id.Scheme(), id.Scheme(), trimmed, back, err)
		}
		if back, err := id.Scheme().FromBytes(id.Bytes()); err != nil || back != id {
			t.Fatalf("FromBytes(Bytes(%v)) = %v, %v", id, back, err)
		}
	})
}

// fuzzSchemes are every adapter scheme plus the default 64-bit layouts.
func fuzzSchemes(t testing.TB) []*idgen.Scheme {
	schemes := []*idgen.Scheme{strategies.UUIDv4Scheme(), strategies.UUIDv7Scheme(), strategies.UUIDScheme(),
		strategies.ULIDScheme(), strategies.KSUIDScheme(), strategies.XIDScheme(), strategies.Flake128Scheme()}
	for _, spec := range []string{"sonyflake", "sonyflake?bits_sequence=12&bits_machine=8", "snowflake"} {
		s, err := strategies.SchemeOf(strategies.MustParse(spec))
		if err != nil {
			t.Fatal(err)
		}
		schemes = append(schemes, s)
	}
	return schemes
}

// FuzzSchemeParse checks every scheme's parser both ways: any raw bytes
// survive String then Parse exactly, and any text a scheme accepts
// re-encodes to a canonical text that parses to the same ID.
func FuzzSchemeParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), s)
	}
	f.Add(make([]byte, 20), "0")
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), "ZZZZZZZZZZZZZZZZZZZZZZZZZZ")
	schemes := fuzzSchemes(f)
	f.Fuzz(func(t *testing.T, raw []byte, text string) {
		for _, s := range schemes {
			if len(raw) >= s.Size {
				b := append([]byte(nil), raw[:s.Size]...)
				if s.Size == 8 {
					b[0] &= 0x7f // 63-bit layouts
				}
				id, err := s.FromBytes(b)
				if err != nil {
					t.Fatalf("%s.FromBytes(%x) = %v", s, b, err)
				}
				if back, err := s.Parse(id.String()); err != nil || back != id {
					t.Fatalf("%s: Parse(String(%x) = %q) = %v, %v; want %v", s, b, id.String(), back, err, id)
				}
			}
			id, err := s.Parse(text)
			if err != nil {
				if !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) {
					t.Fatalf("%s.Parse(%q) = %v; want ErrSyntax or ErrOutOfRange", s, text, err)
				}
				continue
			}
			canon := id.String()
			if back, err := s.Parse(canon); err != nil || back != id || back.String() != canon {
				t.Fatalf("%s.Parse(%q) = %v; Parse(%q) = %v, %v; want the same ID", s, text, id, canon, back, err)
			}
		}
	})
}

// FuzzSpec checks the spec text both ways: whatever ParseSpec accepts
// writes back (String) to text that parses to the same Spec, and With
// sets any key to any value so that Get returns it, after that round trip
// too.
func FuzzSpec(f *testing.F) {
	for _, s := range []string{"snowflake?preset=twitter&worker=7", "uuidv7", "", "?", "a?=", "a?k", "a?k=v&k2=",
		"public?inner=snowflake%3Fpreset%3Dtwitter%26worker%3D1&encoding=crockford", "x ?a=%20b", "a?%=1", "a?k=%zz",
		"snowflake?layout=time:41,worker:10,sequence:12;tick=1ms&worker_source=postgres://u:p@h/db?ttl=10s"} {
		f.Add(s, "worker_source", "etcd://127.0.0.1:2379/ns?ttl=5s&workers=4")
	}
	f.Fuzz(func(t *testing.T, text, key, value string) {
		s, err := strategies.ParseSpec(text)
		if err != nil {
			var se *strategies.SpecError
			if !errors.As(err, &se) || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("ParseSpec(%q) = %v; want a *SpecError wrapping ErrSpec", text, err)
			}
			return
		}
		if back, err := strategies.ParseSpec(s.String()); err != nil || back != s {
			t.Fatalf("ParseSpec(%q) = %q; ParseSpec(%q) = %q, %v; want the same Spec", text, s, s.String(), back, err)
		}
		w := s.With(key, value)
		if got, ok := w.Get(key); !ok || got != value {
			t.Fatalf("%q.With(%q, %q).Get = %q, %v; want %q", s, key, value, got, ok, value)
		}
		back, err := strategies.ParseSpec(w.String())
		if err != nil || back != w {
			t.Fatalf("ParseSpec(%q) = %q, %v; want %q", w.String(), back, err, w)
		}
		if n, m := len(w.Keys()), len(s.Keys()); n != m && n != m+1 {
			t.Fatalf("%q.With(%q, %q) has %d keys; want %d or %d", s, key, value, n, m, m+1)
		}
		if _, ok := w.Without(key).Get(key); ok {
			t.Fatalf("%q.Without(%q) still gives it", w, key)
		}
	})
}
