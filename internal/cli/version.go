package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(*Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print idgen's module version, VCS revision (dirty or not) and Go version",
		Long: `version prints what idgen --version prints: the module version, the VCS
revision the binary was built from with its commit time (and "dirty" when
the work tree had uncommitted changes), and the Go version and platform. A
binary built by go build or go install from a git checkout carries the
revision; go run and go test binaries carry none.`,
		Example: `  idgen version
  idgen --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), cmd.Root().Version)
			return err
		},
	}
}

// versionText returns the lines idgen version prints, from the build
// information of debug.ReadBuildInfo (bi, ok):
//
//	idgen     v0.0.0-20261122223836-bd68357a1b2c+dirty
//	revision  bd68357a1b2c... (2026-11-22T22:38:36Z), dirty: built with uncommitted changes
//	go        go1.26.8 linux/amd64
func versionText(bi *debug.BuildInfo, ok bool) string {
	version, goVersion := "unknown (built without module information)", runtime.Version()
	vcs := map[string]string{}
	if ok && bi != nil {
		version = bi.Main.Version
		if version == "" {
			version = "(devel)"
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
	}
	revision := "unknown (built without VCS information)"
	if r := vcs["vcs.revision"]; r != "" {
		revision = r
		if t := vcs["vcs.time"]; t != "" {
			revision += " (" + t + ")"
		}
		if vcs["vcs.modified"] == "true" {
			revision += ", dirty: built with uncommitted changes"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "idgen     %s\n", version)
	fmt.Fprintf(&b, "revision  %s\n", revision)
	fmt.Fprintf(&b, "go        %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
