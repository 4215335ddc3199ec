package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
)

// Requirements of Decide, as --require gives them.
const (
	Require64Bit          = "64bit"           // an 8-byte key (bigint)
	RequireSortable       = "sortable"        // keys in creation order
	RequireOpaque         = "opaque"          // reveals neither creation time, node nor row count
	RequireNoCoordination = "no-coordination" // no worker ID, store or database round trip to issue
	RequireJSSafe         = "js-safe"         // every ID below 2^53
)

// Requirements returns the values Decide accepts, in order, in a new slice.
func Requirements() []string {
	return []string{Require64Bit, RequireSortable, RequireOpaque, RequireNoCoordination, RequireJSSafe}
}

// ErrRequirement reports a requirement Decide does not know.
var ErrRequirement = errclass.Invalid("compare/report: unknown requirement")

// CheckRequirements returns an error wrapping ErrRequirement that names
// the first of reqs that is not one of Requirements.
func CheckRequirements(reqs []string) error {
	for _, r := range reqs {
		if !slices.Contains(Requirements(), r) {
			return fmt.Errorf("%w %q: want %s", ErrRequirement, echo.Cut(r), strings.Join(Requirements(), ", "))
		}
	}
	return nil
}

// A Choice is one row of the decision table: a scheme's facts and its
// measured figures against the Baseline of its engine.
type Choice struct {
	Engine, Strategy string
	Facts            *compare.Facts
	// InMemory and OutOfMemory are the insert rate's ratio to the
	// Baseline in each scenario (on a server given by DSN: InMemory); nil
	// when not measured.
	InMemory, OutOfMemory *compare.Estimate
	Index                 float64  // index size over the Baseline's (the first scenario's: sizes do not depend on the buffer)
	DeviceReads           *float64 // device reads per 1,000 inserts, out of memory
	PointReads            *compare.Estimate
}

// A Decision is the decision table: the schemes that meet the
// requirements, best first (by the out-of-memory insert ratio, then the
// index size), and one recommendation in words, built from the measured
// figures.
type Decision struct {
	Require        []string
	Choices        []Choice
	Recommendation string
}

// Decide builds the decision table of r, keeping the schemes that meet
// every one of require (Requirements). Errors wrap ErrRequirement.
func Decide(r *compare.Report, require []string) (*Decision, error) {
	if err := CheckRequirements(require); err != nil {
		return nil, err
	}
	d := &Decision{Require: require}
	var all []Choice
	for i := range r.Results {
		x := &r.Results[i]
		if x.Facts == nil || slices.ContainsFunc(all, func(c Choice) bool { return c.Engine == x.Engine && c.Strategy == x.Strategy }) {
			continue
		}
		c := Choice{Engine: x.Engine, Strategy: x.Strategy, Facts: x.Facts}
		for _, y := range r.Results {
			if y.Engine != x.Engine || y.Strategy != x.Strategy {
				continue
			}
			e := insertRatio(r, &y)
			if bs := r.BaselineOf(&y); c.Index == 0 && bs != nil && bs.IndexBytes > 0 {
				c.Index = float64(y.IndexBytes) / float64(bs.IndexBytes)
			}
			switch y.Scenario {
			case compare.ScenarioOutOfMemory:
				c.OutOfMemory = e
				if y.DeviceReads != nil && y.Rows > 0 {
					c.DeviceReads = ptr(float64(*y.DeviceReads) * 1000 / float64(y.Rows))
				}
				if rd := y.Reads[compare.ReadPoint]; rd != nil {
					c.PointReads = rd.RatioToBaseline
					if y.Strategy == compare.Baseline {
						c.PointReads = &compare.Estimate{Median: 1, CI: compare.Interval{1, 1}}
					}
				}
			default:
				c.InMemory = e
			}
		}
		all = append(all, c)
	}
	for _, c := range all {
		if meets(c.Facts, require) {
			d.Choices = append(d.Choices, c)
		}
	}
	slices.SortStableFunc(d.Choices, func(a, b Choice) int {
		ra, rb := rank(a), rank(b)
		switch {
		case ra > rb:
			return -1
		case ra < rb:
			return 1
		case a.Index < b.Index:
			return -1
		case a.Index > b.Index:
			return 1
		}
		return 0
	})
	d.Recommendation = recommend(d, all)
	return d, nil
}

