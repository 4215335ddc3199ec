package strategies_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
	_ "github.com/idgenkit/idgen/workerid" // registers the worker sources
)

func TestWorkerSourcePasswordMasked(t *testing.T) {
	const secret = "s3cret-Pw"
	tests := []struct {
		name, source string
		want         error
	}{
		{"postgres bad port", "postgres://u:" + secret + "@127.0.0.1:x/db", strategies.ErrSpec},
		{"unknown scheme, bad port", "zookeeper://u:" + secret + "@127.0.0.1:x", strategies.ErrSpec},
		{"postgres bad key", "postgres://u:" + secret + "@127.0.0.1:1/db?ttl=1s", strategies.ErrSpec},
		{"postgres unreachable", "postgres://u:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", idgen.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := strategies.OpenWorkerSource(context.Background(), tt.source, strategies.WorkerSpace{Workers: 32})
			if err == nil || !errors.Is(err, tt.want) || strings.Contains(err.Error(), secret) {
				t.Fatalf("OpenWorkerSource(%q) = %v, %v; want %v with the password masked", tt.source, src, err, tt.want)
			}
			spec := withSource("snowflake?preset=twitter", tt.source)
			if g, err := strategies.NewText(context.Background(), spec); err == nil || strings.Contains(err.Error(), secret) {
				t.Fatalf("New(%q) = %v, %v; want an error with the password masked", spec, g, err)
			}
		})
	}
}
