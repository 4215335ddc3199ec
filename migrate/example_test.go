package migrate_test

import (
	"fmt"
	"os"
	"time"

	"github.com/idgenkit/idgen/migrate"
)

// Status.Write prints what idgen migrate status shows: here a backfill
// half done, waiting on a standby's lag.
func ExampleStatus_Write() {
	st := &migrate.Status{
		Table: "public.orders", Phase: "backfill", Running: true,
		RowsDone: 500_000, RowsTotal: 1_000_000, Rate: 25_000, ETA: 20 * time.Second,
		Lag: 1500 * time.Millisecond, Active: 3, Batch: 10_000,
		Hold:    "replication lag 1.5s over Options.MaxLag 1s",
		Updated: time.Date(2026, 11, 23, 1, 30, 0, 0, time.UTC),
	}
	st.Write(os.Stdout)
	// Output:
	// table    public.orders
	// phase    backfill, running
	// rows     500000 of 1000000 (50.0%)
	// rate     25000 rows/s, ETA 20s
	// lag      1.5s (standby replay), 3 active backends
	// batch    10000 rows, fixed size
	// paused   no
	// waiting  replication lag 1.5s over Options.MaxLag 1s
	// updated  2026-11-23T01:30:00Z
}

// Report.Write prints Verify's findings, and Report.Err counts them in an
// error: here a child row whose new foreign key references no parent.
func ExampleReport_Write() {
	r := &migrate.Report{
		Table: "public.orders", Phase: "children", Rows: 1000, Keys: 1000, Distinct: 1000, Mapped: 1000, OldKeys: 1000,
		Children: []migrate.ChildReport{{Table: "items", Column: "order_id", Rows: 3000, Orphans: 1}},
		Problems: []string{"1 rows of items reference no orders row"},
	}
	r.Write(os.Stdout)
	fmt.Println("ok:", r.OK())
	fmt.Println(r.Err())
	// Output:
	// table   public.orders (phase children): 1000 rows, 1000 new keys, 1000 distinct, 1000 of 1000 old keys mapped
	// child   items.order_id: 3000 rows, 1 orphans, 0 missing, 0 mismatched
	// problem 1 rows of items reference no orders row
	// ok: false
	// migrate: verify failed: 1 problem(s) in public.orders
}
