package cli

// VersionText is versionText, for the tests of package cli_test.
var VersionText = versionText
