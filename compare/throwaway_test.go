package compare_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/internal/testenv"
)

// needBinaries fails (CI) or skips the test without PostgreSQL's server
// binaries.
func needBinaries(t *testing.T) { testenv.PostgresBin(t) }

// TestRunThrowaway runs a small comparison on the embedded default: a
// throwaway cluster provisioned by Run itself.
func TestRunThrowaway(t *testing.T) {
	needBinaries(t)
	needStrategies(t, "uuidv4")
	// A temporary directory of this test's own, so that another test's
	// cluster (migrate's standby test runs one) is not taken for a leftover.
	testenv.OwnTempDir(t)
	before, _ := os.ReadDir(os.TempDir())
	// 20 reads of each kind: the reads' figures are TestReads'.
	rep, err := compare.Run(context.Background(), compare.Config{
		Rows: 5000, Writers: 2, Batch: 500, Preload: 5000, SharedBuffers: "32MB", Runs: 1, ReadOps: 20, Strategies: []string{"uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if !rep.Throwaway || rep.SharedBuffers != "32MB" || len(rep.Results) != 4 {
		t.Fatalf("report: throwaway %v, shared_buffers %q, %d results; want true, 32MB, 4", rep.Throwaway, rep.SharedBuffers, len(rep.Results))
	}
	for _, r := range rep.Results {
		if len(r.Unavailable) > 0 {
			t.Errorf("%s: unavailable %v; the throwaway cluster has every extension (notes %v)", r.Strategy, r.Unavailable, rep.Notes)
		}
	}
	// After CHECKPOINT, random keys touch preloaded leaf pages all over the
	// index: each first touch writes a full-page image.
	if v4 := rep.Find("uuidv4"); v4 != nil && v4.WALFPI != nil && *v4.WALFPI < 10 {
		t.Errorf("uuidv4 after a preload: %d full-page images; want at least 10", *v4.WALFPI)
	}
	after, _ := os.ReadDir(os.TempDir())
	for _, e := range after {
		if strings.HasPrefix(e.Name(), "idgen-compare-") && !containsEntry(before, e.Name()) {
			t.Errorf("%s left behind in %s", e.Name(), os.TempDir())
		}
	}
}

func containsEntry(es []os.DirEntry, name string) bool {
	for _, e := range es {
		if e.Name() == name {
			return true
		}
	}
	return false
}
