package faults

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/internal/throwaway"
)

// sizes are a campaign's durations. The CI size scales the lease down
// (ttl 10 s: renewals every second, lost after 5 s, so a store freeze
// shorter than 4 s costs no request) and the faults with it: the long
// run's 5 s and 20 s (with ttl 30 s: renewals every 3 s, lost after 15 s)
// become 1 s and 6 s, on either side of the same bounds. etcd's election
// timeout is halved (500 ms, an election within 0.5-1 s): a frozen leader
// costs nothing when a new one is elected within an attempt, (LostAfter -
// RenewEvery) / 2, which is 2 s here and 6 s at ttl 30 s. With ttl 6 s
// (a 2.4 s window) a frozen majority of 1 s lost the lease now and then,
// most likely because after the thaw the member left alone had started
// elections it could not win, and its higher term forced one more (etcd
// 3.4 runs without pre-vote), which 2.4 s did not always cover.
type sizes struct {
	name        string
	ttl         time.Duration // the worker-ID lease's TTL (etcd)
	short, long time.Duration // a fault under LostAfter - RenewEvery, and one over LostAfter
	warm        time.Duration // before a fault
	// After a fault heals, topology B (and A at settleA 0) waits recover.
	// Topology A at settleA > 0 waits until every node's probe and every
	// client has issued again since the heal (at most issueAgainWithin:
	// one that has not is reported, "recovered" false), then settleA
	// more, so that each phase ends in steady issuance.
	recover, settleA time.Duration
	down             time.Duration // how long a killed node stays down
	behind           time.Duration // how far a restarted node's clock is behind its mark
	latency          time.Duration // added to every round trip on the store path
	latencyA         time.Duration // how long topology A's latency fault lasts
	repeat           int           // rounds of every fault
	// etcd's --heartbeat-interval and --election-timeout (ms); 0: etcd's
	// defaults, 100 and 1000
	heartbeat, election int
	// liveness: a liveness promise that does not hold (a request failed,
	// a node not issuing again by the end of its phase) fails the test.
	// Off for the CI size, which still fails on any duplicate or ID out of
	// order and reports every promise in its table: its lease (ttl 10 s)
	// and election timeout (500 ms) leave margins of 1-2 s, which a busy
	// 2-core machine's scheduling delays can use up (a frozen leader for
	// 6 s cost 113 node requests, none of a client's, once in .ci/run at
	// load 8, after passing in the runs before). The long size, with ttl
	// 30 s, holds every promise to the letter.
	liveness bool
}

var (
	// The CI size's topology A ends a phase once every node and client
	// issues again and every etcd member follows one leader and has
	// applied what that leader held (etcdCluster.waitWhole), plus a second
	// (settleA), not after a fixed 3 s: in a run at load 14 every stream
	// issued again within 0.2 s of the heal, but 1 s after the long
	// majority freeze, whose nodes lease their worker IDs again; in
	// topology A a store fault's cost shows while it lasts (a node stops
	// when its lease is lost) and its heal is done once a node issues
	// again and the cluster is whole. (The 6 s freeze of the leader, a
	// promise the CI size's margins leave exposed on a busy machine, cost
	// node requests, none of a client's, in 4 of 9 runs at load 15-22 with
	// phases so shortened, with or without the wait for the cluster, and
	// with the fixed 3 s kept after each etcd freeze; in 0 of 4 with the
	// fixed 3 s after every fault: too few runs to tell.) Not so in
	// topology B: a node meets a store
	// fault only when it fetches its next segment, which can come seconds
	// after the heal (after PostgreSQL's restart, a node's requests failed
	// 1 s after all had issued again), so B keeps its fixed 3 s. Topology
	// A's latency fault lasts 3 s, three lease renewals (one a second) at
	// 200 ms more each; B's keeps 6 s, so that its nodes fetch segments
	// (one per node every few seconds) under the latency.
	ciSize   = sizes{name: "CI", ttl: 10 * time.Second, short: time.Second, long: 6 * time.Second, warm: 500 * time.Millisecond, recover: 3 * time.Second, settleA: time.Second, down: time.Second, behind: time.Second, latency: 200 * time.Millisecond, latencyA: 3 * time.Second, repeat: 1, heartbeat: 50, election: 500}
	longSize = sizes{name: "long", ttl: 30 * time.Second, short: 5 * time.Second, long: 20 * time.Second, warm: 3 * time.Second, recover: 10 * time.Second, down: 5 * time.Second, behind: 5 * time.Second, latency: 200 * time.Millisecond, latencyA: 20 * time.Second, repeat: 2, liveness: true}
)

