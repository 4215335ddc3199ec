package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// flagError rewords pflag's "invalid argument" error, which carries
// strconv's text ("strconv.ParseInt: parsing ..."), into the flag, the value
// (cut to 64 bytes) and what the flag's type allows. Other errors pass
// unchanged.
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
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
	return fmt.Errorf("%s %s: want %s", name, quoteInput(bad.GetValue()), want)
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
