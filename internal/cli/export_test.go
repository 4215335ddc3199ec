package cli

import (
	"time"

	"github.com/idgenkit/idgen"
)

// VersionText is versionText, for the tests of package cli_test.
var VersionText = versionText

// InspectWarning is the warning inspect prints for id at now.
func InspectWarning(id idgen.ID, now time.Time) string { return newReport(id, now).Warning }
