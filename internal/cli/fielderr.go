package cli

import (
	"errors"
	"strings"

	"github.com/idgenkit/idgen"
)

// A fieldFlagError is a library error as a command prints it: the part a
// typed error of the library gave (a field, a call to make) told in the
// command's words (its flag, its subcommand). errors.Is and errors.As see
// the original.
type fieldFlagError struct {
	err error
	msg string
}

func (e *fieldFlagError) Error() string { return e.msg }
func (e *fieldFlagError) Unwrap() error { return e.err }

// retell returns err with the text of part, a typed error in err's chain,
// told as text instead. Part's text ends err's, as wrapping with %w
// leaves it; when it does not, err is returned as it is.
func retell(err, part error, text string) error {
	prefix, ok := strings.CutSuffix(err.Error(), part.Error())
	if !ok {
		return err
	}
	return &fieldFlagError{err, prefix + text}
}

// withFlag returns err with its *idgen.FieldError naming the flag that
// flags gives for its field, or err itself when it has none or flags
// names no flag for it (and nil for nil).
func withFlag(err error, flags map[string]string) error {
	var fe *idgen.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	flag, ok := flags[fe.Field]
	if !ok {
		return err
	}
	return retell(err, fe, fe.Named(flag))
}
