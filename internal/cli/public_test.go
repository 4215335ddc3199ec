package cli_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

const cliPublicKey = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef"

// TestGenPublic is issue 16's check: 10,000 public IDs of one fixed length
// in Crockford's alphabet, unique, their text order unrelated to issue
// order, each decoding (as inspect does) to the inner Snowflake ID and its
// fields.
func TestGenPublic(t *testing.T) {
	t.Setenv("IDGEN_PUBLIC_KEY", cliPublicKey)
	const spec = "public?inner=snowflake%3Fpreset%3Dtwitter%26worker%3D1&encoding=crockford"
	out, errs, code := run("gen", "-s", spec, "-n", "10000")
	if code != 0 {
		t.Fatalf("gen exit %d: %s", code, errs)
	}
	lines := strings.Fields(out)
	if len(lines) != 10000 {
		t.Fatalf("gen -n 10000 printed %d lines", len(lines))
	}
	re := regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{14}$`)
	seen := map[string]bool{}
	var prev uint64
	l, _ := snowflake.Preset("twitter")
	for i, line := range lines {
		if !re.MatchString(line) || seen[line] {
			t.Fatalf("ID %d %q: want 14 Crockford chars, unique", i, line)
		}
		seen[line] = true
		id, err := strategies.Options{LookupKey: os.LookupEnv}.ParseWith(line, spec)
		if err != nil {
			t.Fatalf("ParseWith(%q) = %v", line, err)
		}
		inner, ok := public.Inner(id)
		v, _ := inner.Uint64()
		p, _ := l.Decompose(v)
		if w, _ := p.Node("worker"); !ok || w != 1 || v <= prev {
			t.Fatalf("ID %q decodes to %d (worker %d) after %d; want increasing Snowflakes of worker 1", line, v, w, prev)
		}
		prev = v
	}
	if slices.IsSorted(lines) {
		t.Error("public IDs print in sorted order")
	}
	for _, line := range []string{lines[0], lines[9999]} {
		out, errs, code := run("inspect", line, "-s", spec, "--json")
		var r struct {
			Scheme string
			Inner  struct {
				ID, Scheme string
				Fields     map[string]any
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Scheme != "public" || r.Inner.Scheme != "snowflake" || r.Inner.Fields["worker"] != 1.0 {
			t.Fatalf("inspect %s = %q, exit %d (%s); want scheme public, inner snowflake of worker 1", line, out, code, errs)
		}
	}
}

func TestPublicKeyRefused(t *testing.T) {
	const spec = "public?inner=snowflake"
	for _, tt := range []struct{ name, key, want string }{
		{"missing", "", "IDGEN_PUBLIC_KEY is not set"},
		{"short", cliPublicKey[:60], "IDGEN_PUBLIC_KEY: key 1: want 64 hex digits (a 32-byte key), got 60 chars"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("IDGEN_PUBLIC_KEY", tt.key)
			out, errs, code := run("gen", "-s", spec)
			if code != 2 || out != "" || !strings.Contains(errs, tt.want) {
				t.Fatalf("gen with key %s = %q, exit %d, stderr %q; want exit 2 and %q", tt.name, out, code, errs, tt.want)
			}
			if tt.key != "" && strings.Contains(errs, tt.key[:16]) {
				t.Fatalf("stderr %q shows the key", errs)
			}
		})
	}
}

func TestGenInspectTypeID(t *testing.T) {
	out, errs, code := run("gen", "-s", "typeid?prefix=user", "-n", "3")
	lines := strings.Fields(out)
	if code != 0 || len(lines) != 3 {
		t.Fatalf("gen typeid = %q, exit %d (%s); want 3 lines", out, code, errs)
	}
	for _, line := range lines {
		if !regexp.MustCompile(`^user_[0-7][0-9a-hjkmnp-tv-z]{25}$`).MatchString(line) {
			t.Fatalf("TypeID %q is not user_ and 26 lowercase Crockford chars", line)
		}
	}
	out, errs, code = run("inspect", "user_01h455vb4pex5vsknk084sn02q", "-s", "typeid?prefix=user")
	for _, want := range []string{"scheme  typeid", "prefix  user", "time    2023-06-30T03:34:18.518Z", "ver         7"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("inspect TypeID = %q, exit %d (%s); want %q", out, code, errs, want)
		}
	}
}

func TestConvertEncoding(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"snowflake to crockford", []string{"1541815603606036480", "--encoding", "crockford"}, "1ASD13XH1F800"},
		{"crockford to bwmarrin base58", []string{"1ASD13XH1F800", "--from", "snowflake?encoding=crockford", "--encoding", "bwmarrin-base58"}, "4zzv4rZaYpj"},
		{"bwmarrin base58", []string{"1541815603606036480", "--encoding", "bwmarrin-base58"}, "4zzv4rZaYpj"},
		{"ulid to uuid in hex", []string{"01J8Z3YQ5V7KZ4X2M9N7P6R5T4", "--to", "uuid", "--encoding", "hex"}, "01923e3f5cbb3cfe4e8a89a9ec6c1744"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(append([]string{"convert"}, tc.args...)...)
			if code != 0 || strings.TrimSpace(out) != tc.want {
				t.Fatalf("convert %v = %q, exit %d (%s); want %q", tc.args, out, code, errOut, tc.want)
			}
		})
	}
	_, errOut, code := run("convert", "1541815603606036480")
	if code != 2 || !strings.Contains(errOut, "give --to SCHEME") {
		t.Fatalf("convert without --to or --encoding = exit %d, %q; want exit 2", code, errOut)
	}
	_, errOut, code = run("convert", "1541815603606036480", "--encoding", "base99")
	if code != 2 || !strings.Contains(errOut, `--encoding "base99": want one of`) {
		t.Fatalf("convert --encoding base99 = exit %d, %q; want exit 2 naming it", code, errOut)
	}
}

// TestPublicKeyFileRotation: keys from key_file=; a rotation (a new key
// first in the file, the old one kept) issues IDs under the new key ID
// while every ID issued under the old key decodes to the same inner ID;
// dropping the old key refuses its IDs by name; a holder of the old key
// alone cannot decode the new IDs.
func TestPublicKeyFileRotation(t *testing.T) {
	t.Setenv("IDGEN_PUBLIC_KEY", "")
	const keyA = cliPublicKey
	const keyB = "ffeeddccbbaa99887766554433221100fedcba9876543210fedcba9876543210"
	file := filepath.Join(t.TempDir(), "public.keys")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := "public?inner=snowflake%3Fpreset%3Dtwitter%26worker%3D1&key_file=" + url.QueryEscape(file)
	gen := func() []string {
		t.Helper()
		out, errs, code := run("gen", "-s", spec, "-n", "3")
		if code != 0 || len(strings.Fields(out)) != 3 {
			t.Fatalf("gen with key_file: exit %d, %q, %s", code, out, errs)
		}
		return strings.Fields(out)
	}
	inner := func(id string) string {
		t.Helper()
		out, errs, code := run("inspect", id, "-s", spec, "--json")
		var r struct{ Inner struct{ ID string } }
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Inner.ID == "" {
			t.Fatalf("inspect %s: exit %d, %q, %s", id, code, out, errs)
		}
		return r.Inner.ID
	}
	write(keyA + "\n")
	old := gen()
	before := map[string]string{}
	for _, id := range old {
		if id[0] != '0' {
			t.Fatalf("ID %s under a bare key: want key ID 0 first", id)
		}
		before[id] = inner(id)
	}

	write("# rotated: B issues, A still decodes\n1:" + keyB + "\n0:" + keyA + "\n")
	for _, id := range gen() {
		if id[0] != '1' {
			t.Fatalf("ID %s after the rotation: want key ID 1 first", id)
		}
		inner(id)
	}
	for _, id := range old {
		if got := inner(id); got != before[id] {
			t.Fatalf("ID %s under the old key decodes to %s after the rotation; before it %s", id, got, before[id])
		}
	}
	fresh := gen()[0]

	// The old key dropped: its IDs are refused, naming the key ID.
	write("1:" + keyB + "\n")
	if out, errs, code := run("inspect", old[0], "-s", spec); code != 2 || !strings.Contains(errs, "names key ID 0, which no configured key has") {
		t.Fatalf("inspect an old ID without its key: exit %d, %q, %s; want exit 2 naming key ID 0", code, out, errs)
	}
	// A holder of the old key alone cannot decode the new IDs.
	write("0:" + keyA + "\n")
	if out, errs, code := run("inspect", fresh, "-s", spec); code != 2 || !strings.Contains(errs, "names key ID 1, which no configured key has") {
		t.Fatalf("inspect a new ID with the old key alone: exit %d, %q, %s; want exit 2 naming key ID 1", code, out, errs)
	}

	write("# no key yet\n")
	for _, c := range []struct {
		name, spec, want string
	}{
		{"empty file", spec, "key_file " + file + " is not set or holds no key"},
		{"missing file", "public?inner=snowflake&key_file=/nonexistent/keys", "key_file: open /nonexistent/keys"},
		{"key_file and key_env", spec + "&key_env=IDGEN_PUBLIC_KEY", "key_file and key_env both name the key: give one"},
	} {
		if out, errs, code := run("gen", "-s", c.spec); code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q, %s; want exit 2 and %q", c.name, code, out, errs, c.want)
		}
	}
	write("0:" + keyA[:60] + "\n")
	if _, errs, code := run("gen", "-s", spec); code != 2 || !strings.Contains(errs, "want 64 hex digits") || strings.Contains(errs, keyA[:16]) {
		t.Errorf("short key in the file: exit %d, %s; want exit 2, the key not shown", code, errs)
	}
}
