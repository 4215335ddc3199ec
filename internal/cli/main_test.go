package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/idgenkit/idgen/internal/testenv/zktest"
)

// binDir holds the idgen binary the package's tests run as a process,
// built once (buildIdgen) and removed when they end.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	zktest.Stop() // the package's ZooKeeper (zktest.Shared), if a test started it
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// idgenBinary builds cmd/idgen once for the package: a build per test
// took a link of some seconds each, and a minute each on a loaded machine.
var idgenBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "idgen-cli-test-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "idgen")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/idgen").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// buildIdgen returns the path of the idgen binary, built once for the
// package's tests.
func buildIdgen(t *testing.T) string {
	t.Helper()
	bin, err := idgenBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
