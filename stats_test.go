package idgen_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
)

// counted is a generator with counters and a readiness of its own.
type counted struct {
	localCounter
	st       idgen.Stats
	readyErr error
}

func (c *counted) Stats() idgen.Stats              { return c.st }
func (c *counted) Ready(ctx context.Context) error { return c.readyErr }

// nilWrap is a wrapper whose Unwrap returns nil.
type nilWrap struct{ localCounter }

func (*nilWrap) Unwrap() idgen.Generator { return nil }

// statsWrap is a wrapper with counters of its own.
type statsWrap struct {
	traced
	st idgen.Stats
}

func (s statsWrap) Stats() idgen.Stats { return s.st }

func TestStatsOf(t *testing.T) {
	inner := &counted{st: idgen.Stats{Kinds: idgen.StatsClock | idgen.StatsLease, SequenceWaits: 3, ClockRollbackWaits: 2,
		ClockRollbackFailures: 1, ClockStepsForward: 4, ClockStepsBack: 5, ClockStepped: -time.Second, Ahead: time.Millisecond,
		LayoutEnd: time.Date(2080, 7, 10, 17, 30, 30, 0, time.UTC), Lease: idgen.LeaseStatus{Held: true, LostAfter: 15 * time.Second}}}
	own := idgen.Stats{Kinds: idgen.StatsSegment, Remaining: 9}
	tests := []struct {
		name   string
		g      idgen.Generator
		want   idgen.Stats
		wantOK bool
	}{
		{"the generator itself", inner, inner.st, true},
		{"a wrapper two deep reports the inner counters", traced{traced{inner}}, inner.st, true},
		{"the first on the chain wins", traced{statsWrap{traced{inner}, own}}, own, true},
		{"a generator with none", &localCounter{}, idgen.Stats{}, false},
		{"a wrapper of a generator with none", traced{traced{&localCounter{}}}, idgen.Stats{}, false},
		{"a wrapper whose Unwrap is nil", &nilWrap{}, idgen.Stats{}, false},
		{"nil", nil, idgen.Stats{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := idgen.StatsOf(tt.g)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("StatsOf(%T) = %+v, %v; want %+v, %v", tt.g, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestReadyOf(t *testing.T) {
	lost := errors.New("lease lost")
	inner := &counted{readyErr: lost}
	tests := []struct {
		name    string
		g       idgen.Generator
		wantErr error
		wantOK  bool
	}{
		{"the generator itself", inner, lost, true},
		{"a wrapper two deep asks the inner generator", traced{traced{inner}}, lost, true},
		{"a ready inner generator", traced{traced{&counted{}}}, nil, true},
		{"a generator with none", &localCounter{}, nil, false},
		{"a wrapper of a generator with none", traced{traced{&localCounter{}}}, nil, false},
		{"a wrapper whose Unwrap is nil", &nilWrap{}, nil, false},
		{"nil", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := idgen.ReadyOf(tt.g)
			if ok != tt.wantOK {
				t.Fatalf("ReadyOf(%T) ok = %v; want %v", tt.g, ok, tt.wantOK)
			}
			if !ok {
				if r != nil {
					t.Errorf("ReadyOf(%T) = %v, false; want nil, false", tt.g, r)
				}
				return
			}
			if err := r.Ready(context.Background()); err != tt.wantErr {
				t.Errorf("ReadyOf(%T).Ready = %v; want %v", tt.g, err, tt.wantErr)
			}
		})
	}
}

func TestStatsHas(t *testing.T) {
	s := idgen.Stats{Kinds: idgen.StatsClock | idgen.StatsTickets}
	for _, tt := range []struct {
		k    idgen.StatsKind
		want bool
	}{
		{idgen.StatsClock, true},
		{idgen.StatsTickets, true},
		{idgen.StatsClock | idgen.StatsTickets, true},
		{idgen.StatsLease, false},
		{idgen.StatsClock | idgen.StatsSegment, false},
		{0, true},
	} {
		if got := s.Has(tt.k); got != tt.want {
			t.Errorf("Stats{Kinds: %b}.Has(%b) = %v; want %v", s.Kinds, tt.k, got, tt.want)
		}
	}
}

func TestMeanFetchLatency(t *testing.T) {
	if got := (idgen.Stats{}).MeanFetchLatency(); got != 0 {
		t.Errorf("MeanFetchLatency before a fetch = %v; want 0", got)
	}
	if got := (idgen.Stats{Segments: 4, FetchLatency: 10 * time.Millisecond}).MeanFetchLatency(); got != 2500*time.Microsecond {
		t.Errorf("MeanFetchLatency of 4 fetches in 10ms = %v; want 2.5ms", got)
	}
}
