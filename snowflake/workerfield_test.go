package snowflake_test

import (
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// TestWorkerField: the one worker-field rule, worker, machine, process,
// shard, region, datacenter, the first the layout has. The rows after the
// presets are layouts where the four old rules disagreed (a lease: worker
// else machine; Options.WorkerID: worker only; migrate: worker else the
// first node field; compare: worker, machine, node, shard, process).
func TestWorkerField(t *testing.T) {
	tests := []struct {
		layout string
		name   string
		bits   int
	}{
		{"twitter", "worker", 5},
		{"default", "worker", 5},
		{"discord", "worker", 5},
		{"baidu", "worker", 22},
		{"region", "worker", 10},
		{"js53", "worker", 5},
		{"sonyflake", "machine", 16},
		{"instagram", "shard", 13},
		{"simpleflake", "", 0},
		{"time:41,datacenter:5,machine:5,sequence:11", "machine", 5}, // migrate reserved datacenter
		{"time:41,shard:5,process:5,sequence:11", "process", 5},      // compare took shard, a lease refused
		{"time:41,region:3,process:8,sequence:11", "process", 8},     // migrate reserved region
		{"time:41,datacenter:5,sequence:12", "datacenter", 5},        // compare and a lease found none
	}
	for _, tc := range tests {
		l, err := snowflake.Resolve(tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		name, bits, ok := l.WorkerField()
		if name != tc.name || bits != tc.bits || ok != (tc.name != "") {
			t.Errorf("Layout(%s).WorkerField() = %q, %d, %v; want %q, %d, %v", tc.layout, name, bits, ok, tc.name, tc.bits, tc.name != "")
		}
	}
}

// TestLeaseFillsWorkerField: a lease fills the layout's WorkerField,
// process here (it used to fill worker, else machine, and leave a
// process-only layout at process 0 on every node), and a datacenter field
// that is the worker field holds the worker ID, not the lease's
// DatacenterID.
func TestLeaseFillsWorkerField(t *testing.T) {
	tests := []struct {
		layout, field string
	}{
		{"time:41,shard:5,process:5,sequence:11", "process"},
		{"time:41,datacenter:5,sequence:12", "datacenter"},
	}
	for _, tc := range tests {
		l, err := snowflake.Resolve(tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		lease := &idgentest.Lease{}
		lease.Set(&idgen.Identity{WorkerID: 7, DatacenterID: 2, Generation: 1})
		g := mustNew(t, snowflake.Config{Layout: l, Clock: idgentest.NewClock(t0), Lease: lease})
		p, _ := g.Decompose(next(t, g))
		if v, _ := p.Node(tc.field); v != 7 {
			t.Errorf("layout %s under a lease of worker 7: %s %d; want 7", tc.layout, tc.field, v)
		}
	}
}
