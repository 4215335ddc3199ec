package strategies_test

import (
	"errors"
	"io"
	"testing"

	"github.com/idgenkit/idgen/strategies"
)

// fieldOf returns field name of g's next ID.
func fieldOf(t *testing.T, spec string, opts strategies.Options, name string) uint64 {
	t.Helper()
	g, err := opts.NewText(t.Context(), spec)
	if err != nil {
		t.Fatalf("New(%s) = %v", spec, err)
	}
	defer g.(io.Closer).Close()
	id, err := g.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name == name {
			return f.Value
		}
	}
	t.Fatalf("%s: ID %s has no %s field", spec, id, name)
	return 0
}

// TestWorkerIDSetsWorkerField: Options.WorkerID (IDGEN_WORKER_ID) sets a
// snowflake layout's WorkerField, as a lease fills it: machine in the
// sonyflake preset, shard in instagram's, where it used to set only a
// worker field and leave every node at 0 in these layouts.
func TestWorkerIDSetsWorkerField(t *testing.T) {
	opts := strategies.Options{WorkerID: "9"}
	for spec, field := range map[string]string{
		"snowflake?preset=sonyflake":                             "machine",
		"snowflake?preset=instagram":                             "shard",
		"snowflake?layout=time:41,shard:5,process:5,sequence:11": "process",
		"snowflake?preset=twitter&datacenter=1":                  "worker",
	} {
		if v := fieldOf(t, spec, opts, field); v != 9 {
			t.Errorf("%s with WorkerID 9: %s %d; want 9", spec, field, v)
		}
	}
	// Beside a worker source other than env it is refused, as beside a
	// worker field (it used to be ignored there).
	_, err := opts.NewText(t.Context(), "snowflake?preset=sonyflake&worker_source=static:1")
	var wc *strategies.WorkerConflictError
	if !errors.As(err, &wc) || wc.Key != strategies.EnvWorkerID {
		t.Fatalf("sonyflake preset, WorkerID and worker_source = %v; want a *WorkerConflictError naming %s", err, strategies.EnvWorkerID)
	}
}

// TestWorkerSourceFillsWorkerField: a worker source fills the layout's
// WorkerField, process here; it used to refuse a layout without a worker
// or machine field.
func TestWorkerSourceFillsWorkerField(t *testing.T) {
	spec := "snowflake?layout=time:41,shard:5,process:5,sequence:11&shard=3&worker_source=static:4"
	if v := fieldOf(t, spec, strategies.Options{}, "process"); v != 4 {
		t.Fatalf("%s: process %d; want 4", spec, v)
	}
	if v := fieldOf(t, spec, strategies.Options{}, "shard"); v != 3 {
		t.Fatalf("%s: shard %d; want 3, the spec's", spec, v)
	}
}