// issueAgainWithin bounds topology A's wait for every node and client to
// issue again after a heal (sizes.settleA).
const issueAgainWithin = 10 * time.Second

// The segment spec's steps: small, so that a store fault outlasting what a
// node holds shows (at about 2,200 IDs a second a node holds 5-10 s).
const (
	segStep    = 1000
	segMaxStep = 10000
)

// A fault is injected while the load runs and healed after its duration.
type fault struct {
	name    string
	d       time.Duration
	promise string
	inject  func(t *testing.T) (heal func(t *testing.T))
	check   func(r *result) string // what did not hold, or ""
}

func noFail(r *result) string {
	if r.failed > 0 || r.probeFailed > 0 {
		return fmt.Sprintf("%d client and %d node requests failed", r.failed, r.probeFailed)
	}
	return ""
}

func clientsNoFail(r *result) string {
	if r.failed > 0 {
		return fmt.Sprintf("%d client requests failed", r.failed)
	}
	return ""
}

func anyFail(*result) string { return "" }

// TestCampaign runs topology A (Snowflake on etcd leases) and topology B
// (segments on PostgreSQL) under every fault, and fails on a duplicate ID
// or an ID out of order from one node; at the long size (and with
// IDGEN_FAULTS_STRICT=1) also on a node that does not issue again by the
// end of its phase, or a promise that does not hold (sizes.liveness).
// IDGEN_FAULTS=long runs the long size; IDGEN_FAULTS_OUT=FILE writes the
// tables there.
func TestCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault campaign takes about 55 s; -short skips it")
	}
	sz := ciSize
	if os.Getenv("IDGEN_FAULTS") == "long" {
		sz = longSize
	}
	if os.Getenv("IDGEN_FAULTS_STRICT") == "1" {
		sz.liveness = true
	}
	start := time.Now()
	var out strings.Builder
	after := fmt.Sprintf("each phase ends %v after the heal", sz.recover)
	if sz.settleA > 0 {
		after = fmt.Sprintf("each phase ends %v after the heal, in topology A %v after every node and client issues again and etcd is whole", sz.recover, sz.settleA)
	}
	fmt.Fprintf(&out, "Fault campaign, %s size (lease ttl %v; faults %v and %v, topology A's latency %v; %s; repeated %d times), %s\n\n",
		sz.name, sz.ttl, sz.short, sz.long, sz.latencyA, after, sz.repeat, start.UTC().Format(time.RFC3339))
	// The topologies run at once (separate processes, ports and
	// directories): the campaign takes the wall time of the longer, A, not
	// the sum. Parallel subtests start when this function returns; its
	// cleanup runs when both have ended.
	var tableA, tableB string
	t.Cleanup(func() {
		out.WriteString(tableA + "\n" + tableB)
		fmt.Fprintf(&out, "\nWall time %v.\n", time.Since(start).Round(time.Second))
		t.Log("\n" + out.String())
		if path := os.Getenv("IDGEN_FAULTS_OUT"); path != "" {
			if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
				t.Errorf("results file: %v", err)
			}
		}
	})
	t.Run("A", func(t *testing.T) {
		t.Parallel()
		tableA = table("Topology A: three `idgen serve` (Snowflake, worker IDs leased from a three-member etcd)", topologyA(t, sz))
	})
	t.Run("B", func(t *testing.T) {
		t.Parallel()
		tableB = table("Topology B: three `idgen serve` on one segment biz tag, PostgreSQL", topologyB(t, sz))
	})
}

