package workerid_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

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
			wantSkew(t, s, err, tt.offset, tt.maxSkew, tt.refused, "PostgreSQL ", "clock_timestamp()")
		})
	}
}

// wantSkew checks the outcome (s, err) of opening a lease on a clock offset
// from the true time. With refused "" it wants a start (and closes s).
// Else it wants err to wrap ErrClockSkew and name the local clock refused
// ("ahead of", "behind") store (e.g. "PostgreSQL "), the store's clock
// (what), the max skew (maxSkew, or DefaultMaxSkew for 0), and a skew
// within a second of offset.
func wantSkew(t *testing.T, s io.Closer, err error, offset, maxSkew time.Duration, refused, store, what string) {
	t.Helper()
	if err == nil {
		s.Close()
		if refused != "" {
			t.Fatalf("open with the clock %v off = nil; want ErrClockSkew", offset)
		}
		return
	}
	if refused == "" {
		t.Fatalf("open with the clock %v off = %v; want a start", offset, err)
	}
	dir := refused + " " + store
	if maxSkew == 0 {
		maxSkew = workerid.DefaultMaxSkew
	}
	if !errors.Is(err, workerid.ErrClockSkew) || !strings.Contains(err.Error(), " "+dir) ||
		!strings.Contains(err.Error(), what) || !strings.HasSuffix(err.Error(), "; max skew is "+maxSkew.String()) {
		t.Fatalf("open with the clock %v off = %v; want ErrClockSkew naming the local clock %q, %q and max skew %v", offset, err, dir, what, maxSkew)
	}
	// The skew named is the offset, within a second for the round trip.
	msg := err.Error()
	i := strings.Index(msg, ") is ")
	j := strings.Index(msg, " "+dir)
	d, perr := time.ParseDuration(msg[i+len(") is ") : j])
	if perr != nil || (d-offset.Abs()).Abs() > time.Second {
		t.Fatalf("skew in %q = %v (%v); want about %v", msg, d, perr, offset.Abs())
	}
}

// TestEtcdClockSkew: under an etcd lease a node whose clock is more than
// MaxSkew from the mean of its live peers' (the times they wrote into their
// lease records) refuses to start, naming both clocks and the skew; within
// MaxSkew, with the check off, or with only records of an older idgen (no
// time), it starts.
func TestEtcdClockSkew(t *testing.T) {
	addr := sharedEtcd(t)
	tests := []struct {
		name    string
		oldOnly bool // the peers are records without a time
		offset  time.Duration
		maxSkew time.Duration
		refused string
	}{
		{"11s ahead", false, 11 * time.Second, 0, "ahead of"},
		{"11s behind", false, -11 * time.Second, 0, "behind"},
		{"3s ahead, max 2s", false, 3 * time.Second, 2 * time.Second, "ahead of"},
		{"5s ahead", false, 5 * time.Second, 0, ""},
		{"1h ahead, check off", false, time.Hour, -1, ""},
		{"1h ahead, old records only", true, time.Hour, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := uniqueName(t)
			base := workerid.LeaseConfig{Space: workerid.Space{Workers: 8}, Namespace: ns}
			// An older idgen's record (the owner alone) is not counted:
			// with it beside two live peers the mean is theirs.
			putOldRecord(t, addr, ns, 7)
			if !tt.oldOnly {
				for range 2 {
					p, err := workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: base, Endpoints: []string{addr}})
					if err != nil {
						t.Fatalf("OpenEtcd(peer) = %v", err)
					}
					t.Cleanup(func() { p.Close() })
				}
			}
			cfg := base
			cfg.MaxSkew, cfg.Clock = tt.maxSkew, idgentest.NewClock(time.Now().Add(tt.offset))
			s, err := workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{addr}})
			wantSkew(t, s, err, tt.offset, tt.maxSkew, tt.refused, "the mean of 2 live etcd peers' clocks", "/idgen/"+ns+"/workers/")
		})
	}
}