func ptr[T any](v T) *T { return &v }

// insertRatio is x's insert rate over its Baseline's: the per-round
// estimate, or the plain quotient of one trial; 1 for the Baseline.
func insertRatio(r *compare.Report, x *compare.Result) *compare.Estimate {
	if x.Strategy == compare.Baseline {
		return &compare.Estimate{Median: 1, CI: compare.Interval{1, 1}}
	}
	if e, ok := x.RatioToBaseline["rows_per_sec"]; ok {
		return &e
	}
	if bs := r.BaselineOf(x); bs != nil && bs.RowsPerSec > 0 {
		v := x.RowsPerSec / bs.RowsPerSec
		return &compare.Estimate{Median: v, CI: compare.Interval{v, v}}
	}
	return nil
}

// ciOf is the interval of the ratio a choice is ranked by.
func ciOf(c Choice) compare.Interval {
	switch {
	case c.OutOfMemory != nil:
		return c.OutOfMemory.CI
	case c.InMemory != nil:
		return c.InMemory.CI
	}
	return compare.Interval{}
}

// rank is the ratio a choice is ranked by: out of memory, else in memory.
func rank(c Choice) float64 {
	switch {
	case c.OutOfMemory != nil:
		return c.OutOfMemory.Median
	case c.InMemory != nil:
		return c.InMemory.Median
	}
	return 0
}

// meets reports whether f meets every requirement.
func meets(f *compare.Facts, require []string) bool {
	for _, r := range require {
		var ok bool
		switch r {
		case Require64Bit:
			ok = f.KeyBytes == 8
		case RequireSortable:
			ok = f.Ordered
		case RequireOpaque:
			ok = !f.RevealsTime && !f.RevealsWorker && !f.Sequence
		case RequireNoCoordination:
			ok = f.Coordination == compare.CoordNone
		case RequireJSSafe:
			ok = f.JSSafe
		}
		if !ok {
			return false
		}
	}
	return true
}

// recommend writes the recommendation: the first choice and why, from the
// measured figures, against the worst of all; and, where it applies, that
// an ordered key can be shown as an opaque public ID.
func recommend(d *Decision, all []Choice) string {
	if len(d.Choices) == 0 {
		return fmt.Sprintf("No scheme measured meets %s.", strings.Join(d.Require, ", "))
	}
	// The fastest, and the choices whose insert interval reaches its: tied
	// within the noise. Of those, the smallest index wins.
	fastest, best := d.Choices[0], d.Choices[0]
	lo := ciOf(fastest)[0]
	tied := 0
	for _, c := range d.Choices[1:] {
		if ciOf(c)[1] >= lo {
			tied++
			if c.Index < best.Index {
				best = c
			}
		}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "Pick %s", name(best))
	if len(d.Require) > 0 {
		fmt.Fprintf(&s, " (of %d meeting %s)", len(d.Choices), strings.Join(d.Require, ", "))
	}
	s.WriteString(": ")
	var why []string
	if e := best.OutOfMemory; e != nil {
		why = append(why, fmt.Sprintf("%.2f× %s's insert rate out of memory%s", e.Median, compare.Baseline, ciWords(e)))
	}
	if e := best.InMemory; e != nil && best.OutOfMemory != nil {
		why = append(why, fmt.Sprintf("%.2f× in memory", e.Median))
	} else if e != nil {
		why = append(why, fmt.Sprintf("%.2f× %s's insert rate%s", e.Median, compare.Baseline, ciWords(e)))
	}
	if best.Index > 0 {
		why = append(why, fmt.Sprintf("%.2f× its index", best.Index))
	}
	if best.DeviceReads != nil {
		why = append(why, fmt.Sprintf("%.0f device reads per 1,000 inserts out of memory", *best.DeviceReads))
	}
	s.WriteString(strings.Join(why, ", "))
	if best.Strategy != fastest.Strategy {
		fmt.Fprintf(&s, "; the fastest, %s at %.2f×, is within the noise of it, and %s has the smaller index", name(fastest), rank(fastest), name(best))
	} else if tied > 0 {
		fmt.Fprintf(&s, "; %d more within the noise of it, none with a smaller index", tied)
	}
	// The worst measured scheme, for scale.
	worst := best
	for _, c := range all {
		if c.Engine == best.Engine && rank(c) < rank(worst) {
			worst = c
		}
	}
	if worst.Strategy != best.Strategy {
		fmt.Fprintf(&s, "; %s, the slowest, inserts at %.2f×", name(worst), rank(worst))
		if worst.DeviceReads != nil {
			fmt.Fprintf(&s, " with %.0f device reads per 1,000", *worst.DeviceReads)
		}
	}
	s.WriteString(".")
	// An ordered key behind an opaque public ID.
	if best.Facts.Ordered && (best.Facts.RevealsTime || best.Facts.RevealsWorker) || slices.Contains(d.Require, RequireOpaque) {
		var ordered *Choice
		for i, c := range all {
			if c.Facts.Ordered && !c.Facts.Sequence && c.Engine == best.Engine && (ordered == nil || rank(c) > rank(*ordered)) {
				ordered = &all[i]
			}
		}
		if ordered != nil {
			fmt.Fprintf(&s, " To show IDs without revealing time or node, keep %s as the key and show public?inner=%s (FF1-encrypted, reversible with the key): opaque need not cost index order.",
				ordered.Strategy, ordered.Strategy)
		}
	}
	return s.String()
}

