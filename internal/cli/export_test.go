package cli

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/idgenkit/idgen"
)

// VersionText is versionText, for the tests of package cli_test.
var VersionText = versionText

// InspectWarning is the warning inspect prints for id at now.
func InspectWarning(id idgen.ID, now time.Time) string { return newReport(id, now).Warning }

// LoadServeSpec builds serve -s spec's generator as serve does (with
// --worker-source source), returning it under its name.
func LoadServeSpec(ctx context.Context, spec, source string) (map[string]idgen.Generator, error) {
	env := processEnv(nil, io.Discard, io.Discard)
	gens, _, err := loadGenerators(ctx, serveFlags{env: env, spec: spec, workerSource: source}, nil, env.specOptions(), slog.New(slog.DiscardHandler))
	return gens, err
}
