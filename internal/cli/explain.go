package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/numfmt"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

func newExplainCmd(e *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "explain PRESET|LAYOUT|SPEC",
		Short: "Draw a Snowflake layout and tell its lifetime, capacity and limits",
		Long: "Draws the layout's bits and prints its lifetime's end, IDs per second per node,\n" +
			"the node count, and when its IDs pass 2^53-1 (JavaScript numbers) and int64;\n" +
			"a warning line flags a degenerate layout (a tick under 1ms, a lifetime under\n" +
			"a year, no sequence). The argument is a preset, a layout in text form (a\n" +
			"missing tick is 1ms, a missing epoch 2026-01-01), or a strategy spec as gen\n" +
			"takes it (snowflake?preset=twitter, sonyflake?bits_sequence=12).\n" +
			"Presets: " + strings.Join(snowflake.Presets(), ", "),
		Example: `  idgen explain twitter
  idgen explain 'time:41,region:3,worker:9,sequence:10;tick=1ms;epoch=2026-01-01T00:00:00Z'
  idgen explain 'snowflake?preset=discord'
  idgen explain sonyflake`,
		Args: oneArg("a layout, preset or spec"),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := explainLayout(e.specOptions(), args[0])
			if err != nil {
				return badInput(err)
			}
			explain(cmd.OutOrStdout(), l, e.now())
			return nil
		},
	}
}

// explainLayout returns the layout arg names: a preset, a layout's text form,
// or a strategy spec ("snowflake?preset=twitter", "sonyflake") whose scheme
// has a Snowflake layout. A name that is both a preset and a strategy
// (sonyflake, instagram) is the preset. The layout's defaults are written
// out (WithDefaults).
func explainLayout(opts strategies.Options, arg string) (snowflake.Layout, error) {
	name, _, isSpec := strings.Cut(arg, "?")
	if !isSpec && (slices.Contains(snowflake.Presets(), arg) || !slices.Contains(strategies.Names(), arg)) {
		l, err := snowflake.Resolve(arg)
		return l.WithDefaults(), err
	}
	spec, err := strategies.CheckSpec(arg) // the one parse of the spec
	if err != nil {
		return snowflake.Layout{}, err
	}
	s, err := opts.SchemeOf(spec)
	if err != nil {
		return snowflake.Layout{}, err
	}
	l, ok := snowflake.LayoutOf(s)
	if !ok {
		return snowflake.Layout{}, fmt.Errorf("explain %s: %s IDs have no Snowflake layout; explain takes a preset (%s), "+
			"a layout such as time:41,worker:10,sequence:12, or a spec of %s",
			quoteInput(arg), name, strings.Join(snowflake.Presets(), ", "), strings.Join(layoutStrategies(), ", "))
	}
	return l.WithDefaults(), nil
}