// runPhases runs each fault sz.repeat times, analyses each phase, ends
// with a phase without a fault, and checks every phase.
// With sz.settleA > 0, healthy (if not nil) waits, at most the time it is
// given, until the store is whole again, so that the next fault does not
// meet the last one's aftermath, and returns how long it waited.
func runPhases(t *testing.T, r *run, nodes []*node, sz sizes, faults []fault, key func(uint64) int,
	healthy func(within time.Duration) time.Duration, after func([]*result)) []*result {
	defer func() {
		if t.Failed() {
			for _, n := range nodes {
				t.Logf("%s, last lines of its log:\n%s", n.name, n.tail())
			}
			for _, s := range r.streams {
				t.Logf("%s: last error: %v", s.name, s.lastErr())
			}
		}
	}()
	var results []*result
	var checks []func(*result) string
	quiet := fault{name: "none (end of run)", promise: "0 duplicates", inject: func(*testing.T) func(*testing.T) { return func(*testing.T) {} }, check: noFail}
	var all []fault
	for range sz.repeat {
		all = append(all, faults...)
	}
	for _, f := range append(all, quiet) {
		res := &result{fault: f.name, duration: f.d, promise: f.promise, skipped: -1}
		res.t0 = r.now()
		fe0, fo0 := r.clientStats()
		time.Sleep(sz.warm)
		heal := f.inject(t)
		time.Sleep(f.d)
		heal(t)
		if sz.settleA == 0 {
			time.Sleep(sz.recover)
		} else {
			healed := r.now()
			back := r.waitIssuing(healed, issueAgainWithin)
			whole := back
			if healthy != nil {
				whole = back + healthy(issueAgainWithin)
			}
			t.Logf("%s: every node and client issuing again %v after the heal, the store whole again %v after it",
				f.name, back.Round(time.Millisecond), whole.Round(time.Millisecond))
			time.Sleep(sz.settleA)
		}
		res.t1 = r.now()
		fe1, fo1 := r.clientStats()
		res.retried, res.failovers = fe1-fe0, fo1-fo0
		r.analyse(res, key)
		t.Logf("%s: %d IDs, %d duplicates, %d out of order, %d client / %d node requests failed, gaps %v (node %d) / %v",
			res.fault, res.ids, res.dups, res.outOfOrder, res.failed, res.probeFailed,
			res.nodeGap.Round(time.Millisecond), res.gapNode, res.clusterGap.Round(time.Millisecond))
		results = append(results, res)
		checks = append(checks, f.check)
	}
	if after != nil {
		after(results)
	}
	for i, res := range results {
		var safety, why []string
		if res.dups > 0 {
			safety = append(safety, fmt.Sprintf("%d duplicates", res.dups))
		}
		if res.outOfOrder > 0 {
			safety = append(safety, fmt.Sprintf("%d IDs out of order", res.outOfOrder))
		}
		if !res.recovered {
			why = append(why, "a node or client did not issue again by the end of the phase")
		}
		if w := checks[i](res); w != "" {
			why = append(why, w)
		}
		why = append(safety, why...)
		res.held = len(why) == 0
		res.why = strings.Join(why, "; ")
		switch {
		case len(safety) > 0:
			t.Errorf("%s: %s", res.fault, strings.Join(safety, "; "))
		case !res.held && sz.liveness:
			t.Errorf("%s: promise %q does not hold: %s", res.fault, res.promise, res.why)
		case !res.held:
			t.Logf("%s: promise %q did not hold at the %s size (reported, not failed; IDGEN_FAULTS_STRICT=1 fails it): %s", res.fault, res.promise, sz.name, res.why)
		}
	}
	return results
}

// serveProc is `idgen serve -s spec` on node n's gRPC port, logging into dir.
func serveProc(bin, dir string, n *node, spec string, more ...string) proc {
	return proc{name: fmt.Sprintf("node %d", n.i), bin: bin, log: filepath.Join(dir, fmt.Sprintf("node%d.log", n.i)),
		args: append([]string{"serve", "-s", spec, "--addr", "127.0.0.1:0", "--grpc-addr", n.grpc, "--log-level", "warn"}, more...)}
}

// launch starts the nodes (stopped with SIGTERM at the end), waits until
// each serves, and starts the load.
func launch(t *testing.T, nodes []*node) *run {
	for _, n := range nodes {
		n.start(t)
		t.Cleanup(n.term)
	}
	for _, n := range nodes {
		n.waitServing(t)
	}
	return startLoad(t, nodes)
}

// delayAll adds d to every round trip (d/2 each way) between the nodes and
// their store, until healed.
func delayAll(nodes []*node, d time.Duration) func(*testing.T) func(*testing.T) {
	return func(*testing.T) func(*testing.T) {
		for _, n := range nodes {
			n.setDelay(d / 2)
		}
		return func(*testing.T) {
			for _, n := range nodes {
				n.setDelay(0)
			}
		}
	}
}

