//go:build !purego

package public_test

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/public"
)

// TestHasAESNI: the CPUID check agrees with the kernel's flags (Linux's
// /proc/cpuinfo: aes and ssse3).
func TestHasAESNI(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the AES-NI rounds are amd64's")
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	flags := ""
	for _, line := range strings.Split(string(info), "\n") {
		if strings.HasPrefix(line, "flags") {
			flags = " " + line + " "
			break
		}
	}
	want := strings.Contains(flags, " aes ") && strings.Contains(flags, " ssse3 ")
	if public.HasAESNI != want {
		t.Errorf("HasAESNI = %t; /proc/cpuinfo's flags say %t", public.HasAESNI, want)
	}
}
