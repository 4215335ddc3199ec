package serving_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/serving"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
)

// names are generator names at the rule's edges, each with whether it is
// accepted.
var names = []struct {
	name string
	ok   bool
}{
	{"orders", true},
	{"a", true},
	{"A9_.-x", true},
	{"0", true},
	{strings.Repeat("x", 64), true},
	{strings.Repeat("x", 65), false},
	{"", false},
	{"-lead", false},
	{".hidden", false},
	{"with space", false},
	{"a/b", false},
	{"ü", false},
	{"ids", false},
	{"generators", false},
	{"openapi.json", false},
	{"IDS", true}, // the routes are case-sensitive
}

func TestCheckName(t *testing.T) {
	for _, tt := range names {
		err := serving.CheckName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("CheckName(%q) = %v; want ok %t", tt.name, err, tt.ok)
		}
	}
	err := serving.CheckName(strings.Repeat("y", 500))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "at most 64 characters, not ids, generators, openapi.json") {
		t.Errorf("CheckName(500 characters) = %v; want the input cut and the rule", err)
	}
}

// The HTTP and gRPC transports accept and refuse the same generator names:
// they apply the one rule of the serving core.
func TestTransportsAgreeOnNames(t *testing.T) {
	g, err := strategies.NewText(context.Background(), "uuidv7")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range names {
		gens := map[string]idgen.Generator{tt.name: g}
		_, herr := httpapi.New(gens, httpapi.Options{})
		_, gerr := grpcapi.New(gens, grpcapi.Options{})
		if (herr == nil) != tt.ok || (gerr == nil) != tt.ok {
			t.Errorf("name %q: httpapi.New = %v, grpcapi.New = %v; want both ok %t", tt.name, herr, gerr, tt.ok)
		}
		if !tt.ok && (!errors.Is(herr, httpapi.ErrConfig) || !errors.Is(gerr, grpcapi.ErrConfig) || !errors.Is(gerr, idgen.ErrInvalid)) {
			t.Errorf("name %q: errors %v, %v; want each transport's ErrConfig, of class idgen.ErrInvalid", tt.name, herr, gerr)
		}
	}
}

func TestNewSet(t *testing.T) {
	g, err := strategies.NewText(context.Background(), "uuidv7")
	if err != nil {
		t.Fatal(err)
	}
	two := map[string]idgen.Generator{"b": g, "a": g}
	for _, tt := range []struct {
		name string
		gens map[string]idgen.Generator
		c    serving.Config
		err  string
		def  string
		max  int
	}{
		{"one: its name", map[string]idgen.Generator{"only": g}, serving.Config{}, "", "only", serving.DefaultMaxCount},
		{"two: default", map[string]idgen.Generator{"default": g, "a": g}, serving.Config{MaxCount: 5}, "", "default", 5},
		{"two: named", two, serving.Config{Default: "b"}, "", "b", serving.DefaultMaxCount},
		{"two: none named", two, serving.Config{}, `default generator "default" is not among a, b`, "", 0},
		{"none", nil, serving.Config{}, "no generators to serve", "", 0},
		{"nil", map[string]idgen.Generator{"a": nil}, serving.Config{}, `generator "a" is nil or has no scheme`, "", 0},
		{"max count", two, serving.Config{Default: "a", MaxCount: -1}, "MaxCount -1 must be at least 1", "", 0},
		{"timeout", two, serving.Config{Default: "a", Timeout: -time.Second}, "Timeout -1s must not be negative", "", 0},
	} {
		s, err := serving.NewSet(tt.gens, tt.c)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: NewSet = %v; want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || s.Default() != tt.def || s.MaxCount() != tt.max {
			t.Errorf("%s: NewSet = %v; default %q, max %d; want %q, %d", tt.name, err, s.Default(), s.MaxCount(), tt.def, tt.max)
		}
	}
	s, _ := serving.NewSet(two, serving.Config{Default: "a"})
	if got := fmt.Sprint(s.Names()); got != "[a b]" {
		t.Errorf("Names() = %s; want [a b]", got)
	}
	if a := serving.Classify(s.Unknown("zz")); a.Kind != serving.KindNotFound || a.Class.HTTP != 404 || a.Msg != `unknown generator "zz"; served: a, b` {
		t.Errorf("Classify(Unknown) = %+v", a)
	}
}

// The one table of answers: the numbers serving keeps match grpc-go's
// codes, and each class of error gets its HTTP status and gRPC code.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		got  uint32
		want codes.Code
	}{
		{serving.CodeInvalidArgument, codes.InvalidArgument}, {serving.CodeNotFound, codes.NotFound},
		{serving.CodeFailedPrecondition, codes.FailedPrecondition}, {serving.CodeInternal, codes.Internal},
		{serving.CodeUnavailable, codes.Unavailable},
	} {
		if c.got != uint32(c.want) {
			t.Errorf("serving's code %d; want %s (%d)", c.got, c.want, c.want)
		}
	}
	rollback := &idgen.ClockRollbackError{Drift: 3 * time.Second}
	for _, tt := range []struct {
		err   error
		kind  serving.Kind
		http  int
		grpc  codes.Code
		retry time.Duration
	}{
		{fmt.Errorf("x: %w", rollback), serving.KindClockRollback, 503, codes.Unavailable, 3 * time.Second},
		{idgen.ErrLeaseLost, serving.KindLeaseLost, 503, codes.Unavailable, time.Second},
		{fmt.Errorf("store: %w", idgen.ErrUnavailable), serving.KindUnavailable, 503, codes.Unavailable, time.Second},
		{context.DeadlineExceeded, serving.KindTimeout, 503, codes.Unavailable, time.Second},
		{idgen.ErrLayoutExhausted, serving.KindLifetime, 503, codes.FailedPrecondition, 0},
		{fmt.Errorf("%w: tag", segment.ErrExhausted), serving.KindLifetime, 503, codes.FailedPrecondition, 0},
		{segment.ErrUnknownTag, serving.KindOther, 500, codes.Internal, 0}, // the server's configuration, not the request
		{errors.New("boom"), serving.KindOther, 500, codes.Internal, 0},
		{serving.Invalid("count 0 outside [1, 5]"), serving.KindInvalid, 400, codes.InvalidArgument, 0},
	} {
		a := serving.Classify(tt.err)
		if a.Kind != tt.kind || a.Class.HTTP != tt.http || codes.Code(a.Class.GRPC) != tt.grpc || a.Retry != tt.retry || a.Class.Retry != (tt.retry > 0) {
			t.Errorf("Classify(%v) = %+v; want kind %d, %d, %s, retry %v", tt.err, a, tt.kind, tt.http, tt.grpc, tt.retry)
		}
	}
	if a := serving.Classify(errors.New("secret detail")); a.Msg != serving.InternalMsg {
		t.Errorf("Classify(internal).Msg = %q; want %q", a.Msg, serving.InternalMsg)
	}
	if !errors.Is(serving.Invalid("x"), idgen.ErrInvalid) {
		t.Error("Invalid(x) does not match idgen.ErrInvalid")
	}
}
