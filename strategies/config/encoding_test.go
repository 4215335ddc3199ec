package config_test

import (
	"context"
	"testing"

	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
	"github.com/idgenkit/idgen/strategies/config"
)

// TestTableEncoding: encoding= given as a key of the table form, in each
// format, issues the strategy's IDs in that text (Crockford base32: 13
// characters for the twitter layout's 64 bits), which parse back under the
// generator's scheme, and the scheme keeps its layout.
func TestTableEncoding(t *testing.T) {
	crockford, err := public.LookupEncoding("crockford")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"c.yaml": "generators:\n  orders:\n    strategy: snowflake\n    preset: twitter\n    worker: 7\n    encoding: crockford\n",
		"c.toml": "[generators.orders]\nstrategy = \"snowflake\"\npreset = \"twitter\"\nworker = 7\nencoding = \"crockford\"\n",
		"c.json": `{"generators": {"orders": {"strategy": "snowflake", "preset": "twitter", "worker": 7, "encoding": "crockford"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(writeConfig(t, name, text), strategies.Options{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got, want := c.Generators[0].Spec.String(), "snowflake?encoding=crockford&preset=twitter&worker=7"; got != want {
				t.Errorf("spec = %q; want %q", got, want)
			}
			g, err := c.New(context.Background(), "orders")
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			id, err := g.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := string(crockford.AppendText(nil, id.Bytes()))
			if s := id.String(); s != want || len(s) != 13 {
				t.Errorf("ID text %q; want the Crockford text %q of its bytes, 13 characters", s, want)
			}
			back, err := g.Scheme().Parse(id.String())
			if err != nil || back != id {
				t.Errorf("Parse(%q) = %v, %v; want the ID back", id.String(), back, err)
			}
			l, ok := snowflake.LayoutOf(g.Scheme())
			if twitter, _ := snowflake.Preset("twitter"); !ok || l.String() != twitter.String() {
				t.Errorf("LayoutOf(scheme) = %v, %v; want the twitter layout", l, ok)
			}
			v, _ := id.Uint64()
			p, err := l.Decompose(v)
			if w, ok := p.Node("worker"); err != nil || !ok || w != 7 {
				t.Errorf("worker of %s = %d (%v), %v; want 7", id, w, ok, err)
			}
		})
	}
}
