package strategies_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/strategies"
)

const testPublicKey = "8f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

// withEnv returns Options whose LookupKey reads env.
func withEnv(env map[string]string) strategies.Options {
	return strategies.Options{LookupKey: func(name string) (string, bool) { v, ok := env[name]; return v, ok }}
}

func TestPublicSpec(t *testing.T) {
	opts := withEnv(map[string]string{"IDGEN_PUBLIC_KEY": testPublicKey, "OTHER_KEY": "1:" + testPublicKey})
	for _, tt := range []struct {
		name, spec string
		width      int
		start      byte
		innerName  string
	}{
		{"snowflake crockford", "public?inner=snowflake%3Fpreset%3Dtwitter%26worker%3D1&encoding=crockford", 14, '0', "snowflake"},
		{"default encoding", "public?inner=snowflake", 14, '0', "snowflake"},
		{"check symbol, other variable", "public?inner=snowflake&encoding=crockford-check&key_env=OTHER_KEY", 15, '1', "snowflake"},
		{"uuidv7 base58", "public?inner=uuidv7&encoding=base58", 23, '0', "uuidv7"},
		{"ulid", "public?inner=ulid", 27, '0', "ulid"},
		{"tweak", "public?inner=snowflake&tweak=order", 14, '0', "snowflake"},
		{"typeid, its prefix as tweak", "public?inner=typeid%3Fprefix%3Duser&tweak=user", 27, '0', "typeid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := opts.NewText(context.Background(), tt.spec)
			if err != nil {
				t.Fatalf("New(%q) = %v", tt.spec, err)
			}
			for range 100 {
				id, err := g.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				text := id.String()
				if len(text) != tt.width || text[0] != tt.start {
					t.Fatalf("ID %q: want %d chars starting with key ID %c", text, tt.width, tt.start)
				}
				back, err := opts.ParseWith(text, tt.spec)
				if err != nil || back.String() != text {
					t.Fatalf("ParseWith(%q, %q) = %v, %v; want it back", text, tt.spec, back, err)
				}
				inner, ok := public.Inner(back)
				if !ok || inner.Scheme().Name != tt.innerName || !inner.Time().Equal(id.Time()) || inner.Time().IsZero() {
					t.Fatalf("Inner(%q) = %v (%s, %v), %v; want a %s of time %v", text, inner, inner.Scheme(), inner.Time(), ok, tt.innerName, id.Time())
				}
			}
		})
	}
}

func TestPublicSpecRefused(t *testing.T) {
	opts := withEnv(map[string]string{"SHORT": testPublicKey[:62], "IDGEN_PUBLIC_KEY": testPublicKey})
	for _, tt := range []struct {
		name, spec string
		want       []string
	}{
		{"missing key", "public?inner=snowflake&key_env=NOPE", []string{"NOPE is not set", "64 hex digits"}},
		{"short key", "public?inner=snowflake&key_env=SHORT", []string{"SHORT", "want 64 hex digits", "got 62 chars"}},
		{"no inner", "public", []string{"inner is required"}},
		{"bad inner", "public?inner=snowflak", []string{`unknown strategy "snowflak"`}},
		{"96-bit inner", "public?inner=xid", []string{"96 bits"}},
		{"bwmarrin encoding", "public?inner=snowflake&encoding=bwmarrin-base58", []string{"encoding=\"bwmarrin-base58\"", "crockford"}},
		{"tweak of 65 bytes", "public?inner=snowflake&tweak=" + strings.Repeat("t", 65), []string{`tweak="tttttttt`, "at most 64 bytes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := opts.NewText(context.Background(), tt.spec)
			if !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("New(%q) = %v; want ErrSpec", tt.spec, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("New(%q) = %v; want it to say %q", tt.spec, err, w)
				}
			}
			if strings.Contains(err.Error(), testPublicKey[:16]) {
				t.Errorf("New(%q) = %v: shows the key", tt.spec, err)
			}
			if _, err := opts.SchemeOf(strategies.MustParse(tt.spec)); !errors.Is(err, strategies.ErrSpec) {
				t.Errorf("SchemeOf(%q) = %v; want ErrSpec", tt.spec, err)
			}
		})
	}
}

// TestPublicSpecTweak checks that tweak= separates domains: a public ID
// reads back to its inner ID under its own spec only, and under another
// tweak (or none) to another inner ID, without an error (FF1 cannot tell).
func TestPublicSpecTweak(t *testing.T) {
	opts := withEnv(map[string]string{"IDGEN_PUBLIC_KEY": testPublicKey})
	const inner = "snowflake%3Fpreset%3Dtwitter%26worker%3D3"
	user := "public?inner=" + inner + "&tweak=user"
	g, err := opts.NewText(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		id := mustNext(t, g)
		in, _ := public.Inner(id)
		want, _ := in.Uint64()
		for _, tt := range []struct {
			spec string
			same bool
		}{
			{user, true},
			{"public?inner=" + inner + "&tweak=order", false},
			{"public?inner=" + inner, false},
		} {
			back, err := opts.ParseWith(id.String(), tt.spec)
			if err != nil {
				t.Fatalf("ParseWith(%q, %q) = %v", id, tt.spec, err)
			}
			in, ok := public.Inner(back)
			got, _ := in.Uint64()
			if !ok || (got == want) != tt.same {
				t.Fatalf("Inner(ParseWith(%q, %q)) = %d, %v; want the issued inner ID %d: %v", id, tt.spec, got, ok, want, tt.same)
			}
		}
	}
}

