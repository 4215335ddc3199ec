package faults

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/client"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	// The client finds a server's scheme among those linked packages
	// register: snowflake's layouts come with the client, topology B's
	// "segment" scheme with package segment.
	_ "github.com/idgenkit/idgen/segment"
)

// An event is one ID received, or one failed request (failed set), at a
// time since the run's start.
type event struct {
	at     time.Duration
	v      uint64
	failed bool
}

// A stream is what one client or one node's probe received, in order.
type stream struct {
	name  string
	probe bool // a probe of one node (else a client.Generator)
	node  int  // the probed node

	mu     sync.Mutex
	events []event
	prev   map[int]uint64 // last ID per order key, for the order check
	seen   int            // events checked for order
	err    error          // the last failed request's error
}

func (s *stream) add(e event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *stream) fail(at time.Duration, err error) {
	s.mu.Lock()
	s.events = append(s.events, event{at: at, failed: true})
	s.err = err
	s.mu.Unlock()
}

// issuedSince reports whether the stream's last event is an ID received
// at or after since.
func (s *stream) issuedSince(since time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 {
		return false
	}
	e := s.events[len(s.events)-1]
	return !e.failed && e.at >= since
}

func (s *stream) lastErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// window returns a copy of the events in [t0, t1).
func (s *stream) window(t0, t1 time.Duration) []event {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, _ := slices.BinarySearchFunc(s.events, t0, func(e event, t time.Duration) int { return int(e.at - t) })
	hi, _ := slices.BinarySearchFunc(s.events, t1, func(e event, t time.Duration) int { return int(e.at - t) })
	return slices.Clone(s.events[lo:hi])
}

// outOfOrder counts, among the events received before t1 and not checked
// yet, IDs not above the stream's previous ID of the same key (key nil: one
// sequence for the whole stream).
func (s *stream) outOfOrder(t1 time.Duration, key func(uint64) int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev == nil {
		s.prev = map[int]uint64{}
	}
	n := 0
	for ; s.seen < len(s.events) && s.events[s.seen].at < t1; s.seen++ {
		e := s.events[s.seen]
		if e.failed {
			continue
		}
		k := 0
		if key != nil {
			k = key(e.v)
		}
		if p, ok := s.prev[k]; ok && e.v <= p {
			n++
		}
		s.prev[k] = e.v
	}
	return n
}

// A run records every ID of a topology's clients and probes.
type run struct {
	start   time.Time
	streams []*stream
	clients []*client.Generator
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	all     []uint64 // every ID of the phases analysed so far, sorted
}

func (r *run) now() time.Duration { return time.Since(r.start) }

// dialOptions reconnect fast after a node restarts (grpc's default backoff
// grows to 2 minutes, which would hide a node that is back).
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(grpcapi.StreamWindow), grpc.WithInitialConnWindowSize(grpcapi.StreamWindow),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond,
			Multiplier: 1.6, MaxDelay: 250 * time.Millisecond}, MinConnectTimeout: time.Second})}
}

// Pace of the load: each client takes clientBatch IDs every tick, each
// probe one ID every tick.
const (
	tick        = 5 * time.Millisecond
	clientBatch = 10
)

// startLoad starts one client per node, client k listing the nodes from
// node k on (so each node serves one client until it fails), and one probe
// per node (a gRPC Next of one ID, no failover: what that node does).
func startLoad(t testing.TB, nodes []*node) *run {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{start: time.Now(), ctx: ctx, stop: cancel}
	for k := range nodes {
		var targets []string
		for j := range nodes {
			targets = append(targets, nodes[(k+j)%len(nodes)].grpc)
		}
		nctx, ncancel := context.WithTimeout(ctx, 30*time.Second)
		g, err := client.New(nctx, client.Config{Targets: targets, MinBatch: 100, MaxBatch: 2000,
			FetchTimeout: 2 * time.Second, RetryMin: 10 * time.Millisecond, RetryMax: 250 * time.Millisecond,
			DialOptions: dialOptions()})
		ncancel()
		if err != nil {
			t.Fatalf("client %d: %v", k, err)
		}
		r.clients = append(r.clients, g)
		s := &stream{name: fmt.Sprintf("client %d", k)}
		r.streams = append(r.streams, s)
		r.wg.Go(func() { r.consume(g, s) })
	}
	for i, n := range nodes {
		cc, err := grpc.NewClient(n.grpc, dialOptions()...)
		if err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
		s := &stream{name: fmt.Sprintf("node %d", i), probe: true, node: i}
		r.streams = append(r.streams, s)
		r.wg.Go(func() { r.probe(idgenv1.NewIDServiceClient(cc), s); cc.Close() })
	}
	t.Cleanup(r.close)
	return r
}

func (r *run) consume(g *client.Generator, s *stream) {
	buf := make([]idgen.ID, clientBatch)
	for r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
		n, err := g.NextN(ctx, buf)
		cancel()
		at := r.now()
		for _, id := range buf[:n] {
			v, _ := id.Uint64()
			s.add(event{at: at, v: v})
		}
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, idgen.ErrClosed) {
				return
			}
			s.fail(at, err)
		}
		time.Sleep(tick)
	}
}