func name(c Choice) string { return c.Strategy }

func ciWords(e *compare.Estimate) string {
	if e.CI[0] == e.CI[1] {
		return ""
	}
	return " " + ciText(&e.CI, "%.2f")
}

// writeDecision writes the decision table and its recommendation.
func (r view) writeDecision(b *strings.Builder, d *Decision) {
	head := []string{"scheme", "key B", "ordered", "coordination", "random bits", "reveals", "JS-safe", "server can generate"}
	oom := len(r.Scenarios) > 0 && slices.ContainsFunc(r.Scenarios, func(s compare.Scenario) bool { return s.Name == compare.ScenarioOutOfMemory })
	if oom {
		head = append(head, "insert ×bs in mem", "insert ×bs out of mem", "index ×bs", "dev reads/1k ins", "point read ×bs")
	} else {
		head = append(head, "insert ×bs", "index ×bs")
	}
	rows := [][]string{head}
	for _, c := range d.Choices {
		f := c.Facts
		reveals := []string{}
		if f.RevealsTime {
			reveals = append(reveals, "time")
		}
		if f.RevealsWorker {
			reveals = append(reveals, "node")
		}
		if f.Sequence {
			reveals = append(reveals, "count")
		}
		if len(reveals) == 0 {
			reveals = append(reveals, "no")
		}
		ordered := yesNo(f.Ordered)
		if f.Sequence {
			ordered = "yes (sequence)"
		}
		server := "no"
		if f.ServerDefault != "" {
			server = f.ServerDefault
		}
		label := c.Strategy
		if r.Engine == compare.EngineAll {
			label = c.Engine + " " + label
		}
		row := []string{label, fmt.Sprint(f.KeyBytes), ordered, f.Coordination, fmt.Sprint(f.RandomBits), strings.Join(reveals, ", "), yesNo(f.JSSafe), server,
			estWords(c.InMemory)}
		if oom {
			row = append(row, estWords(c.OutOfMemory))
		}
		row = append(row, fmt.Sprintf("%.2f", c.Index))
		if oom {
			dev := "n/a"
			if c.DeviceReads != nil {
				dev = fmt.Sprintf("%.0f", *c.DeviceReads)
			}
			row = append(row, dev, estWords(c.PointReads))
		}
		rows = append(rows, row)
	}
	title := "decision table: one row per scheme, best first (insert rate, then index size)"
	if oom {
		title = "decision table: one row per scheme, best first (out-of-memory insert rate, then index size)"
	}
	if len(d.Require) > 0 {
		title += "; required: " + strings.Join(d.Require, ", ")
	}
	b.WriteString(title + "\n")
	writeAligned(b, rows)
	b.WriteString("recommendation: " + d.Recommendation + "\n")
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// estWords writes a ratio with "≈" when its interval contains 1.
func estWords(e *compare.Estimate) string {
	if e == nil {
		return "n/a"
	}
	if e.CI[0] == e.CI[1] || e.Significant() {
		return fmt.Sprintf("%.2f", e.Median)
	}
	return fmt.Sprintf("≈ %.2f", e.Median)
}
