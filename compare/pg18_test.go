package compare_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/compare/report"
	"github.com/idgenkit/idgen/internal/testenv"
)

// TestPhysicsPG18 runs the physics of TestPhysics on a throwaway
// PostgreSQL 18 cluster (Config.PGBin), with the server-generated keys:
// pg-uuidv7 (DEFAULT uuidv7()) fills its leaves like uuidv7, and the
// WAL's leaf splits match the leaf pages added (PostgreSQL 18 describes a
// split as "level: 0, ...", where 15 wrote "level 0, ...": the count was 0
// before).
func TestPhysicsPG18(t *testing.T) {
	t.Parallel() // a throwaway cluster of its own
	bin := testenv.PG18Bin(t)
	needStrategies(t, "snowflake", "uuidv7", "uuidv4")
	rep, err := compare.Run(context.Background(), compare.Config{
		PGBin: bin, Rows: 20_000, Writers: 1, Batch: 1000, Runs: 1, NoReads: true, SharedBuffers: "32MB",
		Strategies: []string{"snowflake", "uuidv7", "uuidv4", "pg-uuidv7", "pg-uuidv4"},
	})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	var table strings.Builder
	report.WriteTable(&table, rep)
	t.Logf("\n%s", table.String())
	if !strings.HasPrefix(rep.ServerVersion, "18") || len(rep.Scenarios) != 1 || rep.Scenarios[0].IOMethod == "" {
		t.Errorf("server %q, scenarios %+v; want PostgreSQL 18 with its io_method", rep.ServerVersion, rep.Scenarios)
	}
	for _, r := range rep.Results {
		if r.PageSplits == nil || r.WALPageSplits == nil || r.LeafPages == nil {
			t.Errorf("%s: splits %v, WAL splits %v, leaf pages %v; want all measured (notes %v)", r.Strategy, r.PageSplits, r.WALPageSplits, r.LeafPages, rep.Notes)
			continue
		}
		if s, w := float64(*r.PageSplits), float64(*r.WALPageSplits); s == 0 || math.Abs(w-s) > 0.05*s {
			t.Errorf("%s: WAL leaf splits %v, leaf pages added %v; want within 5 %%", r.Strategy, w, s)
		}
		if r.DeviceReads == nil || r.DeviceWrites == nil {
			t.Errorf("%s: device reads %v, writes %v; want pg_stat_io's", r.Strategy, r.DeviceReads, r.DeviceWrites)
		}
	}
	density := func(name string) float64 {
		r := rep.Find(name)
		if r == nil || r.AvgLeafDensity == nil {
			t.Fatalf("%s: no row or no density", name)
		}
		return *r.AvgLeafDensity
	}
	if d, c := density("pg-uuidv7"), density("uuidv7"); math.Abs(d-c) > 2 {
		t.Errorf("pg-uuidv7 density %.1f %%, uuidv7 %.1f %%; want within 2 points", d, c)
	}
	// Random keys split mid-page: their density swings around 69 % as the
	// leaves fill and split in waves, 65.2-78.4 % at this size in 25
	// measured runs (pg-uuidv4 and uuidv4; 76 % failed one run in about
	// 12). Keys in order fill to the fillfactor, 89.5 %; 84 % lies between.
	if d := density("pg-uuidv4"); d > 84 {
		t.Errorf("pg-uuidv4 density %.1f %%; want ≤ 84 %% (random keys split mid-page; keys in order fill to 89.5 %%)", d)
	}
	if r := rep.Find("pg-uuidv7"); r.Method != "copy" || r.Facts == nil || r.Facts.Coordination != compare.CoordDatabase {
		t.Errorf("pg-uuidv7: method %q, facts %+v; want the Baseline's COPY and the database as coordinator", r.Method, r.Facts)
	}
}
