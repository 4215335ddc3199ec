package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/lazyre"
	"github.com/spf13/cobra"
)

// flagError rewords pflag's "invalid argument" error, which carries
// strconv's text ("strconv.ParseInt: parsing ..."), into the flag, the value
// (cut to 64 bytes) and what the flag's type allows. Other errors pass
// unchanged. Cmd's flag lookup gives the flag type pflag's error carries.
func flagError(cmd *cobra.Command, err error) error {
	bad, ok := invalidValue(err, cmd.Flags().Lookup)
	if !ok {
		return unknownFlag(cmd, err)
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

// usageFlag finds the long flag names in cobra's flag usage lines.
var usageFlag = lazyre.MustCompile(`(?m)^\s+(?:-\S, )?--([A-Za-z0-9][\w-]*)`)

// unknownFlag adds to pflag's "unknown flag: --spek" the nearest flag of
// cmd (at most two edits away) and the pointer to --help, as cobra does
// for an unknown command. Other errors pass unchanged.
func unknownFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		if strings.HasPrefix(err.Error(), "unknown shorthand flag: ") {
			return fmt.Errorf("%w (idgen %s --help lists the flags)", err, cmd.Name())
		}
		return err
	}
	best, dist := "", 3
	for _, m := range usageFlag().FindAllStringSubmatch(cmd.Flags().FlagUsages(), -1) {
		if d := editDistance(name, m[1]); d < dist {
			best, dist = m[1], d
		}
	}
	if best != "" {
		return fmt.Errorf("unknown flag --%s; did you mean --%s? (idgen %s --help lists the flags)", echo.Cut(name), best, cmd.Name())
	}
	return fmt.Errorf("unknown flag --%s (idgen %s --help lists the flags)", echo.Cut(name), cmd.Name())
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
