package idgen

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/idgenkit/idgen/internal/echo"
)

// A SchemeFinder returns the scheme a server describes (as idgen.v1's
// ListGenerators does) by its name, or by the text of its Snowflake layout
// when layout is not empty, and whether it knows that scheme. An error
// reports a description it knows but cannot use, such as a layout that
// does not parse.
type SchemeFinder func(name, layout string) (s *Scheme, ok bool, err error)

var finders struct {
	sync.RWMutex
	list []SchemeFinder
}

// RegisterSchemeFinder adds f to the finders FindScheme asks, in the order
// registered. Packages that define schemes register theirs from init, as
// database/sql's drivers register: package snowflake finds layouts,
// package strategies the schemes of its strategies by name, and a store's
// package (segment) its own. So a program finds the schemes of the
// packages it links, and a program that links none of them links none of
// their dependencies.
func RegisterSchemeFinder(f SchemeFinder) {
	finders.Lock()
	defer finders.Unlock()
	finders.list = append(finders.list, f)
}

// FindScheme returns the scheme a server describes by name, or by layout
// when layout is not empty, from the finders registered with
// RegisterSchemeFinder. Errors: a finder's (a layout that does not parse),
// or one wrapping ErrInvalid, naming the input cut to about 64 bytes, when
// no registered finder knows it.
func FindScheme(name, layout string) (*Scheme, error) {
	finders.RLock()
	list := finders.list
	finders.RUnlock()
	for _, f := range list {
		s, ok, err := f(name, layout)
		if err != nil {
			return nil, err
		}
		if ok {
			return s, nil
		}
	}
	what := "scheme " + strconv.Quote(echo.Cut(name))
	if layout != "" {
		what = "layout " + strconv.Quote(echo.Cut(layout))
	}
	return nil, fmt.Errorf("%w: %s is unknown here: no linked package registers it (import package snowflake or strategies)", ErrInvalid, what)
}
