package snowflake_test

import (
	"slices"
	"testing"

	"github.com/idgenkit/idgen/snowflake"
)

// TestWarnings: a degenerate layout gets one sentence a fault; the presets
// get none.
func TestWarnings(t *testing.T) {
	tests := []struct {
		layout string
		want   []string
	}{
		{"time:41,sequence:12;tick=1ns", []string{"tick 1ns is under 1ms: system clocks seldom advance that finely, and the time field's lifetime shrinks with the tick",
			"the lifetime is 36m39.023255552s: IDs run out that long after the epoch; give the time field more bits or a longer tick"}},
		{"time:20,sequence:12;tick=1s", []string{"the lifetime is 12.1 days: IDs run out that long after the epoch; give the time field more bits or a longer tick"}},
		{"time:41,worker:10", []string{"no sequence field: a node issues one ID per 1ms tick"}},
		{"time:41,worker:10,sequence:12", nil},
	}
	for _, tc := range tests {
		l, err := snowflake.Resolve(tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Warnings(); !slices.Equal(got, tc.want) {
			t.Errorf("Layout(%s).Warnings() = %q; want %q", tc.layout, got, tc.want)
		}
	}
	for _, name := range snowflake.Presets() {
		l, _ := snowflake.Preset(name)
		if ws := l.Warnings(); ws != nil {
			t.Errorf("preset %s: Warnings() = %q; want none", name, ws)
		}
	}
}