// TestEncodingKey checks encoding= on strategies that do not take it
// themselves: same IDs, new text, parsed back by the same spec.
func TestEncodingKey(t *testing.T) {
	for _, tt := range []struct {
		spec string
		re   string
	}{
		{"snowflake?preset=twitter&encoding=crockford", `^[0-9A-HJKMNP-TV-Z]{13}$`},
		{"snowflake?encoding=crockford-check", `^[0-9A-HJKMNP-TV-Z]{13}[0-9A-HJKMNP-TV-Z*~$=U]$`},
		{"snowflake?encoding=bwmarrin-base32", `^[ybndrfg8ejkmcpqxot1uwisza345h769]+$`},
		{"uuidv7?encoding=base62", `^[0-9A-Za-z]{22}$`},
		{"ulid?encoding=hex", `^[0-9a-f]{32}$`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			g, err := strategies.NewText(context.Background(), tt.spec)
			if err != nil {
				t.Fatalf("New(%q) = %v", tt.spec, err)
			}
			dst := make([]idgen.ID, 50)
			if _, err := idgen.NextN(context.Background(), g, dst); err != nil {
				t.Fatal(err)
			}
			for _, id := range dst {
				text := id.String()
				if !regexp.MustCompile(tt.re).MatchString(text) {
					t.Fatalf("ID %q does not match %s", text, tt.re)
				}
				back, err := strategies.ParseWith(text, tt.spec)
				if err != nil || back != id {
					t.Fatalf("ParseWith(%q, %q) = %v, %v; want %v", text, tt.spec, back, err, id)
				}
			}
		})
	}
	if _, err := strategies.NewText(context.Background(), "uuidv7?encoding=bwmarrin-base2"); !errors.Is(err, strategies.ErrSpec) || !strings.Contains(err.Error(), "64-bit IDs only") {
		t.Errorf(`New("uuidv7?encoding=bwmarrin-base2") = %v; want ErrSpec: 64-bit IDs only`, err)
	}
	if _, err := strategies.NewText(context.Background(), "snowflake?encoding=base99"); !errors.Is(err, strategies.ErrSpec) || !strings.Contains(err.Error(), `encoding="base99"`) {
		t.Errorf(`New("snowflake?encoding=base99") = %v; want ErrSpec naming encoding="base99"`, err)
	}
}

var typeIDRe = regexp.MustCompile(`^user_[0-7][0-9a-hjkmnp-tv-z]{25}$`)

func TestTypeIDSpec(t *testing.T) {
	const spec = "typeid?prefix=user"
	g, err := strategies.NewText(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var prev string
	for range 100 {
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		text := id.String()
		if !typeIDRe.MatchString(text) || text <= prev {
			t.Fatalf("TypeID %q (after %q): want %s, increasing", text, prev, typeIDRe)
		}
		prev = text
		back, err := strategies.ParseWith(text, spec)
		if err != nil || back != id {
			t.Fatalf("ParseWith(%q) = %v, %v", text, back, err)
		}
		if p, ok := strategies.TypeIDPrefix(back); !ok || p != "user" {
			t.Fatalf("TypeIDPrefix(%q) = %q, %v; want user", text, p, ok)
		}
		if f := back.Scheme().Decompose(back); f[1].Name != "ver" || f[1].Value != 7 || back.Time().IsZero() {
			t.Fatalf("Decompose(%q) = %v; want a UUIDv7", text, f)
		}
	}
	if _, err := strategies.ParseWith("post_01h455vb4pex5vsknk084sn02q", spec); !errors.Is(err, idgen.ErrSyntax) || !strings.Contains(err.Error(), `want "user"`) {
		t.Errorf("ParseWith(post_...) = %v; want ErrSyntax naming prefix user", err)
	}
	if _, err := strategies.NewText(context.Background(), "typeid?prefix=User"); !errors.Is(err, strategies.ErrSpec) || !strings.Contains(err.Error(), "a-z") {
		t.Errorf(`New("typeid?prefix=User") = %v; want ErrSpec naming a-z`, err)
	}
	if g, err := strategies.NewText(context.Background(), "typeid"); err != nil || !regexp.MustCompile(`^[0-7][0-9a-hjkmnp-tv-z]{25}$`).MatchString(mustNext(t, g).String()) {
		t.Errorf(`New("typeid") = %v; want TypeIDs with no prefix and no _`, err)
	}
}

func mustNext(t *testing.T, g idgen.Generator) idgen.ID {
	t.Helper()
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// BenchmarkPublicSnowflake measures, in one run, the cost per ID of a
// public spec in crockford (issue and text) against its inner Snowflake
// spec alone (issue and decimal text), and of the public spec writing
// into a reused buffer with AppendNext (public-append, no allocation). The
// layout's 21-bit sequence keeps the inner generator from waiting for the
// next millisecond.
func BenchmarkPublicSnowflake(b *testing.B) {
	const inner = "snowflake?layout=time:41,worker:1,sequence:21"
	opts := strategies.Options{LookupKey: func(string) (string, bool) { return testPublicKey, true }}
	pub := strategies.MustParse("public?encoding=crockford").With("inner", inner)
	for _, spec := range []string{inner, pub.String()} {
		g, err := opts.NewText(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.SplitN(spec, "?", 2)[0], func(b *testing.B) {
			ctx := context.Background()
			var buf []byte
			for b.Loop() {
				id, _ := g.Next(ctx)
				buf, _ = id.AppendText(buf[:0])
			}
		})
		if pg, ok := g.(*public.Generator); ok {
			b.Run("public-append", func(b *testing.B) {
				ctx := context.Background()
				var buf []byte
				for b.Loop() {
					buf, _ = pg.AppendNext(ctx, buf[:0])
				}
			})
		}
	}
}
