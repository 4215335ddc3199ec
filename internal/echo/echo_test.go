package echo_test

import (
	"strings"
	"testing"

	"github.com/idgenkit/idgen/internal/echo"
)

func TestCut(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "abc", "abc"},
		{"exactly Max", strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{"long", strings.Repeat("a", 10_000), strings.Repeat("a", 64) + "…"},
		{"rune boundary", strings.Repeat("a", 63) + "é" + "zz", strings.Repeat("a", 63) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := echo.Cut(tt.in); got != tt.want {
				t.Errorf("Cut(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := echo.CutN("héllo", 2); got != "h…" {
		t.Errorf("CutN(%q, 2) = %q; want %q", "héllo", got, "h…")
	}
}
