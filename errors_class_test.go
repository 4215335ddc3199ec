package idgen_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/client"
	"github.com/idgenkit/idgen/compare"
	comparereport "github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/storetls/redistls"
	"github.com/idgenkit/idgen/internal/throwaway"
	"github.com/idgenkit/idgen/internal/tlsfiles"
	"github.com/idgenkit/idgen/migrate"
	"github.com/idgenkit/idgen/prefetch"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
	"github.com/idgenkit/idgen/strategies/config"
	"github.com/idgenkit/idgen/workerid"
)

// sentinels are every exported Err* variable of the module, by package
// directory and name, with the class each matches; nil means neither, for
// the reason given in its doc (listed in unclassed).
var sentinels = map[string]struct{ err, class error }{
	".ErrClockRollback":   {idgen.ErrClockRollback, idgen.ErrUnavailable},
	".ErrLayoutExhausted": {idgen.ErrLayoutExhausted, idgen.ErrInvalid},
	".ErrBeforeEpoch":     {idgen.ErrBeforeEpoch, idgen.ErrInvalid},
	".ErrSyntax":          {idgen.ErrSyntax, idgen.ErrInvalid},
	".ErrNoScheme":        {idgen.ErrNoScheme, idgen.ErrInvalid},
	".ErrOutOfRange":      {idgen.ErrOutOfRange, idgen.ErrInvalid},
	".ErrLeaseLost":       {idgen.ErrLeaseLost, idgen.ErrUnavailable},
	".ErrNoWorkerIDs":     {idgen.ErrNoWorkerIDs, idgen.ErrUnavailable},
	".ErrUnavailable":     {idgen.ErrUnavailable, idgen.ErrUnavailable},
	".ErrInvalid":         {idgen.ErrInvalid, idgen.ErrInvalid},
	".ErrClosed":          {idgen.ErrClosed, idgen.ErrUnavailable},
	".ErrNull":            {idgen.ErrNull, idgen.ErrInvalid},

	"client.ErrConfig":                     {client.ErrConfig, idgen.ErrInvalid},
	"compare.ErrBadInput":                  {compare.ErrBadInput, idgen.ErrInvalid},
	"compare.ErrConnect":                   {compare.ErrConnect, idgen.ErrUnavailable},
	"compare.ErrConnectMariaDB":            {compare.ErrConnectMariaDB, idgen.ErrUnavailable},
	"compare.ErrNoPostgres":                {compare.ErrNoPostgres, idgen.ErrUnavailable},
	"compare.ErrNoMariaDB":                 {compare.ErrNoMariaDB, idgen.ErrUnavailable},
	"compare/report.ErrRequirement":        {comparereport.ErrRequirement, idgen.ErrInvalid},
	"grpcapi.ErrConfig":                    {grpcapi.ErrConfig, idgen.ErrInvalid},
	"httpapi.ErrConfig":                    {httpapi.ErrConfig, idgen.ErrInvalid},
	"internal/storetls/redistls.ErrOption": {redistls.ErrOption, idgen.ErrInvalid},
	"internal/throwaway.ErrNoPostgres":     {throwaway.ErrNoPostgres, idgen.ErrUnavailable},
	"internal/throwaway.ErrNoMariaDB":      {throwaway.ErrNoMariaDB, idgen.ErrUnavailable},
	"internal/throwaway.ErrBadConfig":      {throwaway.ErrBadConfig, idgen.ErrInvalid},
	"migrate.ErrInput":                     {migrate.ErrInput, idgen.ErrInvalid},
	"migrate.ErrOrder":                     {migrate.ErrOrder, idgen.ErrInvalid},
	"migrate.ErrVerify":                    {migrate.ErrVerify, idgen.ErrUnavailable},
	"migrate.ErrShape":                     {migrate.ErrShape, idgen.ErrInvalid},
	"prefetch.ErrConfig":                   {prefetch.ErrConfig, idgen.ErrInvalid},
	"public.ErrEncoding":                   {public.ErrEncoding, idgen.ErrInvalid},
	"public.ErrKey":                        {public.ErrKey, idgen.ErrInvalid},
	"public.ErrTweak":                      {public.ErrTweak, idgen.ErrInvalid},
	"segment.ErrUnknownTag":                {segment.ErrUnknownTag, idgen.ErrInvalid},
	"segment.ErrDSN":                       {segment.ErrDSN, idgen.ErrInvalid},
	"segment.ErrUnreachable":               {segment.ErrUnreachable, idgen.ErrUnavailable},
	"segment.ErrConfig":                    {segment.ErrConfig, idgen.ErrInvalid},
	"segment.ErrNotInstalled":              {segment.ErrNotInstalled, idgen.ErrUnavailable},
	"segment.ErrNoDatabase":                {segment.ErrNoDatabase, idgen.ErrUnavailable},
	"segment.ErrResidue":                   {segment.ErrResidue, idgen.ErrUnavailable},
	"segment.ErrInUse":                     {segment.ErrInUse, idgen.ErrUnavailable},
	"segment.ErrExhausted":                 {segment.ErrExhausted, nil},
	"snowflake.ErrInvalidLayout":           {snowflake.ErrInvalidLayout, idgen.ErrInvalid},
	"snowflake.ErrClockSeqExhausted":       {snowflake.ErrClockSeqExhausted, nil},
	"strategies.ErrSpec":                   {strategies.ErrSpec, idgen.ErrInvalid},
	"strategies.ErrConvert":                {strategies.ErrConvert, idgen.ErrInvalid},
	"strategies/config.ErrSpec":            {config.ErrSpec, idgen.ErrInvalid},
	"workerid.ErrNoOrdinal":                {workerid.ErrNoOrdinal, idgen.ErrInvalid},
	"workerid.ErrConfig":                   {workerid.ErrConfig, idgen.ErrInvalid},
	"workerid.ErrClockSkew":                {workerid.ErrClockSkew, idgen.ErrUnavailable},
	"workerid.ErrNotPrivate":               {workerid.ErrNotPrivate, idgen.ErrUnavailable},
	"workerid.ErrWorkerIDHeld":             {workerid.ErrWorkerIDHeld, idgen.ErrUnavailable},
	"internal/tlsfiles.ErrFiles":           {tlsfiles.ErrFiles, idgen.ErrInvalid},
}

