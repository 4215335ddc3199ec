package strategies_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/speccount"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

func TestSpec(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // String() of the parsed spec
		specName   string
		keys       []string
	}{
		{"bare name", " uuidv7 ", "uuidv7", "uuidv7", nil},
		{"keys in order", "snowflake?worker=7&preset=twitter", "snowflake?worker=7&preset=twitter", "snowflake", []string{"worker", "preset"}},
		{"escapes decoded and written back", "public?inner=snowflake%3Fpreset%3Dtwitter%26worker%3D1", "public?inner=snowflake?preset=twitter%26worker=1", "public", []string{"inner"}},
		{"plus stays plus", "a?k=x+y", "a?k=x+y", "a", []string{"k"}},
		{"space and percent escaped", "a?k=50%25%20off", "a?k=50%25%20off", "a", []string{"k"}},
		{"key without value", "a?k", "a?k=", "a", []string{"k"}},
		{"empty query", "a?", "a", "a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := strategies.ParseSpec(tt.text)
			if err != nil || s.String() != tt.want || s.Name() != tt.specName || !slices.Equal(s.Keys(), tt.keys) {
				t.Fatalf("ParseSpec(%q) = %q (name %q, keys %q), %v; want %q (name %q, keys %q)", tt.text, s, s.Name(), s.Keys(), err, tt.want, tt.specName, tt.keys)
			}
		})
	}
}

func TestSpecWith(t *testing.T) {
	s := strategies.MustParse("snowflake?worker=7&preset=twitter")
	if got, want := s.With("worker", "8").String(), "snowflake?worker=8&preset=twitter"; got != want {
		t.Errorf("With(worker, 8) = %q; want %q (set in place)", got, want)
	}
	if got, want := s.With("worker_source", "etcd://h:2379/ns?ttl=5s&workers=4").String(),
		"snowflake?worker=7&preset=twitter&worker_source=etcd://h:2379/ns?ttl=5s%26workers=4"; got != want {
		t.Errorf("With(worker_source, ...) = %q; want %q (appended, '&' escaped)", got, want)
	}
	if got, want := s.Without("worker").With("worker", "9").String(), "snowflake?preset=twitter&worker=9"; got != want {
		t.Errorf("Without(worker).With(worker, 9) = %q; want %q", got, want)
	}
	if got, want := s.With("a=b", "c").String(), "snowflake?worker=7&preset=twitter&a%3Db=c"; got != want {
		t.Errorf("With(a=b, c) = %q; want %q ('=' escaped in a key)", got, want)
	}
	if v, ok := s.Get("preset"); !ok || v != "twitter" {
		t.Errorf("Get(preset) = %q, %v; want twitter, true", v, ok)
	}
	if v, ok := s.Get("epoch"); ok || v != "" {
		t.Errorf("Get(epoch) = %q, %v; want \"\", false", v, ok)
	}
	if s.String() != "snowflake?worker=7&preset=twitter" {
		t.Errorf("With changed its receiver: %q", s)
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name, text, key, value, msg string
	}{
		{"key twice", "a?k=1&k=2", "k", "2", `strategies: invalid spec: a: key "k" given twice`},
		{"bad value escape", "a?k=%zz", "k", "%zz", `strategies: invalid spec: a: k="%zz" is not valid percent-encoding`},
		{"bad key escape", "a?%g=1", "%g", "1", `strategies: invalid spec: a: key "%g" is not valid percent-encoding`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := strategies.ParseSpec(tt.text)
			se, ok := errors.AsType[*strategies.SpecError](err)
			if !ok || se.Key != tt.key || se.Value != tt.value || se.Spec != tt.text || err.Error() != tt.msg || !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("ParseSpec(%q) = %#v; want a *SpecError of key %q value %q: %s", tt.text, err, tt.key, tt.value, tt.msg)
			}
		})
	}
	_, err := strategies.NewText(t.Context(), "snowflak?worker=1")
	if se, ok := errors.AsType[*strategies.SpecError](err); !ok || se.Key != "" || se.Value != "snowflak" {
		t.Fatalf("New(snowflak) = %#v; want a *SpecError naming the strategy", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustParse(a?k=%zz) did not panic")
		}
	}()
	strategies.MustParse("a?k=%zz")
}

