package workerid_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/workerid"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestStaticSources(t *testing.T) {
	space := workerid.Space{Workers: 32, DatacenterID: 2}
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == workerid.EnvWorkerID {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name    string
		open    func() (*workerid.Static, error)
		want    int64
		wantErr error
	}{
		{"static", func() (*workerid.Static, error) { return workerid.NewStatic(7, space) }, 7, nil},
		{"static max", func() (*workerid.Static, error) { return workerid.NewStatic(31, space) }, 31, nil},
		{"static out of range", func() (*workerid.Static, error) { return workerid.NewStatic(32, space) }, 0, idgen.ErrOutOfRange},
		{"static negative", func() (*workerid.Static, error) { return workerid.NewStatic(-1, space) }, 0, idgen.ErrOutOfRange},
		{"static default space", func() (*workerid.Static, error) { return workerid.NewStatic(1023, workerid.Space{}) }, 1023, nil},
		{"env", func() (*workerid.Static, error) { return workerid.Env(env("12"), space) }, 12, nil},
		{"env unset", func() (*workerid.Static, error) { return workerid.Env(env(""), space) }, 0, workerid.ErrConfig},
		{"env not a number", func() (*workerid.Static, error) { return workerid.Env(env("x1"), space) }, 0, workerid.ErrConfig},
		{"env out of range", func() (*workerid.Static, error) { return workerid.Env(env("40"), space) }, 0, idgen.ErrOutOfRange},
		{"ordinal", func() (*workerid.Static, error) { return workerid.Ordinal("idgen-3", 0, space) }, 3, nil},
		{"ordinal offset", func() (*workerid.Static, error) { return workerid.Ordinal("idgen-3", 10, space) }, 13, nil},
		{"ordinal fqdn", func() (*workerid.Static, error) {
			return workerid.Ordinal("web-api-12.idgen.default.svc.cluster.local", 0, space)
		}, 12, nil},
		{"ordinal none", func() (*workerid.Static, error) { return workerid.Ordinal("idgen", 0, space) }, 0, workerid.ErrNoOrdinal},
		{"ordinal trailing dash", func() (*workerid.Static, error) { return workerid.Ordinal("idgen-", 0, space) }, 0, workerid.ErrNoOrdinal},
		{"ordinal out of range", func() (*workerid.Static, error) { return workerid.Ordinal("idgen-30", 5, space) }, 0, idgen.ErrOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.open()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || s != nil {
					t.Fatalf("%s = %v, %v; want nil, %v", tt.name, s, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s = %v", tt.name, err)
			}
			ident := s.Identity()
			if ident == nil || ident.WorkerID != tt.want || s.Lost() != nil {
				t.Fatalf("%s Identity() = %+v; want worker %d, never lost", tt.name, ident, tt.want)
			}
			if s.Close() != nil || s.Identity() != ident {
				t.Fatalf("%s: Close changed a static identity", tt.name)
			}
		})
	}
}

func TestStaticDrivesSnowflake(t *testing.T) {
	s, err := workerid.NewStatic(9, workerid.Space{Workers: 32, DatacenterID: 3})
	if err != nil {
		t.Fatalf("NewStatic() = %v", err)
	}
	l, _ := snowflake.Preset("twitter")
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: l, Lease: s})
	if err != nil {
		t.Fatalf("snowflake.New() = %v", err)
	}
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatalf("Next() = %v", err)
	}
	p, _ := g.Decompose(id)
	w, _ := p.Node("worker")
	dc, _ := p.Node("datacenter")
	if w != 9 || dc != 3 {
		t.Fatalf("Decompose(%s) worker %d datacenter %d; want 9, 3", id, w, dc)
	}
}