// TestEtcdRecordTime: a holder writes its clock's time into its lease
// record at acquire and again at every renewal, and a node starting against
// it compares with the time written last.
func TestEtcdRecordTime(t *testing.T) {
	addr := sharedEtcd(t)
	ns := uniqueName(t)
	clk := idgentest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	cfg := workerid.LeaseConfig{Space: workerid.Space{Workers: 4}, Namespace: ns, Clock: clk,
		TTL: 30 * time.Second, RenewEvery: 200 * time.Millisecond, LostAfter: 15 * time.Second}
	p, err := workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg, Endpoints: []string{addr}})
	if err != nil {
		t.Fatalf("OpenEtcd() = %v", err)
	}
	defer p.Close()
	key := fmt.Sprintf("/idgen/%s/workers/%d", ns, p.Identity().WorkerID)
	c := etcdClient(t, addr)
	if got := recordTime(t, c, key); !got.Equal(clk.Now()) {
		t.Fatalf("record time after acquire = %v; want the holder's clock %v", got, clk.Now())
	}
	// The clock is a TimerClock: the lease renews each time it passes
	// RenewEvery (the first time once the renewal loop has set its timer),
	// and writes the holder's time of that renewal.
	start := clk.Now()
	var want time.Time
	deadline := time.Now().Add(10 * time.Second)
	for want.IsZero() {
		if time.Now().After(deadline) {
			t.Fatalf("record time 10s after the clock moved = %v; want a later reading of the holder's clock", recordTime(t, c, key))
		}
		clk.Add(cfg.RenewEvery)
		time.Sleep(50 * time.Millisecond)
		if got := recordTime(t, c, key); got.After(start) {
			if got.Sub(start)%cfg.RenewEvery != 0 || got.After(clk.Now()) {
				t.Fatalf("record time after renewals = %v; want one of the holder's clock readings %v + k×%v", got, start, cfg.RenewEvery)
			}
			want = got
		}
	}
	// A node on the true clock is years behind the peer's.
	_, err = workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: workerid.LeaseConfig{Space: workerid.Space{Workers: 4}, Namespace: ns}, Endpoints: []string{addr}})
	if !errors.Is(err, workerid.ErrClockSkew) || !strings.Contains(err.Error(), " behind the mean of 1 live etcd peers' clocks ") ||
		!strings.Contains(err.Error(), "("+want.Format(time.RFC3339)[:13]) {
		t.Fatalf("OpenEtcd() on the true clock against a peer at %v = %v; want ErrClockSkew behind the peer's clock", want, err)
	}
}

// etcdClient returns a client of addr, closed at the end of the test.
func etcdClient(t *testing.T, addr string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// putOldRecord writes the lease record of an older idgen (the owner alone,
// on a live lease) for worker ID id.
func putOldRecord(t *testing.T, addr, ns string, id int) {
	t.Helper()
	c := etcdClient(t, addr)
	ctx := context.Background()
	g, err := c.Grant(ctx, 30)
	if err != nil {
		t.Fatalf("Grant() = %v", err)
	}
	t.Cleanup(func() { c.Revoke(context.Background(), g.ID) })
	if _, err := c.Put(ctx, fmt.Sprintf("/idgen/%s/workers/%d", ns, id), "oldhost-1-abcd", clientv3.WithLease(g.ID)); err != nil {
		t.Fatalf("Put() = %v", err)
	}
}

// recordTime reads the time in the lease record under key.
func recordTime(t *testing.T, c *clientv3.Client, key string) time.Time {
	t.Helper()
	resp, err := c.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get(%s) = %v, %v", key, resp, err)
	}
	var rec struct {
		Owner string
		Time  time.Time
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil || rec.Owner == "" {
		t.Fatalf("record %s = %q (%v); want JSON with an owner and a time", key, resp.Kvs[0].Value, err)
	}
	return rec.Time
}
