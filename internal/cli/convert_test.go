package cli_test

import (
	"strings"
	"testing"

	"github.com/idgenkit/idgen/strategies"
)

func TestConvert(t *testing.T) {
	v7, _ := strategies.NewUUIDv7().Next(t.Context())
	ulidOfV7, err := strategies.Convert(v7, strategies.ULIDScheme())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, to, want string
	}{
		{name: "ulid to uuid", id: "01J8Z3YQ5V7KZ4X2M9N7P6R5T4", to: "uuid", want: "01923e3f-5cbb-3cfe-4e8a-89a9ec6c1744"},
		{name: "uuid to ulid", id: "01923e3f-5cbb-3cfe-4e8a-89a9ec6c1744", to: "ulid", want: "01J8Z3YQ5V7KZ4X2M9N7P6R5T4"},
		{name: "uuidv7 to ulid", id: v7.String(), to: "ulid", want: ulidOfV7.String()},
		{name: "ulid of a uuidv7 to uuidv7", id: ulidOfV7.String(), to: "uuidv7", want: v7.String()},
		{name: "uuidv7 to uuid", id: v7.String(), to: "uuid", want: v7.String()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run("convert", tc.id, "--to", tc.to)
			if code != 0 || strings.TrimSpace(out) != tc.want {
				t.Fatalf("convert %s --to %s = %q, exit %d (%s); want %q", tc.id, tc.to, out, code, errOut, tc.want)
			}
		})
	}
}

func TestConvertRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{name: "uuidv4 to ulid", args: []string{"9a022e15-b4c1-413f-bbab-c386711b3b2d", "--to", "ulid"}, msg: "uuidv4 -> ulid"},
		{name: "lossy ulid to uuidv7", args: []string{"01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--to", "uuidv7"}, msg: "is lossy"},
		{name: "snowflake to uuid", args: []string{"1541815603606036480", "--to", "uuid"}, msg: "snowflake"},
		{name: "unknown target", args: []string{"01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--to", "uuidv8"}, msg: `--to "uuidv8": want one of uuid, ulid, uuidv7, uuidv4`},
		{name: "bad id", args: []string{"not-an-id", "--to", "uuid"}, msg: "not-an-id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(append([]string{"convert"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("convert %v = exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.msg)
			}
		})
	}
}

// TestConvertRefusalWording: a refused pair gives its reason and lists the
// conversions as text, not Go's print of a slice (issue 28, step 7).
func TestConvertRefusalWording(t *testing.T) {
	const defined = "; defined: ulid -> uuid, uuid -> ulid, uuidv7 -> ulid, ulid -> uuidv7, uuidv7 -> uuid, uuidv4 -> uuid, uuid -> uuidv7, uuid -> uuidv4\n"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "uuidv4 to ulid", args: []string{"9a022e15-b4c1-413f-bbab-c386711b3b2d", "--to", "ulid"},
			want: "idgen: strategies: no such conversion: uuidv4 -> ulid: a UUIDv4 has no time to make a ULID of" + defined},
		{name: "ulid to uuidv4", args: []string{"01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--to", "uuidv4"},
			want: "idgen: strategies: no such conversion: ulid -> uuidv4: a ULID's time has no place in a UUIDv4" + defined},
		{name: "snowflake to uuid", args: []string{"1541815603606036480", "--to", "uuid"},
			want: "idgen: strategies: no such conversion: snowflake -> uuid: only a ULID and a UUID hold the same 128 bits; a snowflake ID is neither" + defined},
		{name: "encoded ulid to uuid", args: []string{"01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--from", "ulid?encoding=crockford", "--to", "uuid"},
			want: "idgen: strategies: no such conversion: ulid -> uuid: the ulid ID is read in another text encoding (encoding=): Convert takes the scheme's own" + defined},
		{name: "lossy ulid to uuidv7", args: []string{"01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--to", "uuidv7"},
			want: "idgen: strategies: no such conversion: ulid 01J8Z3YQ5V7KZ4X2M9N7P6R5T4 -> uuidv7 is lossy: 01923e3f-5cbb-7cfe-8e8a-89a9ec6c1744 does not convert back to it (a ULID becomes a UUIDv7 exactly only when it came from one)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(append([]string{"convert"}, tc.args...)...)
			if code != 2 || errOut != tc.want {
				t.Fatalf("convert %v = exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
			}
		})
	}
}

// TestConvertHelpFrom: convert --help shows --from with '?encoding=', the
// form that works for a bare strategy name, and that form reads an ID.
func TestConvertHelpFrom(t *testing.T) {
	out, _, code := run("convert", "--help")
	want := "--from 'STRATEGY?encoding=NAME' reads an ID written in one (a spec with keys\nadds &encoding=NAME)."
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "SPEC&encoding") {
		t.Fatalf("convert --help = exit %d, %q; want %q", code, out, want)
	}
	out, errOut, code := run("convert", "01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--from", "ulid?encoding=crockford", "--encoding", "base62")
	if code != 0 || out != "02xpBk0ljJ3kRQnmSxdOlA\n" {
		t.Fatalf("convert --from 'ulid?encoding=crockford' --encoding base62 = exit %d, %q (%s); want 02xpBk0ljJ3kRQnmSxdOlA", code, out, errOut)
	}
}
