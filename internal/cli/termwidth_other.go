//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package cli

import "os"

// termWidth returns 0: progress bars are drawn on Unix terminals only.
func termWidth(*os.File) int { return 0 }
