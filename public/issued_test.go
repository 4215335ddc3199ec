package public_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

// fixed issues the IDs it holds, in order.
type fixed struct {
	s   *idgen.Scheme
	ids []idgen.ID
}

func (f *fixed) Scheme() *idgen.Scheme { return f.s }
func (f *fixed) Next(context.Context) (idgen.ID, error) {
	id := f.ids[0]
	f.ids = f.ids[1:]
	return id, nil
}

// TestIssuedIDsDecodeUnchanged reads public IDs that idgen issued before
// it had its own FF1 (testdata/issued_ids.json, written by the
// capitalone/fpe implementation: 2 keys, 6 encodings, 64- and 128-bit
// inner IDs, the empty tweak) and checks that each still decodes to its
// inner ID and that the same inner ID still gives the same text.
func TestIssuedIDsDecodeUnchanged(t *testing.T) {
	data, err := os.ReadFile("testdata/issued_ids.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		IDs []struct{ Key, Encoding, Inner, Public string }
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.IDs) != 312 {
		t.Fatalf("testdata has %d issued IDs; want 312", len(f.IDs))
	}
	for _, row := range f.IDs {
		raw, err := hex.DecodeString(row.Inner)
		if err != nil {
			t.Fatal(err)
		}
		inner := idgen.Int64Scheme()
		if len(raw) == 16 {
			inner = uuid128
		}
		cfg := public.Config{Keys: keys(t, row.Key), Encoding: enc(t, row.Encoding)}
		s, err := public.NewScheme(inner, cfg)
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.Parse(row.Public)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; want the %s ID of inner %s", row.Public, err, row.Encoding, row.Inner)
		}
		in, ok := public.Inner(id)
		if got := hex.EncodeToString(in.Bytes()); !ok || got != row.Inner {
			t.Errorf("Inner(Parse(%q)) = %s, %v; want %s (%s)", row.Public, got, ok, row.Inner, row.Encoding)
		}
		want, err := inner.FromBytes(raw)
		if err != nil {
			t.Fatal(err)
		}
		g, err := public.New(&fixed{s: inner, ids: []idgen.ID{want}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := g.Next(context.Background()); err != nil || got.String() != row.Public {
			t.Errorf("public ID of inner %s (%s) = %q, %v; want %q", row.Inner, row.Encoding, got, err, row.Public)
		}
	}
}