// layoutStrategies returns the strategies whose default spec has a Snowflake
// layout.
func layoutStrategies() []string {
	var names []string
	for _, n := range strategies.Names() {
		if s, err := strategies.SchemeOf(strategies.MustParse(n)); err == nil { // a registered name
			if _, ok := snowflake.LayoutOf(s); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// quoteInput quotes an input echoed in a message, cut to about 64 bytes.
func quoteInput(s string) string { return strconv.Quote(echo.Cut(s)) }

// drawLayout draws the 64 bits of l, one column per bit, high to low:
//
//	|0|time.....................................|datac|worke|sequence....|
//	 63 62                                    22 21 17 16 12 11          0
func drawLayout(w io.Writer, l snowflake.Layout) {
	type span struct {
		name    string
		hi, lo  int
		content string
	}
	var spans []span
	if unused := 64 - l.Bits(); unused > 0 {
		name := "0"
		if unused > 1 {
			name = "unused"
		}
		spans = append(spans, span{name: name, hi: 63, lo: 64 - unused})
	}
	for _, f := range l.Spans() {
		spans = append(spans, span{name: f.Name, hi: f.High(), lo: int(f.Shift)})
	}
	var bar, labels, border strings.Builder
	bar.WriteByte('|')
	border.WriteByte('+')
	labels.WriteByte(' ')
	for _, s := range spans {
		width := s.hi - s.lo + 1
		name := s.name
		if len(name) > width {
			name = name[:width]
		}
		bar.WriteString(name + strings.Repeat(" ", width-len(name)) + "|")
		border.WriteString(strings.Repeat("-", width) + "+")
		lab := fmt.Sprintf("%d", s.hi)
		if width > 1 {
			lo := fmt.Sprintf("%d", s.lo)
			if width >= len(lab)+len(lo)+1 {
				lab += strings.Repeat(" ", width-len(lab)-len(lo)) + lo
			}
		}
		if len(lab) > width {
			lab = "" // a 1-bit field's number would run into its neighbour's
		}
		labels.WriteString(lab + strings.Repeat(" ", width+1-len(lab)))
	}
	fmt.Fprintln(w, border.String())
	fmt.Fprintln(w, bar.String())
	fmt.Fprintln(w, border.String())
	fmt.Fprintln(w, strings.TrimRight(labels.String(), " "))
}

func explain(w io.Writer, l snowflake.Layout, now time.Time) {
	fmt.Fprintf(w, "layout  %s\n\n", l.String())
	drawLayout(w, l)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "field\tbits\tbit range\tmax")
	for _, f := range l.Spans() {
		fmt.Fprintf(tw, "%s\t%d\t%d-%d\t%d\n", f.Name, f.Width, f.High(), f.Shift, f.Mask)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "tick\t%v\n", l.Tick)
	fmt.Fprintf(tw, "epoch\t%s\n", l.Epoch.UTC().Format(time.RFC3339Nano))
	end := l.End()
	state := "left"
	if !end.After(now) {
		state = "ENDED: the layout issues no more IDs"
	}
	fmt.Fprintf(tw, "lifetime ends\t%s\t(%.1f years after the epoch; %s)\n", end.Format(time.RFC3339Nano), yearsBetween(l.Epoch, end), lifetimeLeft(state, end, now))
	seq, _ := l.Field(snowflake.FieldSequence)
	if ps := l.PerSecond(); ps >= 1 {
		fmt.Fprintf(tw, "per node\t%s IDs/s\t(%s per %v tick)\n", numfmt.Thousands(uint64(ps)), numfmt.Thousands(uint64(1)<<uint(seq)), l.Tick)
	} else if ps > 0 {
		fmt.Fprintf(tw, "per node\t%.3g IDs/s\t(%s per %v tick)\n", ps, numfmt.Thousands(uint64(1)<<uint(seq)), l.Tick)
	} else {
		fmt.Fprintf(tw, "per node\tunbounded\t(random bits, no sequence: uniqueness is probabilistic)\n")
	}
	fmt.Fprintf(tw, "nodes\t%s\t(%s)\n", numfmt.Thousands(l.Nodes()), nodeNames(l))
	if cs, ok := l.Field(snowflake.FieldClockSeq); ok {
		fmt.Fprintf(tw, "clockseq\t%s bumps\t(rollback=bump: rollbacks beyond max_ahead; IDs across a bump do not sort by time)\n", numfmt.Thousands(uint64(1)<<uint(cs)-1))
	}
	for _, c := range []struct {
		bits int
		what string
	}{{53, "passes 2^53-1"}, {63, "passes int64"}} {
		t, ok := l.Crossing(c.bits)
		switch {
		case !ok:
			fmt.Fprintf(tw, "%s\tnever\t(a %d-bit layout)\n", c.what, l.Bits())
		case c.bits == 53:
			fmt.Fprintf(tw, "%s\t%s\t(from then on IDs are not exact JavaScript numbers: send them as strings)\n", c.what, t.Format(time.RFC3339Nano))
		default:
			fmt.Fprintf(tw, "%s\t%s\t(from then on IDs no longer fit a signed bigint)\n", c.what, t.Format(time.RFC3339Nano))
		}
	}
	for _, w := range l.Warnings() {
		fmt.Fprintf(tw, "warning\t%s\n", w)
	}
	tw.Flush()
}

func lifetimeLeft(state string, end, now time.Time) string {
	if !end.After(now) {
		return state
	}
	return fmt.Sprintf("%.1f years left", yearsBetween(now, end))
}

// yearsBetween returns b-a in years of 365.2425 days, without the 292-year
// cap of a time.Duration.
func yearsBetween(a, b time.Time) float64 {
	return (float64(b.Unix()-a.Unix()) + float64(b.Nanosecond()-a.Nanosecond())/1e9) / (365.2425 * 86400)
}

func nodeNames(l snowflake.Layout) string {
	var parts []string
	for _, f := range l.Fields {
		for _, n := range snowflake.NodeFields() {
			if f.Name == n {
				parts = append(parts, fmt.Sprintf("%s %d bits", n, f.Bits))
			}
		}
	}
	if len(parts) == 0 {
		return "no node fields"
	}
	return strings.Join(parts, " × ")
}