// topologyA: three etcd members, three serve nodes on Snowflake with
// worker IDs leased from them (each node's etcd traffic through its own
// proxy per member), three clients.
func topologyA(t *testing.T, sz sizes) []*result {
	bin := idgenBinary(t)
	e := startEtcd(t, 3, sz.heartbeat, sz.election)
	dir := t.TempDir()
	var nodes []*node
	for i := range 3 {
		n := &node{i: i, grpc: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
			state: filepath.Join(dir, fmt.Sprintf("node%d.worker", i)), mark: filepath.Join(dir, fmt.Sprintf("node%d.mark", i))}
		var eps []string
		for _, c := range e.clients {
			p := testenv.NewLink(t, c)
			n.proxies = append(n.proxies, p)
			eps = append(eps, p.Addr())
		}
		source := fmt.Sprintf("etcd://%s/faults?ttl=%s&state_file=%s", strings.Join(eps, ","), sz.ttl, url.QueryEscape(n.state))
		n.proc = serveProc(bin, dir, n, "snowflake?preset=twitter&datacenter=1&high_water="+url.QueryEscape(n.mark), "--worker-source", source)
		nodes = append(nodes, n)
	}
	r := launch(t, nodes)
	victim := nodes[1]
	lost, renew := sz.ttl/2, sz.ttl/10
	window := lost - renew
	restart := func(wipe bool) func(*testing.T) func(*testing.T) {
		return func(t *testing.T) func(*testing.T) {
			victim.kill()
			if wipe {
				os.Remove(victim.state)
				os.Remove(victim.mark)
			}
			return func(t *testing.T) { victim.start(t); victim.waitServing(t) }
		}
	}
	signal := func(who func(t *testing.T) []int) func(*testing.T) func(*testing.T) {
		return func(t *testing.T) func(*testing.T) {
			ms := who(t)
			for _, m := range ms {
				e.members[m].signal(syscall.SIGSTOP)
			}
			return func(t *testing.T) {
				for _, m := range ms {
					e.members[m].signal(syscall.SIGCONT)
				}
			}
		}
	}
	leader := func(t *testing.T) []int { return []int{e.leader(t)} }
	majority := func(t *testing.T) []int { l := e.leader(t); return []int{l, (l + 1) % 3} }
	cut := func(t *testing.T) func(*testing.T) {
		victim.setCut(true)
		return func(*testing.T) { victim.setCut(false) }
	}
	latency := delayAll(nodes, sz.latency)
	behind := func(t *testing.T) func(*testing.T) {
		victim.term()
		mark := time.Now().Add(sz.behind).UTC().Format(time.RFC3339Nano)
		if err := os.WriteFile(victim.mark, []byte(mark+"\n"), 0o644); err != nil {
			t.Fatalf("mark file: %v", err)
		}
		victim.start(t)
		victim.waitServing(t)
		return func(*testing.T) {}
	}
	freeWindow := fmt.Sprintf("no request fails: a store freeze shorter than LostAfter − RenewEvery (%v) costs none", window)
	faults := []fault{
		{name: "kill -9 of a serve node, restarted with its state file", d: sz.down, inject: restart(false), check: clientsNoFail,
			promise: "no client request fails (the clients fail over); the node comes back"},
		{name: "kill -9 of a serve node, restarted with its state and mark files wiped", d: sz.down, inject: restart(true), check: clientsNoFail,
			promise: "no client request fails; the etcd marks keep the worker IDs' IDs increasing"},
		{name: "SIGSTOP of the etcd leader", d: sz.short, inject: signal(leader), check: noFail, promise: freeWindow},
		{name: "SIGSTOP of the etcd leader", d: sz.long, inject: signal(leader), check: noFail,
			promise: "no request fails: two members keep a quorum and elect a leader within (LostAfter − RenewEvery) / 2"},
		{name: "SIGSTOP of two etcd members (a majority)", d: sz.short, inject: signal(majority), check: noFail, promise: freeWindow},
		{name: "SIGSTOP of two etcd members (a majority)", d: sz.long, inject: signal(majority), check: anyFail,
			promise: fmt.Sprintf("every node stops within LostAfter (%v) and issues again after the thaw", lost)},
		{name: "network cut between one serve node and etcd", d: sz.short, inject: cut, check: noFail, promise: freeWindow},
		{name: "network cut between one serve node and etcd", d: sz.long, inject: cut, check: clientsNoFail,
			promise: fmt.Sprintf("that node stops within LostAfter (%v); no client request fails (failover)", lost)},
		{name: fmt.Sprintf("%v more per round trip between every serve node and etcd", sz.latency), d: sz.latencyA, inject: latency, check: noFail,
			promise: "no request fails: the request path never waits on the store"},
		{name: "serve node restarted with its clock behind its high-water mark", d: sz.behind, inject: behind, check: clientsNoFail,
			promise: "the node issues nothing before its clock passes the mark (503); no client request fails"},
	}
	twitterWorker := func(v uint64) int { return int(v >> 12 & 0x3ff) } // datacenter and worker
	res := runPhases(t, r, nodes, sz, faults, twitterWorker, e.waitWhole, nil)
	r.close()
	return res
}

