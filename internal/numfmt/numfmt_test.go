package numfmt

import (
	"math"
	"testing"
)

func TestThousands(t *testing.T) {
	for _, tt := range []struct {
		v    uint64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {71204, "71,204"},
		{1234567, "1,234,567"}, {math.MaxUint64, "18,446,744,073,709,551,615"},
	} {
		if got := Thousands(tt.v); got != tt.want {
			t.Errorf("Thousands(%d) = %q; want %q", tt.v, got, tt.want)
		}
	}
}
