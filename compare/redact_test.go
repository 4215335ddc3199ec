package compare_test

import (
	"testing"

	"github.com/idgenkit/idgen/compare"
)

func TestFindMaskedSpec(t *testing.T) {
	rep := &compare.Report{Results: []compare.Result{{Strategy: compare.Baseline}, {Strategy: "segment?dsn=postgres://u:xxxxx@h/db&tag=a"}}}
	for _, spec := range []string{"segment?dsn=postgres://u:s3cret@h/db&tag=a", "segment?dsn=postgres://u:xxxxx@h/db&tag=a"} {
		if r := rep.Find(spec); r == nil || r.Strategy != "segment?dsn=postgres://u:xxxxx@h/db&tag=a" {
			t.Errorf("Find(%q) = %v; want the masked segment row", spec, r)
		}
	}
	if r := rep.Find(compare.Baseline); r == nil {
		t.Errorf("Find(%q) = nil; want the baseline row", compare.Baseline)
	}
}