// topologyB: a throwaway PostgreSQL cluster on a loopback port, one
// segment biz tag, three serve nodes each through its own proxy, three
// clients.
func topologyB(t *testing.T, sz sizes) []*result {
	sz.settleA = 0 // B's store faults show after the heal (sizes.settleA)
	bin := idgenBinary(t)
	if _, err := throwaway.FindPostgres(); err != nil {
		if testenv.CI() {
			t.Fatalf("PostgreSQL binaries missing under CI=true: %v", err)
		}
		t.Skipf("PostgreSQL binaries missing: %v", err)
	}
	port := freePort(t)
	ctx := context.Background()
	pg, err := throwaway.StartPostgres(ctx, throwaway.PostgresConfig{SharedBuffers: "32MB",
		Settings: []string{"listen_addresses = '127.0.0.1'", fmt.Sprintf("port = %d", port)}})
	if err != nil {
		t.Fatalf("throwaway PostgreSQL: %v", err)
	}
	t.Cleanup(func() { pg.Stop() })
	direct := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if out, err := exec.Command(bin, "segment", "init", "--dsn", direct, "--tag", "faults", "--step", fmt.Sprint(segStep)).CombinedOutput(); err != nil {
		t.Fatalf("segment init: %v: %s", err, out)
	}
	dir := t.TempDir()
	var nodes []*node
	for i := range 3 {
		p := testenv.NewLink(t, fmt.Sprintf("127.0.0.1:%d", port))
		n := &node{i: i, grpc: fmt.Sprintf("127.0.0.1:%d", freePort(t)), proxies: []*testenv.Link{p}}
		dsn := fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", p.Addr())
		spec := fmt.Sprintf("segment?dsn=%s&tag=faults&min_step=%d&max_step=%d", url.QueryEscape(dsn), segStep, segMaxStep)
		n.proc = serveProc(bin, dir, n, spec)
		nodes = append(nodes, n)
	}
	r := launch(t, nodes)
	victim := nodes[1]
	// The cut goes to node 0, which still serves client 0 at the end of the
	// run: a client stays with the node it failed over to, so after the
	// kill node 1 serves its probe alone, and its segments would outlast
	// any cut.
	cut := func(t *testing.T) func(*testing.T) {
		nodes[0].setCut(true)
		return func(*testing.T) { nodes[0].setCut(false) }
	}
	var restartTook []time.Duration
	faults := []fault{
		{name: "kill -9 of a serve node, restarted", d: sz.down, check: clientsNoFail,
			promise: "no client request fails (failover); the node's held segments are skipped, never reissued",
			inject: func(t *testing.T) func(*testing.T) {
				victim.kill()
				return func(t *testing.T) { victim.start(t); victim.waitServing(t) }
			}},
		{name: "PostgreSQL restarted (`pg_ctl restart -m immediate`: SIGQUIT, crash recovery)", check: noFail,
			promise: "no request fails: nodes issue from the segments they hold while the store restarts",
			inject: func(t *testing.T) func(*testing.T) {
				t0 := time.Now()
				if err := pg.RestartImmediate(ctx); err != nil {
					t.Fatalf("restart PostgreSQL: %v", err)
				}
				restartTook = append(restartTook, time.Since(t0))
				return func(*testing.T) {}
			}},
		{name: fmt.Sprintf("%v more per round trip between every serve node and PostgreSQL", sz.latency), d: sz.long, check: noFail,
			promise: "no request fails: the next segment is fetched ahead (prefetch)",
			inject:  delayAll(nodes, sz.latency)},
		{name: "network cut between one serve node and PostgreSQL", d: sz.short, check: noFail,
			promise: "no request fails while the node's held segments last", inject: cut},
		{name: "network cut between one serve node and PostgreSQL", d: sz.long, check: clientsNoFail,
			promise: "no client request fails (failover once the node's segments run out)", inject: cut},
	}
	res := runPhases(t, r, nodes, sz, faults, nil, nil, func(results []*result) {
		r.close()
		for _, n := range nodes {
			n.term()
		}
		r.skipped(results)
		for _, res := range results {
			if strings.HasPrefix(res.fault, "PostgreSQL restarted") && len(restartTook) > 0 {
				res.duration, restartTook = restartTook[0].Round(time.Millisecond), restartTook[1:]
			}
		}
	})
	return res
}
