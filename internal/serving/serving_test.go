package serving_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/serving"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
)

func TestUUIDVersion(t *testing.T) {
	tests := []struct {
		name   string
		scheme *idgen.Scheme
		want   byte
	}{
		{"uuidv1", strategies.UUIDv1Scheme(), 1},
		{"uuidv4", strategies.UUIDv4Scheme(), 4},
		{"uuidv6", strategies.UUIDv6Scheme(), 6},
		{"uuidv7", strategies.UUIDv7Scheme(), 7},
		{"uuid", strategies.UUIDScheme(), 0},
		{"segment", segment.Scheme(), 0},
	}
	for _, tt := range tests {
		if got := serving.UUIDVersion(tt.scheme); got != tt.want {
			t.Errorf("UUIDVersion(%s) = %d; want %d", tt.name, got, tt.want)
		}
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		scheme *idgen.Scheme
		text   string
		err    string
	}{
		{"v7 of v7", strategies.UUIDv7Scheme(), "019a7b3c-1d2e-7f30-8a41-52b6c7d8e9f0", ""},
		{"v4 of v7", strategies.UUIDv7Scheme(), "6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b",
			`"6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b" is a version 4 UUID; generator "g" issues version 7`},
		{"any of uuid", strategies.UUIDScheme(), "6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b", ""},
		{"not a UUID", strategies.UUIDv4Scheme(), "x", `"x" is not a uuidv4 ID of generator "g": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serving.Decode(tt.scheme, "g", tt.text)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || len(err.Error()) < len(tt.err) || err.Error()[:len(tt.err)] != tt.err) {
				t.Errorf("Decode(%s, %q) = %v; want %q", tt.scheme.Name, tt.text, err, tt.err)
			}
		})
	}
}

func TestPermanent(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", idgen.ErrLayoutExhausted), true},
		{idgen.ErrBeforeEpoch, true},
		{fmt.Errorf("%w: biz tag", segment.ErrExhausted), true},
		{idgen.ErrUnavailable, false},
		{context.DeadlineExceeded, false},
	} {
		if got := serving.Permanent(tt.err); got != tt.want {
			t.Errorf("Permanent(%v) = %t; want %t", tt.err, got, tt.want)
		}
	}
}

// slowGen takes 2 ms of its clock per call, whatever the count.
type slowGen struct{ clk *idgentest.Clock }

func (g slowGen) Scheme() *idgen.Scheme { return segment.TicketScheme() }
func (g slowGen) Next(ctx context.Context) (idgen.ID, error) {
	var dst [1]idgen.ID
	_, err := g.NextN(ctx, dst[:])
	return dst[0], err
}
func (g slowGen) NextN(_ context.Context, dst []idgen.ID) (int, error) {
	g.clk.Add(2 * time.Millisecond)
	return len(dst), nil
}

// EstimateIssue projects one chunk's time onto the chunks of count.
func TestEstimateIssue(t *testing.T) {
	clk := idgentest.NewClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	g := slowGen{clk}
	for _, tt := range []struct {
		count int
		want  time.Duration
	}{
		{1, 2 * time.Millisecond},
		{1024, 2 * time.Millisecond},
		{1025, 4 * time.Millisecond},
		{10_000, 20 * time.Millisecond},
	} {
		got, err := serving.EstimateIssue(context.Background(), g, tt.count, 1024, clk)
		if err != nil || got != tt.want {
			t.Errorf("EstimateIssue(count %d, chunk 1024) = %v, %v; want %v", tt.count, got, err, tt.want)
		}
	}
	if _, err := serving.EstimateIssue(context.Background(), failGen{}, 10, 1024, nil); !errors.Is(err, idgen.ErrUnavailable) {
		t.Errorf("EstimateIssue(failing generator) = %v; want its ErrUnavailable", err)
	}
}

type failGen struct{}

func (failGen) Scheme() *idgen.Scheme                  { return segment.TicketScheme() }
func (failGen) Next(context.Context) (idgen.ID, error) { return idgen.ID{}, idgen.ErrUnavailable }
