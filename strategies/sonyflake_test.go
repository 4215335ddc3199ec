package strategies_test

import (
	"testing"

	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// TestSonyflakePresetMatchesStrategy checks that the preset and the strategy
// named sonyflake are one layout: sony/sonyflake/v2's defaults, 39 bits of
// 10 ms from 2025-01-01, 8 sequence, 16 machine.
func TestSonyflakePresetMatchesStrategy(t *testing.T) {
	const want = "time:39,sequence:8,machine:16;tick=10ms;epoch=2025-01-01T00:00:00Z"
	preset, err := snowflake.Preset("sonyflake")
	if err != nil {
		t.Fatal(err)
	}
	strategy, err := strategies.SonyflakeSettings{}.Layout()
	if err != nil {
		t.Fatal(err)
	}
	s, err := strategies.SchemeOf(strategies.MustParse("sonyflake"))
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := snowflake.LayoutOf(s)
	if !ok {
		t.Fatal(`LayoutOf(SchemeOf("sonyflake")) has no layout`)
	}
	for name, l := range map[string]snowflake.Layout{"Preset(sonyflake)": preset, "SonyflakeSettings{}.Layout()": strategy, "SchemeOf(sonyflake)": spec} {
		if got := l.String(); got != want {
			t.Errorf("%s = %q; want %q", name, got, want)
		}
	}
}
