package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// flagError rewords pflag's "invalid argument" error, which carries
// strconv's text ("strconv.ParseInt: parsing ..."), into the flag, the value
// (cut to 64 bytes) and what the flag's type allows. Other errors pass
// unchanged. Cmd's flag lookup gives the flag type pflag's error carries.
func flagError(cmd *cobra.Command, err error) error {
	bad, ok := invalidValue(err, cmd.Flags().Lookup)
	if !ok {
		return err
	}
	f := bad.GetFlag()
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + ", " + name
	}
	want, ok := flagWants[f.Value.Type()]
	if !ok {
		want = "a " + f.Value.Type()
	}
	if w := f.Annotations[wantAnnotation]; len(w) == 1 {
		want = w[0] // the flag's own range, as its checks after parsing say it
	}
	return fmt.Errorf("%s %s: want %s", name, quoteInput(bad.GetValue()), want)
}

// wantAnnotation annotates a flag with what it takes when its type allows
// more (a count: an integer of at least 1), so that a value that does not
// parse and one out of range get the same words.
const wantAnnotation = "idgen_want"

// An invalidValueError is pflag's *InvalidValueError, seen through its
// methods: F is *pflag.Flag, inferred from cobra's FlagSet.Lookup, so that
// pflag is reached through cobra and is no direct requirement.
type invalidValueError[F any] interface {
	GetFlag() F
	GetValue() string
	error
}

// invalidValue returns err's pflag invalid-value error, whose flag type is
// lookup's result, and whether err has one.
func invalidValue[F any](err error, lookup func(string) F) (invalidValueError[F], bool) {
	var bad invalidValueError[F]
	return bad, errors.As(err, &bad)
}

// flagWants says what a flag of each pflag type takes.
var flagWants = map[string]string{
	"int":      "an integer in [-9223372036854775808, 9223372036854775807]",
	"int64":    "an integer in [-9223372036854775808, 9223372036854775807]",
	"int32":    "an integer in [-2147483648, 2147483647]",
	"uint":     "an integer in [0, 18446744073709551615]",
	"uint64":   "an integer in [0, 18446744073709551615]",
	"uint32":   "an integer in [0, 4294967295]",
	"float64":  "a number such as 0.5",
	"duration": "a duration such as 500ms, 10s or 5m",
	"bool":     "true or false",
}
