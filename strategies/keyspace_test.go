package strategies_test

import (
	"strings"
	"testing"

	_ "github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
)

// TestKeyspace checks which pairs of specs issue the same IDs when each
// gets its own generator (and so its own sequence): the same layout, epoch
// and node values, however they are written, unless keyspace names them
// apart; never for random IDs, store-backed allocators or leased worker IDs.
func TestKeyspace(t *testing.T) {
	const key = "0000000000000000000000000000000000000000000000000000000000000001"
	lease := "postgres%3A%2F%2Fpostgres%40127.0.0.1%3A1%2Fx"
	tests := []struct {
		name, a, b string
		workerID   string // Options.WorkerID (IDGEN_WORKER_ID)
		same       bool
	}{
		{name: "same worker", a: "snowflake?worker=1", b: "snowflake?worker=1", same: true},
		{name: "other worker", a: "snowflake?worker=1", b: "snowflake?worker=2"},
		{name: "other datacenter", a: "snowflake?worker=1", b: "snowflake?worker=1&datacenter=1"},
		{name: "other epoch", a: "snowflake?worker=1", b: "snowflake?worker=1&epoch=2026-01-02"},
		{name: "other preset", a: "snowflake?worker=1", b: "snowflake?preset=twitter&worker=1"},
		{name: "default written out", a: "snowflake?worker=1", b: "snowflake?preset=default&worker=01&epoch=2026-01-01T00:00:00Z", same: true},
		{name: "layout text of the preset", a: "snowflake?preset=twitter&worker=3", b: "snowflake?layout=time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=1288834974657&worker=3", same: true},
		{name: "encoding and options", a: "snowflake?worker=1&encoding=crockford&random_start=true&rollback=hold", b: "snowflake?worker=1", same: true},
		{name: "keyspaces named apart", a: "snowflake?worker=1&keyspace=orders", b: "snowflake?worker=1&keyspace=events"},
		{name: "keyspace on one", a: "snowflake?worker=1&keyspace=orders", b: "snowflake?worker=1"},
		{name: "one keyspace named twice", a: "snowflake?worker=1&keyspace=orders", b: "snowflake?worker=1&keyspace=orders", same: true},
		{name: "static source", a: "snowflake?worker_source=static:1", b: "snowflake?worker=1", same: true},
		{name: "env source", a: "snowflake?worker_source=env", b: "snowflake?worker=2", workerID: "7", same: true},
		{name: "IDGEN_WORKER_ID over both", a: "snowflake?worker=1", b: "snowflake?worker=2", workerID: "7", same: true},
		{name: "ordinal source twice", a: "snowflake?worker_source=ordinal", b: "snowflake?worker_source=ordinal", same: true},
		{name: "lease twice", a: "snowflake?worker_source=" + lease, b: "snowflake?worker_source=" + lease},
		{name: "lease and static", a: "snowflake?worker_source=" + lease, b: "snowflake?worker_source=static:0"},
		{name: "random field", a: "snowflake?preset=simpleflake", b: "snowflake?preset=simpleflake"},
		{name: "sonyflake", a: "sonyflake?machine=3", b: "sonyflake?machine=3", same: true},
		{name: "sonyflake other machine", a: "sonyflake?machine=3", b: "sonyflake?machine=4"},
		{name: "sonyflake and its snowflake layout", a: "sonyflake?machine=3", b: "snowflake?layout=time:39,sequence:8,machine:16;tick=10ms;epoch=2025-01-01&machine=3", same: true},
		{name: "sonyflake under a source", a: "sonyflake?worker_source=static:3", b: "sonyflake?machine=3", same: true},
		{name: "flake128", a: "flake128?worker=5", b: "flake128?worker=5", same: true},
		{name: "flake128 other worker", a: "flake128?worker=5", b: "flake128"},
		{name: "public over a snowflake", a: "public?inner=snowflake%3Fworker%3D1", b: "snowflake?worker=1", same: true},
		{name: "uuidv7", a: "uuidv7", b: "uuidv7"},
		{name: "xid (one process-wide counter)", a: "xid?machine=1", b: "xid?machine=1"},
		{name: "segment on one biz tag", a: "segment?dsn=postgres://x@127.0.0.1:1/db&tag=orders", b: "segment?dsn=postgres://x@127.0.0.1:1/db&tag=orders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := strategies.Options{WorkerID: tt.workerID, LookupKey: func(string) (string, bool) { return key, true }}
			a, err := o.Keyspace(strategies.MustParse(tt.a))
			if err != nil {
				t.Fatalf("Keyspace(%q) = %v", tt.a, err)
			}
			b, err := o.Keyspace(strategies.MustParse(tt.b))
			if err != nil {
				t.Fatalf("Keyspace(%q) = %v", tt.b, err)
			}
			if same := a != "" && a == b; same != tt.same {
				t.Fatalf("Keyspace(%q) = %q, Keyspace(%q) = %q (WorkerID %q); want the same: %v", tt.a, a, tt.b, b, tt.workerID, tt.same)
			}
		})
	}
	got, err := strategies.Keyspace(strategies.MustParse("snowflake?preset=twitter&datacenter=1&worker=3&keyspace=orders"))
	want := `keyspace "orders": layout time:41,datacenter:5,worker:5,sequence:12;tick=1ms;epoch=2010-11-04T01:42:54.657Z, datacenter 1, worker 3`
	if err != nil || got != want {
		t.Fatalf("Keyspace(twitter) = %q, %v; want %q", got, err, want)
	}
	if _, err := strategies.Keyspace(strategies.MustParse("snowflake?worker=x")); err == nil || !strings.Contains(err.Error(), `worker="x"`) {
		t.Fatalf("Keyspace(worker=x) = %v; want the spec's error", err)
	}
}
