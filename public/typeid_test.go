package public_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

type typeIDVector struct {
	Name   string `json:"name"`
	TypeID string `json:"typeid"`
	Prefix string `json:"prefix"`
	UUID   string `json:"uuid"`
}

func loadTypeIDVectors(t *testing.T, file string) []typeIDVector {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var v []typeIDVector
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTypeIDValidVectors checks the spec's valid.json both ways.
func TestTypeIDValidVectors(t *testing.T) {
	for _, v := range loadTypeIDVectors(t, "typeid_valid.json") {
		t.Run(v.Name, func(t *testing.T) {
			var u [16]byte
			prefix, err := public.ParseTypeID(u[:], v.TypeID)
			if err != nil {
				t.Fatalf("ParseTypeID(%q) = %v; want nil", v.TypeID, err)
			}
			if got := string(idgen.AppendUUIDText(nil, u[:])); prefix != v.Prefix || got != v.UUID {
				t.Errorf("ParseTypeID(%q) = %q, %s; want %q, %s", v.TypeID, prefix, got, v.Prefix, v.UUID)
			}
			var want [16]byte
			if err := idgen.ParseUUIDText(want[:], []byte(v.UUID)); err != nil {
				t.Fatal(err)
			}
			if got := string(public.AppendTypeID(nil, v.Prefix, want[:])); got != v.TypeID {
				t.Errorf("AppendTypeID(%q, %s) = %q; want %q", v.Prefix, v.UUID, got, v.TypeID)
			}
		})
	}
}

// TestTypeIDInvalidVectors checks that every string of the spec's
// invalid.json is refused with ErrSyntax or ErrOutOfRange.
func TestTypeIDInvalidVectors(t *testing.T) {
	for _, v := range loadTypeIDVectors(t, "typeid_invalid.json") {
		t.Run(v.Name, func(t *testing.T) {
			var u [16]byte
			prefix, err := public.ParseTypeID(u[:], v.TypeID)
			if !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) {
				t.Errorf("ParseTypeID(%q) = %q, %v; want ErrSyntax or ErrOutOfRange", v.TypeID, prefix, err)
			}
		})
	}
}

func FuzzParseTypeID(f *testing.F) {
	f.Add("user_01h455vb4pex5vsknk084sn02q")
	f.Add("7zzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Add("a_b_8zzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Fuzz(func(t *testing.T, text string) {
		var u [16]byte
		prefix, err := public.ParseTypeID(u[:], text)
		if err != nil {
			return
		}
		if got := string(public.AppendTypeID(nil, prefix, u[:])); got != text {
			t.Fatalf("AppendTypeID(ParseTypeID(%q)) = %q; want the same text", text, got)
		}
	})
}