func (r *run) probe(c idgenv1.IDServiceClient, s *stream) {
	for r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
		resp, err := c.Next(ctx, &idgenv1.NextRequest{Count: 1})
		cancel()
		at := r.now()
		switch {
		case err == nil && len(resp.Ids) == 1 && len(resp.Ids[0].Value) == 8:
			s.add(event{at: at, v: binary.BigEndian.Uint64(resp.Ids[0].Value)})
		case r.ctx.Err() != nil:
			return
		default:
			s.fail(at, err)
		}
		time.Sleep(tick)
	}
}

func (r *run) close() {
	r.stop()
	for _, g := range r.clients {
		g.Close()
	}
	r.wg.Wait()
}

// waitIssuing waits until every stream's last event is an ID received at
// or after since, or until max has passed, and returns how long after
// since that was.
func (r *run) waitIssuing(since, max time.Duration) time.Duration {
	for r.now() < since+max {
		all := true
		for _, s := range r.streams {
			if !s.issuedSince(since) {
				all = false
				break
			}
		}
		if all {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r.now() - since
}

// clientStats sums the clients' counters.
func (r *run) clientStats() (fetchErrors, failovers int64) {
	for _, g := range r.clients {
		st := g.Stats()
		fetchErrors += st.FetchErrors
		failovers += st.Failovers
	}
	return
}

// A result is what one fault cost.
type result struct {
	fault       string
	duration    time.Duration // the fault's own length
	ids         int
	dups        int
	outOfOrder  int
	failed      int // client requests (NextN) that returned an error
	retried     int64
	failovers   int64
	probeFailed int           // one-ID requests to a single node that failed
	nodeGap     time.Duration // longest time one node issued nothing to its probe
	gapNode     int
	clusterGap  time.Duration // longest time a client received nothing
	skipped     int64         // segments: IDs never issued (-1: not counted)
	promise     string
	recovered   bool // every client and node issued the phase's last answer
	held        bool
	why         string // what did not hold
	t0, t1      time.Duration
}

// analyse fills r's counts from the events in [t0, t1). key gives the
// order key of a client's ID (the worker ID of a Snowflake ID: one
// client's IDs from one worker ID must increase); nil skips the clients'
// order check (segment IDs from several nodes interleave).
func (r *run) analyse(res *result, key func(uint64) int) {
	var ids []uint64
	res.recovered = true
	for _, s := range r.streams {
		ev := s.window(res.t0, res.t1)
		if len(ev) == 0 || ev[len(ev)-1].failed {
			res.recovered = false
		}
		last := res.t0
		var gap time.Duration
		for _, e := range ev {
			if e.failed {
				if s.probe {
					res.probeFailed++
				} else {
					res.failed++
				}
				continue
			}
			ids = append(ids, e.v)
			gap = max(gap, e.at-last)
			last = e.at
		}
		gap = max(gap, res.t1-last)
		if s.probe {
			res.outOfOrder += s.outOfOrder(res.t1, nil)
			if gap > res.nodeGap {
				res.nodeGap, res.gapNode = gap, s.node
			}
		} else {
			if key != nil {
				res.outOfOrder += s.outOfOrder(res.t1, key)
			}
			res.clusterGap = max(res.clusterGap, gap)
		}
	}
	res.ids = len(ids)
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			res.dups++
		}
	}
	ids = slices.Compact(ids)
	for _, v := range ids {
		if _, found := slices.BinarySearch(r.all, v); found {
			res.dups++
		}
	}
	r.all = mergeSorted(r.all, ids)
}

func mergeSorted(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return append(append(out, a[i:]...), b[j:]...)
}

// skipped counts, for segment runs, the IDs never issued between the
// smallest and the largest ID issued, each gap attributed to the phase in
// which the ID just below it was issued (a crashed node's last ID, or the
// last ID a stopped node issued from the segment it then dropped).
func (r *run) skipped(results []*result) {
	type issued struct {
		v  uint64
		at time.Duration
	}
	var all []issued
	for _, s := range r.streams {
		for _, e := range s.window(0, r.now()+time.Hour) {
			if !e.failed {
				all = append(all, issued{e.v, e.at})
			}
		}
	}
	slices.SortFunc(all, func(a, b issued) int { return cmpU(a.v, b.v) })
	for _, res := range results {
		res.skipped = 0
	}
	for i := 1; i < len(all); i++ {
		if d := all[i].v - all[i-1].v; d > 1 {
			for _, res := range results {
				if all[i-1].at >= res.t0 && all[i-1].at < res.t1 {
					res.skipped += int64(d - 1)
					break
				}
			}
		}
	}
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// table renders results as a Markdown table.
func table(title string, results []*result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", title)
	b.WriteString("| fault | duration | IDs | duplicates | out of order | client requests failed | client fetches retried (failovers) | node requests failed | longest gap, one node | longest gap, clients | IDs skipped | promise | held |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		skipped := "n/a"
		if r.skipped >= 0 {
			skipped = fmt.Sprintf("%d", r.skipped)
		}
		held := "yes"
		if !r.held {
			held = "**no**: " + r.why
		}
		fmt.Fprintf(&b, "| %s | %v | %d | %d | %d | %d | %d (%d) | %d | %v (node %d) | %v | %s | %s | %s |\n",
			r.fault, r.duration, r.ids, r.dups, r.outOfOrder, r.failed, r.retried, r.failovers, r.probeFailed,
			r.nodeGap.Round(time.Millisecond), r.gapNode, r.clusterGap.Round(time.Millisecond), skipped, r.promise, held)
	}
	return b.String()
}
