package workerid_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/workerid"
)

// TestPostgresClockSkew: a node whose clock is more than MaxSkew from the
// PostgreSQL server's clock_timestamp() refuses to start, naming both
// clocks and the skew; within MaxSkew, or with the check off, it starts.
func TestPostgresClockSkew(t *testing.T) {
	dsn := postgresDSN(t)
	tests := []struct {
		name    string
		offset  time.Duration // the local clock's offset from the real time
		maxSkew time.Duration
		refused string // the direction named, or "" for a start
	}{
		{"11s ahead", 11 * time.Second, 0, "ahead of"},
		{"11s behind", -11 * time.Second, 0, "behind"},
		{"3s ahead, max 2s", 3 * time.Second, 2 * time.Second, "ahead of"},
		{"5s ahead", 5 * time.Second, 0, ""},
		{"1h ahead, check off", time.Hour, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := pgTable(t, dsn)
			cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 4}, MaxSkew: tt.maxSkew, Clock: idgentest.NewClock(time.Now().Add(tt.offset))}
			s, err := workerid.OpenPostgres(context.Background(), dsn, workerid.PostgresConfig{LeaseConfig: cfg, Table: table})
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("OpenPostgres() with the clock %v off = %v; want a start", tt.offset, err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("OpenPostgres() with the clock %v off = nil; want ErrClockSkew", tt.offset)
			}
			max := tt.maxSkew
			if max == 0 {
				max = workerid.DefaultMaxSkew
			}
			if !errors.Is(err, workerid.ErrClockSkew) || !strings.Contains(err.Error(), " "+tt.refused+" PostgreSQL ") ||
				!strings.Contains(err.Error(), "clock_timestamp()") || !strings.HasSuffix(err.Error(), "; max skew is "+max.String()) {
				t.Fatalf("OpenPostgres() with the clock %v off = %v; want ErrClockSkew naming the local clock %s PostgreSQL's and max skew %v", tt.offset, err, tt.refused, max)
			}
			// The skew named is the offset, within a second for the round trip.
			msg := err.Error()
			i := strings.Index(msg, ") is ")
			j := strings.Index(msg, " "+tt.refused)
			d, perr := time.ParseDuration(msg[i+len(") is ") : j])
			if perr != nil || (d-tt.offset.Abs()).Abs() > time.Second {
				t.Fatalf("skew in %q = %v (%v); want about %v", msg, d, perr, tt.offset.Abs())
			}
		})
	}
}
