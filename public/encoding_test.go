package public_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bwmarrin/snowflake"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

func enc(t testing.TB, name string) *public.Encoding {
	t.Helper()
	e, err := public.LookupEncoding(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func TestEncodingKnownValues(t *testing.T) {
	max128 := []byte(strings.Repeat("\xff", 16))
	tests := []struct {
		name, enc string
		b         []byte
		want      string
	}{
		{"crockford zero", "crockford", be64(0), "0000000000000"},
		{"crockford one", "crockford", be64(1), "0000000000001"},
		{"crockford max64", "crockford", be64(1<<64 - 1), "FZZZZZZZZZZZZ"},
		{"crockford max128", "crockford", max128, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{"crockford-check 1", "crockford-check", be64(1), "00000000000011"},
		{"crockford-check 36", "crockford-check", be64(36), "0000000000014U"},
		{"crockford-check 32", "crockford-check", be64(32), "0000000000010*"},
		{"base58 max64", "base58", be64(1<<64 - 1), "jpXCZedGfVQ"},
		{"base58 zero", "base58", be64(0), "11111111111"},
		{"base62 max64", "base62", be64(1<<64 - 1), "LygHa16AHYF"},
		{"base36 max64", "base36", be64(1<<64 - 1), "3w5e11264sgsf"},
		{"hex", "hex", be64(0xdeadbeef), "00000000deadbeef"},
		{"hex 128", "hex", max128, strings.Repeat("f", 32)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := enc(t, tt.enc)
			if got := string(e.AppendText(nil, tt.b)); got != tt.want {
				t.Errorf("%s.AppendText(%x) = %q; want %q", tt.enc, tt.b, got, tt.want)
			}
			b := make([]byte, len(tt.b))
			if err := e.ParseText(b, []byte(tt.want)); err != nil || string(b) != string(tt.b) {
				t.Errorf("%s.ParseText(%q) = %x, %v; want %x", tt.enc, tt.want, b, err, tt.b)
			}
			if w := e.Width(len(tt.b)); w != len(tt.want) {
				t.Errorf("%s.Width(%d) = %d; want %d", tt.enc, len(tt.b), w, len(tt.want))
			}
		})
	}
}

func TestCrockfordReading(t *testing.T) {
	e := enc(t, "crockford")
	want := be64(0x0123456789abcdef)
	canon := string(e.AppendText(nil, want))
	for _, text := range []string{canon, strings.ToLower(canon), strings.NewReplacer("1", "I").Replace(canon),
		strings.NewReplacer("1", "l", "0", "O").Replace(canon), canon[:4] + "-" + canon[4:8] + "-" + canon[8:]} {
		b := make([]byte, 8)
		if err := e.ParseText(b, []byte(text)); err != nil || string(b) != string(want) {
			t.Errorf("crockford.ParseText(%q) = %x, %v; want %x", text, b, err, want)
		}
	}
	for _, tt := range []struct {
		text string
		want error
	}{
		{"G000000000000", idgen.ErrOutOfRange}, // 65 bits
		{"000000000000", idgen.ErrSyntax},      // 12 chars
		{"000000000000U", idgen.ErrSyntax},     // U is not a digit
		{"", idgen.ErrSyntax},
	} {
		if err := e.ParseText(make([]byte, 8), []byte(tt.text)); !errors.Is(err, tt.want) {
			t.Errorf("crockford.ParseText(%q) = %v; want %v", tt.text, err, tt.want)
		}
	}
}

// TestCrockfordCheckCatches checks that the mod-37 check symbol refuses
// every single-character substitution and every adjacent transposition of
// a sample of IDs.
func TestCrockfordCheckCatches(t *testing.T) {
	e := enc(t, "crockford-check")
	r := rand.New(rand.NewPCG(3, 4))
	for range 40 {
		text := []byte(e.AppendText(nil, be64(r.Uint64())))
		for i := range text {
			for _, c := range []byte(public.CrockfordCheckSymbols) {
				if c == text[i] || i < len(text)-1 && c > 'Z' || i < len(text)-1 && c == 'U' {
					continue
				}
				typo := append([]byte(nil), text...)
				typo[i] = c
				if err := e.ParseText(make([]byte, 8), typo); !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) {
					t.Fatalf("crockford-check.ParseText(%q), a typo of %q = %v; want an error", typo, text, err)
				}
			}
			if i+1 < len(text) && text[i] != text[i+1] {
				swap := append([]byte(nil), text...)
				swap[i], swap[i+1] = swap[i+1], swap[i]
				if err := e.ParseText(make([]byte, 8), swap); err == nil {
					t.Fatalf("crockford-check.ParseText(%q), a swap of %q = nil; want an error", swap, text)
				}
			}
		}
	}
}

// TestBwmarrinForms checks each bwmarrin-* encoding against bwmarrin's own
// methods and parsers, both ways.
func TestBwmarrinForms(t *testing.T) {
	node, err := snowflake.NewNode(7)
	if err != nil {
		t.Fatal(err)
	}
	ids := []snowflake.ID{0, 1, 31, 32, 57, 58, 1<<63 - 1}
	for range 20 {
		ids = append(ids, node.Generate())
	}
	forms := []struct {
		enc    string
		format func(snowflake.ID) string
		parse  func(string) (snowflake.ID, error)
	}{
		{"bwmarrin-base2", snowflake.ID.Base2, snowflake.ParseBase2},
		{"bwmarrin-base32", snowflake.ID.Base32, func(s string) (snowflake.ID, error) { return snowflake.ParseBase32([]byte(s)) }},
		{"bwmarrin-base36", snowflake.ID.Base36, snowflake.ParseBase36},
		{"bwmarrin-base58", snowflake.ID.Base58, func(s string) (snowflake.ID, error) { return snowflake.ParseBase58([]byte(s)) }},
		{"bwmarrin-base64", snowflake.ID.Base64, snowflake.ParseBase64},
	}
	for _, f := range forms {
		t.Run(f.enc, func(t *testing.T) {
			e := enc(t, f.enc)
			for _, id := range ids {
				want := f.format(id)
				got := string(e.AppendText(nil, be64(uint64(id))))
				if got != want {
					t.Fatalf("%s.AppendText(%d) = %q; want bwmarrin's %q", f.enc, id, got, want)
				}
				b := make([]byte, 8)
				if err := e.ParseText(b, []byte(want)); err != nil || binary.BigEndian.Uint64(b) != uint64(id) {
					t.Fatalf("%s.ParseText(%q) = %d, %v; want %d", f.enc, want, binary.BigEndian.Uint64(b), err, id)
				}
				if back, err := f.parse(got); err != nil || back != id {
					t.Fatalf("bwmarrin parse(%q) = %d, %v; want %d", got, back, err, id)
				}
			}
			if err := e.ParseText(make([]byte, 16), []byte("1")); !errors.Is(err, public.ErrEncoding) {
				t.Errorf("%s.ParseText into 16 bytes = %v; want ErrEncoding", f.enc, err)
			}
		})
	}
}

func TestLookupEncodingUnknown(t *testing.T) {
	_, err := public.LookupEncoding("base99")
	if !errors.Is(err, public.ErrEncoding) || !strings.Contains(err.Error(), `"base99"`) || !strings.Contains(err.Error(), "crockford") {
		t.Errorf(`LookupEncoding("base99") = %v; want ErrEncoding naming it and the choices`, err)
	}
}

// FuzzEncodings checks every encoding's round trip: what ParseText accepts
// re-encodes to text that parses to the same bytes, and every 8- and
// 16-byte value encodes to text that parses back.
func FuzzEncodings(f *testing.F) {
	f.Add("0000000000001", uint64(1), uint64(2))
	f.Add("FZZZZZZZZZZZZ", uint64(1<<64-1), uint64(0))
	f.Add("jpXCZedGfVQ", uint64(58), uint64(1<<63))
	f.Add("MTIzNA==", uint64(1234), uint64(5))
	f.Fuzz(func(t *testing.T, text string, hi, lo uint64) {
		for _, e := range public.Encodings() {
			for _, size := range []int{8, 16} {
				if e.Fits(size) != nil {
					continue
				}
				v := binary.BigEndian.AppendUint64(be64(hi), lo)[:size]
				out := e.AppendText(nil, v)
				b := make([]byte, size)
				if err := e.ParseText(b, out); err != nil || string(b) != string(v) {
					t.Fatalf("%s.ParseText(%s.AppendText(%x) = %q) = %x, %v", e.Name, e.Name, v, out, b, err)
				}
				if err := e.ParseText(b, []byte(text)); err != nil {
					if !errors.Is(err, idgen.ErrSyntax) && !errors.Is(err, idgen.ErrOutOfRange) {
						t.Fatalf("%s.ParseText(%q) = %v; want ErrSyntax or ErrOutOfRange", e.Name, text, err)
					}
					continue
				}
				canon := e.AppendText(nil, b)
				b2 := make([]byte, size)
				if err := e.ParseText(b2, canon); err != nil || string(b2) != string(b) {
					t.Fatalf("%s: %q parses to %x, re-encoded %q parses to %x, %v", e.Name, text, b, canon, b2, err)
				}
			}
		}
	})
}
