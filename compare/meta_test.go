package compare_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/compare"
)

func TestThisMachine(t *testing.T) {
	m := compare.ThisMachine()
	if m.Cores < 1 || m.OS == "" || m.Arch == "" {
		t.Errorf("ThisMachine() = %+v; want cores, OS and arch", m)
	}
}

// TestThisBuildUnstamped: a test binary, like a go run one, carries no
// VCS stamp. ThisBuild then asks git in the work tree the source was
// compiled from, and never claims "not modified" when it cannot know.
func TestThisBuildUnstamped(t *testing.T) {
	b := compare.ThisBuild()
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		if b.Commit != compare.Unknown || b.Modified != nil || b.CommitFrom != compare.Unknown {
			t.Errorf("ThisBuild() outside a git tree = %+v; want commit unknown, modified null", b)
		}
		return
	}
	st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	want := strings.TrimSpace(string(out))
	if b.Commit != want || b.CommitFrom != "git work tree" || b.Modified == nil || *b.Modified != (len(strings.TrimSpace(string(st))) > 0) {
		t.Errorf("ThisBuild() = %+v (modified %v); want commit %s from the git work tree, modified %v", b, b.Modified, want, len(st) > 0)
	}
}
