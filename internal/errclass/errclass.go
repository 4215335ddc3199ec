// Package errclass makes the sentinel errors of idgen's packages: each
// matches one of the two classes of package idgen with errors.Is,
// idgen.ErrInvalid (the caller's input must change) or
// idgen.ErrUnavailable (a store, server or resource failed; trying again
// later may work), while its text stays its own ("segment: invalid DSN",
// not "segment: invalid DSN: idgen: invalid input").
package errclass

import "github.com/idgenkit/idgen"

// A sentinel is a package's sentinel error of a class.
type sentinel struct {
	msg   string
	class error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.class }

// Invalid returns a new sentinel error with text msg that matches
// idgen.ErrInvalid.
func Invalid(msg string) error { return &sentinel{msg, idgen.ErrInvalid} }

// Unavailable returns a new sentinel error with text msg that matches
// idgen.ErrUnavailable.
func Unavailable(msg string) error { return &sentinel{msg, idgen.ErrUnavailable} }
