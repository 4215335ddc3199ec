package cli_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv/zktest"
	"github.com/idgenkit/idgen/snowflake"
)

// TestGenThreeNodesZK runs three "idgen gen" processes at once on one
// ZooKeeper worker source: each holds a worker ID of its own while it
// prints, and no ID repeats across the three.
func TestGenThreeNodesZK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the idgen binary and starts ZooKeeper")
	}
	t.Parallel() // its own ZooKeeper path; its processes' environment is set, not inherited
	zkAddr := zktest.Shared(t)
	path := fmt.Sprintf("/idgen-three-%d", time.Now().UnixNano())
	bin := buildIdgen(t)
	const n = 20000 // 380 kB of output, six times a pipe's 64 KiB: a process blocks on its pipe, holding its lease, until read
	l, _ := snowflake.Preset("twitter")
	type node struct {
		cmd    *exec.Cmd
		sc     *bufio.Scanner
		first  string
		ids    []uint64
		worker uint64
		err    error
	}
	nodes := make([]*node, 3)
	for i := range nodes {
		src := fmt.Sprintf("zk://%s%s?node=host-%d&ttl=6s", zkAddr, path, i)
		cmd := exec.Command(bin, "gen", "-s", "snowflake?preset=twitter&datacenter=1", "--worker-source", src, "-n", strconv.Itoa(n))
		cmd.Env = append(cmd.Environ(), "IDGEN_WORKER_SOURCE=", "IDGEN_WORKER_ID=")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		nodes[i] = &node{cmd: cmd, sc: bufio.NewScanner(out)}
		// The first line means the process holds its lease; it cannot
		// finish (and release) until the test reads the rest.
		if !nodes[i].sc.Scan() {
			cmd.Wait()
			t.Fatalf("node %d printed nothing: %s", i, stderr.String())
		}
		nodes[i].first = nodes[i].sc.Text()
	}
	var wg sync.WaitGroup
	for _, nd := range nodes {
		wg.Go(func() {
			lines := []string{nd.first}
			for nd.sc.Scan() {
				lines = append(lines, nd.sc.Text())
			}
			nd.err = nd.cmd.Wait()
			for _, line := range lines {
				v, err := strconv.ParseUint(line, 10, 64)
				if err != nil {
					nd.err = fmt.Errorf("printed %q", line)
					return
				}
				nd.ids = append(nd.ids, v)
			}
		})
	}
	wg.Wait()
	seen := make(map[uint64]bool, 3*n)
	workers := map[uint64]int{}
	for i, nd := range nodes {
		if nd.err != nil || len(nd.ids) != n {
			t.Fatalf("node %d: %v, %d IDs; want exit 0 and %d IDs", i, nd.err, len(nd.ids), n)
		}
		for j, v := range nd.ids {
			p, _ := l.Decompose(v)
			w, _ := p.Node("worker")
			if j == 0 {
				nd.worker = w
			} else if w != nd.worker {
				t.Fatalf("node %d: ID %d has worker %d, its first had %d", i, v, w, nd.worker)
			}
			if seen[v] {
				t.Fatalf("node %d: ID %d issued twice", i, v)
			}
			seen[v] = true
		}
		if prev, ok := workers[nd.worker]; ok {
			t.Fatalf("nodes %d and %d both held worker ID %d", prev, i, nd.worker)
		}
		workers[nd.worker] = i
	}
	t.Logf("3 nodes, workers %v, %d IDs, no duplicate", workers, len(seen))
}

func TestGenHostnameHashWarns(t *testing.T) {
	t.Setenv("IDGEN_WORKER_SOURCE", "")
	out, errs, code := run("gen", "-s", "snowflake?preset=twitter", "--worker-source", "hostname-hash?accept_collisions=true")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("gen --worker-source hostname-hash?accept_collisions=true: exit %d, %q, %s", code, out, errs)
	}
	if !strings.HasPrefix(errs, "idgen: worker ID ") || !strings.Contains(errs, "not safe for a dynamic fleet") {
		t.Fatalf("stderr = %q; want the collision warning", errs)
	}
	_, errs, code = run("gen", "-s", "snowflake?preset=twitter", "--worker-source", "hostname-hash")
	if code != 2 || !strings.Contains(errs, "accept_collisions=true") {
		t.Fatalf("gen --worker-source hostname-hash without opt-in: exit %d, %s; want 2 and the opt-in named", code, errs)
	}
	_, errs, code = run("gen", "-s", "snowflake?preset=twitter", "--worker-source", "ip:16")
	if code != 2 || !strings.Contains(errs, "the worker field has 5 bits, fewer than the 8") {
		t.Fatalf("gen --worker-source ip:16 on a 5-bit field: exit %d, %s; want 2 and the field named", code, errs)
	}
}
