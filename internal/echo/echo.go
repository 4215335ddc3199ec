// Package echo cuts user input that errors and log records echo back, so
// that an input of 10,000 characters is not repeated in full.
package echo

import (
	"strconv"
	"unicode/utf8"
)

// Max is about how many bytes of an input an echo keeps.
const Max = 64

// Cut returns s when it is at most Max bytes long, else its first Max bytes
// or fewer (ending at a rune boundary) followed by "…".
func Cut(s string) string { return CutN(s, Max) }

// CutN is Cut with n bytes instead of Max; n ≥ 0.
func CutN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Quote returns s cut as Cut does, in Go's double quotes: the one way an
// error quotes the user's input.
func Quote(s string) string { return strconv.Quote(Cut(s)) }