// TestSentinelClasses enumerates every exported Err* variable of the
// module's non-test files (parsed with go/parser) and checks that each is
// listed above and matches its class, and only it, with errors.Is; one
// that matches neither must say why in its doc ("neither class").
func TestSentinelClasses(t *testing.T) {
	fset := token.NewFileSet()
	found := map[string]string{} // key -> doc
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := strings.TrimPrefix(path.Dir(filepath.ToSlash(p)), ".")
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for _, n := range vs.Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						doc := vs.Doc.Text() + g.Doc.Text()
						found[dir+"."+n.Name] = doc
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range found {
			if !yield(k) {
				return
			}
		}
	}) {
		s, ok := sentinels[key]
		if !ok {
			t.Errorf("%s: not listed in sentinels: give it a class (internal/errclass) and list it", key)
			continue
		}
		inv, una := errors.Is(s.err, idgen.ErrInvalid), errors.Is(s.err, idgen.ErrUnavailable)
		switch {
		case s.class == nil && (inv || una):
			t.Errorf("%s = %q matches a class; listed as neither", key, s.err)
		case s.class == nil && !strings.Contains(found[key], "neither class"):
			t.Errorf("%s matches neither class and its doc does not say why (\"neither class\")", key)
		case s.class == idgen.ErrInvalid && (!inv || una && key != ".ErrUnavailable"):
			t.Errorf("%s = %q: errors.Is ErrInvalid %t, ErrUnavailable %t; want ErrInvalid only", key, s.err, inv, una)
		case s.class == idgen.ErrUnavailable && (!una || inv && key != ".ErrInvalid"):
			t.Errorf("%s = %q: errors.Is ErrUnavailable %t, ErrInvalid %t; want ErrUnavailable only", key, s.err, una, inv)
		}
		if strings.Count(s.err.Error(), "idgen:") > 1 {
			t.Errorf("%s = %q: says idgen: twice", key, s.err)
		}
	}
	for key := range sentinels {
		if _, ok := found[key]; !ok {
			t.Errorf("%s is listed in sentinels but no longer declared", key)
		}
	}
}

// TestFieldError: a FieldError's text is "Field Value: Allowed: Err",
// Named puts another name in the field's place, the value is cut to about
// 64 characters (a quoted one inside its quotes), and it matches
// ErrInvalid and its cause with errors.Is.
func TestFieldError(t *testing.T) {
	cause := errors.New("strategies: unknown strategy")
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name       string
		err        *idgen.FieldError
		text, flag string
	}{
		{"number", &idgen.FieldError{Field: "Options.Batch", Value: "-1", Allowed: "want at least 1"},
			"Options.Batch -1: want at least 1", "--batch -1: want at least 1"},
		{"cause", &idgen.FieldError{Field: "Options.To", Value: `"nope"`, Err: cause},
			`Options.To "nope": strategies: unknown strategy`, `--to "nope": strategies: unknown strategy`},
		{"no value", &idgen.FieldError{Field: "Options.To", Allowed: "none given; want snowflake or uuidv7"},
			"Options.To: none given; want snowflake or uuidv7", "--to: none given; want snowflake or uuidv7"},
		{"long quoted", &idgen.FieldError{Field: "Config.PGBin", Value: `"` + long + `"`, Allowed: "not found"},
			`Config.PGBin "` + long[:64] + `…": not found`, `--pg-bin "` + long[:64] + `…": not found`},
		{"long plain", &idgen.FieldError{Field: "Config.PGBin", Value: long},
			"Config.PGBin " + long[:64] + "…", "--pg-bin " + long[:64] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error = fmt.Errorf("pkg: bad input: %w", tc.err)
			flag := "--" + strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(tc.err.Field, "Options."), "Config."))
			if tc.err.Field == "Config.PGBin" {
				flag = "--pg-bin"
			}
			var fe *idgen.FieldError
			if !errors.As(err, &fe) || fe.Error() != tc.text || fe.Named(flag) != tc.flag {
				t.Errorf("FieldError = %q, Named(%q) = %q; want %q, %q", fe, flag, fe.Named(flag), tc.text, tc.flag)
			}
			if !errors.Is(err, idgen.ErrInvalid) || errors.Is(err, idgen.ErrUnavailable) {
				t.Errorf("errors.Is(%q): ErrInvalid %t, ErrUnavailable %t; want ErrInvalid only", err,
					errors.Is(err, idgen.ErrInvalid), errors.Is(err, idgen.ErrUnavailable))
			}
			if tc.err.Err != nil && !errors.Is(err, tc.err.Err) {
				t.Errorf("errors.Is(%q, its cause) = false", err)
			}
		})
	}
}
