package compare_test

import (
	"os/exec"
	"testing"
)

// TestOutputIgnored checks that git ignores what the README's
// "idgen compare --out results" writes, at the top or in any directory.
func TestOutputIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if err := exec.Command("git", "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not in a git work tree")
	}
	for _, p := range []string{"../results/results.json", "../results/throughput.svg", "results/results.csv"} {
		if out, err := exec.Command("git", "check-ignore", "--no-index", "-v", p).CombinedOutput(); err != nil {
			t.Errorf("git check-ignore %s = %v %q; want it ignored (.gitignore: results/)", p, err, out)
		}
	}
}
