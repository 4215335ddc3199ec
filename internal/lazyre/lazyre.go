// Package lazyre compiles a regular expression on first use instead of at
// package initialisation, so that a program that never uses it (idgen
// serve, which links every command) neither spends the start-up time nor
// carries the compiled program in the live heap the collector marks at
// every cycle.
package lazyre

import (
	"regexp"
	"sync"
)

// MustCompile returns a function that returns regexp.MustCompile(expr),
// compiled once, on its first call. Like regexp.MustCompile, that call
// panics when expr is not a valid expression.
func MustCompile(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
