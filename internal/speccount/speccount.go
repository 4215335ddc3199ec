// Package speccount counts the spec texts package strategies parses, so
// that tests show how often a path parses a spec between its text and its
// generator (issue 28: once).
package speccount

import "sync/atomic"

var n atomic.Int64

// Add counts one parse.
func Add() { n.Add(1) }

// N returns the parses counted since the program started.
func N() int64 { return n.Load() }
