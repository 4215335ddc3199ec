package compare_test

import (
	"testing"

	"github.com/idgenkit/idgen/compare"
)

func TestThisMachine(t *testing.T) {
	m := compare.ThisMachine()
	if m.Cores < 1 || m.OS == "" || m.Arch == "" {
		t.Errorf("ThisMachine() = %+v; want cores, OS and arch", m)
	}
}
