package cli_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/idgenkit/idgen/internal/cli"
)

func TestVersionText(t *testing.T) {
	goLine := "go        go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-22T22:38:36Z"}, {Key: "vcs.modified", Value: modified},
		}
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/idgenkit/idgen", Version: "v1.2.3"},
			Settings: vcs("bd68357a1b2c3d4e5f60718293a4b5c6d7e8f901", "false")},
			"idgen     v1.2.3\n" +
				"revision  bd68357a1b2c3d4e5f60718293a4b5c6d7e8f901 (2026-11-22T22:38:36Z)\n" + goLine},
		{"dirty", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/idgenkit/idgen", Version: "v0.0.0-20261122223836-bd68357a1b2c+dirty"},
			Settings: vcs("bd68357a1b2c3d4e5f60718293a4b5c6d7e8f901", "true")},
			"idgen     v0.0.0-20261122223836-bd68357a1b2c+dirty\n" +
				"revision  bd68357a1b2c3d4e5f60718293a4b5c6d7e8f901 (2026-11-22T22:38:36Z), dirty: built with uncommitted changes\n" + goLine},
		{"go run, no VCS", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/idgenkit/idgen", Version: "(devel)"}},
			"idgen     (devel)\n" +
				"revision  unknown (built without VCS information)\n" + goLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cli.VersionText(tt.bi, true); got != tt.want {
				t.Fatalf("VersionText(%s) =\n%s; want\n%s", tt.name, got, tt.want)
			}
		})
	}
	want := "idgen     unknown (built without module information)\n" +
		"revision  unknown (built without VCS information)\n" +
		"go        " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := cli.VersionText(nil, false); got != want {
		t.Fatalf("VersionText(nil, false) =\n%s; want\n%s", got, want)
	}
}

// TestVersion checks both forms, idgen version and idgen --version: the
// same text, from this binary's build information.
func TestVersion(t *testing.T) {
	want := cli.VersionText(debug.ReadBuildInfo())
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errs, code := run(args...)
		if code != 0 || out != want || errs != "" {
			t.Fatalf("idgen %q = exit %d, stdout %q, stderr %q; want exit 0 and %q", args, code, out, errs, want)
		}
	}
	if _, errs, code := run("version", "extra"); code != 2 {
		t.Fatalf("idgen version extra = exit %d, %q; want exit 2", code, errs)
	}
}
