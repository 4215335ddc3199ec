package cli

import (
	"fmt"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idgenkit/idgen/snowflake"
	"github.com/spf13/cobra"
)

func init() { addCommand(newExplainCmd) }

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain LAYOUT_OR_PRESET",
		Short: "Draw a Snowflake layout and tell its lifetime, capacity and limits",
		Long: "Draws the layout's bits and prints its lifetime's end, IDs per second per node,\n" +
			"the node count, and when its IDs pass 2^53-1 (JavaScript numbers) and int64.\n" +
			"Presets: " + strings.Join(snowflake.Presets(), ", "),
		Example: `  idgen explain twitter
  idgen explain 'time:41,region:3,worker:9,sequence:10;tick=1ms;epoch=2026-01-01T00:00:00Z'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := snowflake.Resolve(args[0])
			if err != nil {
				return badInput(err)
			}
			explain(cmd.OutOrStdout(), l, time.Now())
			return nil
		},
	}
}

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
	bit := 63
	if unused := 64 - l.Bits(); unused > 0 {
		name := "0"
		if unused > 1 {
			name = "unused"
		}
		spans = append(spans, span{name: name, hi: 63, lo: 64 - unused})
		bit = 63 - unused
	}
	for _, f := range l.Fields {
		spans = append(spans, span{name: f.Name, hi: bit, lo: bit - f.Bits + 1})
		bit -= f.Bits
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
	bit := l.Bits() - 1
	for _, f := range l.Fields {
		fmt.Fprintf(tw, "%s\t%d\t%d-%d\t%d\n", f.Name, f.Bits, bit, bit-f.Bits+1, uint64(1)<<uint(f.Bits)-1)
		bit -= f.Bits
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
	fmt.Fprintf(tw, "lifetime ends\t%s\t(%.1f years after the epoch; %s)\n", end.Format(time.RFC3339Nano), years(end.Sub(l.Epoch)), lifetimeLeft(state, end, now))
	seq, _ := l.Field(snowflake.FieldSequence)
	if ps := l.PerSecond(); ps > 0 {
		fmt.Fprintf(tw, "per node\t%s IDs/s\t(%s per %v tick)\n", thousands(uint64(ps)), thousands(uint64(1)<<uint(seq)), l.Tick)
	} else {
		fmt.Fprintf(tw, "per node\tunbounded\t(random bits, no sequence: uniqueness is probabilistic)\n")
	}
	fmt.Fprintf(tw, "nodes\t%s\t(%s)\n", thousands(l.Nodes()), nodeNames(l))
	if cs, ok := l.Field(snowflake.FieldClockSeq); ok {
		fmt.Fprintf(tw, "clockseq\t%s bumps\t(rollback=bump: rollbacks beyond max_ahead; IDs across a bump do not sort by time)\n", thousands(uint64(1)<<uint(cs)-1))
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
	tw.Flush()
}

func lifetimeLeft(state string, end, now time.Time) string {
	if !end.After(now) {
		return state
	}
	return fmt.Sprintf("%.1f years left", years(end.Sub(now)))
}

func years(d time.Duration) float64 { return d.Hours() / 24 / 365.2425 }

func nodeNames(l snowflake.Layout) string {
	var parts []string
	for _, f := range l.Fields {
		for _, n := range snowflake.NodeFields {
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

func thousands(v uint64) string { return english.Sprintf("%d", v) }

// english prints numbers with thousands separators: 1234567 -> "1,234,567".
var english = message.NewPrinter(language.English)