func TestSplitList(t *testing.T) {
	isBase := func(name string) bool { return name == "bigserial" }
	tests := []struct {
		in   string
		want []string
	}{
		{"uuidv4,uuidv7", []string{"uuidv4", "uuidv7"}},
		{"snowflake?layout=time:41,worker:10,sequence:12,uuidv4", []string{"snowflake?layout=time:41,worker:10,sequence:12", "uuidv4"}},
		{"snowflake?preset=twitter,bigserial", []string{"snowflake?preset=twitter", "bigserial"}},
		{"snowflake?preset=twitter, snowflake?preset=discord", []string{"snowflake?preset=twitter", " snowflake?preset=discord"}},
		{"snowflake?preset=twitter,,uuidv7", []string{"snowflake?preset=twitter", "", "uuidv7"}},
		{"uuidv4,nope", []string{"uuidv4", "nope"}},
		{"", []string{""}},
	}
	for _, tt := range tests {
		if got := strategies.SplitList(tt.in, isBase); !slices.Equal(got, tt.want) {
			t.Errorf("SplitList(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := strategies.SplitList("snowflake?preset=twitter,bigserial", nil); !slices.Equal(got, []string{"snowflake?preset=twitter,bigserial"}) {
		t.Errorf("SplitList without isName = %q; want bigserial kept in the query", got)
	}
}

// TestSnowflakeLayoutSpecErrors checks that an unknown preset, a bad
// layout and a bad epoch are *SpecErrors naming the key, as every other bad
// value is, and still wrap the layout's error.
func TestSnowflakeLayoutSpecErrors(t *testing.T) {
	tests := []struct{ spec, key, value, msg string }{
		{"snowflake?preset=twiter", "preset", "twiter", `strategies: invalid spec: snowflake: invalid layout: unknown preset "twiter"; allowed baidu, default, discord,`},
		{"snowflake?layout=time:41,worker:30", "layout", "time:41,worker:30", "strategies: invalid spec: snowflake: invalid layout:"},
		{"snowflake?preset=twitter&epoch=soon", "epoch", "soon", "strategies: invalid spec: snowflake: invalid layout:"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			_, err := strategies.NewText(context.Background(), tc.spec)
			se, ok := errors.AsType[*strategies.SpecError](err)
			if !ok || se.Key != tc.key || se.Value != tc.value || !errors.Is(err, strategies.ErrSpec) || !errors.Is(err, snowflake.ErrInvalidLayout) || !strings.HasPrefix(err.Error(), tc.msg) {
				t.Fatalf("New(%q) = %#v; want a *SpecError of key %q value %q wrapping ErrSpec and ErrInvalidLayout: %s...", tc.spec, err, tc.key, tc.value, tc.msg)
			}
			if _, err := strategies.SchemeOf(strategies.MustParse(tc.spec)); !errors.Is(err, strategies.ErrSpec) {
				t.Fatalf("SchemeOf(%q) = %v; want ErrSpec", tc.spec, err)
			}
		})
	}
}

// TestSpecNotReparsed: New, SchemeOf, Keyspace and Resolve take the parsed
// Spec and parse no text; NewText and CheckSpec parse once. An unknown
// key of a Spec built with With is refused by Resolve, as CheckSpec
// refuses it in text.
func TestSpecNotReparsed(t *testing.T) {
	spec := strategies.MustParse("snowflake?preset=twitter&worker=3")
	before := speccount.N()
	g, err := strategies.New(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	g.(io.Closer).Close()
	if _, err := strategies.SchemeOf(spec); err != nil {
		t.Fatal(err)
	}
	if _, err := strategies.Keyspace(spec); err != nil {
		t.Fatal(err)
	}
	if n := speccount.N() - before; n != 0 {
		t.Fatalf("New, SchemeOf and Keyspace of a Spec parsed %d texts; want 0", n)
	}
	before = speccount.N()
	g, err = strategies.NewText(t.Context(), spec.String())
	if err != nil {
		t.Fatal(err)
	}
	g.(io.Closer).Close()
	if n := speccount.N() - before; n != 1 {
		t.Fatalf("NewText parsed %d texts; want 1", n)
	}
	_, _, err = strategies.Resolve(spec.With("wroker", "1"))
	_, textErr := strategies.CheckSpec(spec.String() + "&wroker=1")
	want := `strategies: invalid spec: snowflake: unknown key "wroker"; valid keys: `
	for _, err := range []error{err, textErr} {
		if se, ok := errors.AsType[*strategies.SpecError](err); !ok || se.Key != "wroker" || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("unknown key = %v; want a *SpecError of key wroker: %s...", err, want)
		}
	}
}
