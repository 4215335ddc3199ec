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
