package idgen_test

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
)

var _ flag.Value = (*idgen.ID)(nil)

func TestIDFlag(t *testing.T) {
	const uuidText = "0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f"
	tests := []struct {
		name    string
		start   idgen.ID // the value the flag starts from: its scheme is fixed
		arg     string
		want    string // String() after Parse
		scheme  *idgen.Scheme
		wantErr error
	}{
		{"uuid scheme", uuidScheme.Zero(), uuidText, uuidText, uuidScheme, nil},
		{"default replaced", idgen.Int64Scheme().FromUint64(5), "42", "42", idgen.Int64Scheme(), nil},
		{"no scheme refuses an integer", idgen.ID{}, "178294819283726336", "", nil, idgen.ErrNoScheme},
		{"integer refused by uuid", uuidScheme.Zero(), "42", "00000000-0000-0000-0000-000000000000", uuidScheme, idgen.ErrSyntax},
		{"not decimal", idgen.Int64Scheme().FromUint64(5), "12x", "5", idgen.Int64Scheme(), idgen.ErrSyntax},
		{"past 2^64-1", idgen.Int64Scheme().Zero(), "18446744073709551616", "0", idgen.Int64Scheme(), idgen.ErrOutOfRange},
		{"no scheme, not an integer", idgen.ID{}, uuidText, "", nil, idgen.ErrNoScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			id := tt.start
			fs.Var(&id, "id", "an `ID`")
			err := fs.Parse([]string{"-id", tt.arg})
			// flag formats Set's error with %v: match its text.
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && (err == nil || !strings.Contains(err.Error(), tt.wantErr.Error())) {
				t.Fatalf("Parse(-id %q) error = %v; want %v", tt.arg, err, tt.wantErr)
			}
			if id.String() != tt.want || id.Scheme() != tt.scheme {
				t.Errorf("after -id %q: %q of %v; want %q of %v", tt.arg, id, id.Scheme(), tt.want, tt.scheme)
			}
		})
	}
}

func TestIDSetKeepsSchemeOnError(t *testing.T) {
	id := uuidScheme.MustParse("0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f")
	before := id
	if err := id.Set("0190f1d2"); !errors.Is(err, idgen.ErrSyntax) {
		t.Fatalf("Set(%q) error = %v; want ErrSyntax", "0190f1d2", err)
	}
	if id != before {
		t.Errorf("Set with bad text changed the ID to %v; want %v", id, before)
	}
}
