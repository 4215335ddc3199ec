package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
	"github.com/spf13/cobra"
)

func newInspectCmd() *cobra.Command {
	var (
		spec   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "inspect ID",
		Short: "Decode an ID: its scheme, time and fields",
		Example: `  idgen inspect 1541815603606036480 -s 'snowflake?preset=twitter'
  idgen inspect 0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f --json`,
		Args: oneArg("the ID to decode"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := specOptions().ParseWith(args[0], spec)
			if err != nil {
				return badInput(err)
			}
			r := newReport(id, time.Now())
			if _, ok := snowflake.LayoutOf(id.Scheme()); ok && spec == "" {
				r.Note = "decoded with the default layout; give -s SPEC (e.g. -s 'snowflake?preset=twitter') for another"
			}
			if len(strings.TrimSpace(args[0])) == 32 && spec == "" && id.Scheme() != strategies.Flake128Scheme() {
				r.Note = "read as a UUID written without dashes (its version and variant bits are a UUID's); -s flake128 reads it as flake128"
			}
			if err := r.readHighWater(cmd.Context(), spec, time.Now()); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			return r.print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&spec, "spec", "s", "", "decode as this strategy's scheme (default: detect; decimal IDs use the default layout)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object with scheme, time and fields")
	return cmd
}

// report is what inspect prints. Field values above 2^53-1 are JSON strings,
// so that JavaScript reads them exactly.
type report struct {
	ID     string         `json:"id"`
	Scheme string         `json:"scheme"`
	Layout string         `json:"layout,omitempty"`
	Prefix string         `json:"prefix,omitempty"` // a TypeID's type prefix
	Inner  *report        `json:"inner,omitempty"`  // the ID a public ID encrypts
	Time   string         `json:"time,omitempty"`
	Hex    string         `json:"hex"`
	Fields map[string]any `json:"fields"`
	Note   string         `json:"note,omitempty"`
	// HighWater is the mark in the spec's high_water= file and, in words,
	// how far the clock is behind it (after a restart) or that it passed.
	HighWater string `json:"high_water,omitempty"`
	// Warning flags an implausible time: before the scheme's epoch or
	// after now (no ID comes from the future), a sign that the ID is of
	// another scheme or layout, or that the clock that issued it ran ahead.
	Warning string `json:"warning,omitempty"`
	fields  []idgen.Field
}

// newReport decodes id; now dates the plausibility check.
func newReport(id idgen.ID, now time.Time) report {
	s := id.Scheme()
	r := report{ID: id.String(), Scheme: s.Name, Hex: hex.EncodeToString(id.Bytes()), Fields: map[string]any{}, fields: s.Decompose(id)}
	epoch := time.Unix(0, 0)
	if l, ok := snowflake.LayoutOf(s); ok {
		r.Layout = l.String()
		epoch = l.WithDefaults().Epoch
	}
	r.Prefix, _ = strategies.TypeIDPrefix(id)
	if in, ok := public.Inner(id); ok {
		ir := newReport(in, now)
		r.Inner = &ir
	}
	if t := id.Time(); !t.IsZero() {
		r.Time = t.UTC().Format(time.RFC3339Nano)
		switch {
		case t.Before(epoch):
			r.Warning = fmt.Sprintf("time %s is before the scheme's epoch %s: the ID is probably not a %s ID; give -s SPEC for its scheme",
				r.Time, epoch.UTC().Format(time.RFC3339Nano), s.Name)
		case t.After(now.AddDate(100, 0, 0)):
			r.Warning = fmt.Sprintf("time %s is more than 100 years ahead: the ID is probably not a %s ID; give -s SPEC for its scheme", r.Time, s.Name)
		case t.After(now):
			r.Warning = fmt.Sprintf("time %s is after now (%s): an ID cannot come from the future; it is probably of another %s, "+
				"give -s SPEC for it (or the clock that issued it runs ahead)", r.Time, now.UTC().Format(time.RFC3339), kindOf(s))
		}
	}
	for _, f := range r.fields {
		if f.Value > 1<<53-1 {
			r.Fields[f.Name] = strconv.FormatUint(f.Value, 10)
		} else {
			r.Fields[f.Name] = f.Value
		}
	}
	return r
}

// readHighWater fills r.HighWater from the high_water= file of spec, if it
// names one: the mark and, read against now, "the clock is behind the
// high-water mark by X" or how long ago the mark passed. A file that
// cannot be read is an error naming it.
func (r *report) readHighWater(ctx context.Context, spec string, now time.Time) error {
	if spec == "" {
		return nil
	}
	sp, err := strategies.ParseSpec(spec)
	if err != nil {
		return nil // ParseWith has judged the spec
	}
	path, ok := sp.Get("high_water")
	if !ok || path == "" {
		return nil
	}
	mark, err := snowflake.FileHighWater{Path: path}.Load(ctx)
	if err != nil {
		return err
	}
	switch {
	case mark.IsZero():
		r.HighWater = fmt.Sprintf("%s holds no mark yet", path)
	case mark.After(now):
		r.HighWater = fmt.Sprintf("%s (%s): %s", mark.UTC().Format(time.RFC3339Nano), path, httpapi.BehindHighWaterWords(mark.Sub(now), mark))
	default:
		r.HighWater = fmt.Sprintf("%s (%s): passed %v ago; the clock is not behind it", mark.UTC().Format(time.RFC3339Nano), path, now.Sub(mark).Round(time.Millisecond))
	}
	return nil
}

// kindOf says what else an ID of scheme s may be: a Snowflake-family ID of
// another layout, or an ID of another scheme.
func kindOf(s *idgen.Scheme) string {
	if _, ok := snowflake.LayoutOf(s); ok {
		return "layout or scheme"
	}
	return "scheme"
}

func (r report) print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%s\n", r.ID)
	fmt.Fprintf(tw, "scheme\t%s\n", r.Scheme)
	if r.Prefix != "" {
		fmt.Fprintf(tw, "prefix\t%s\n", r.Prefix)
	}
	if r.Inner != nil {
		fmt.Fprintf(tw, "inner\t%s (%s)\n", r.Inner.ID, r.Inner.Scheme)
	}
	if r.Layout != "" {
		fmt.Fprintf(tw, "layout\t%s\n", r.Layout)
	}
	if r.Time != "" {
		fmt.Fprintf(tw, "time\t%s\n", r.Time)
	}
	fmt.Fprintf(tw, "hex\t%s\n", r.Hex)
	fmt.Fprintln(tw, "fields")
	for _, f := range r.fields {
		fmt.Fprintf(tw, "  %s\t%d\t(%d bits)\n", f.Name, f.Value, f.Bits)
	}
	if r.HighWater != "" {
		fmt.Fprintf(tw, "high_water\t%s\n", r.HighWater)
	}
	if r.Note != "" {
		fmt.Fprintf(tw, "note\t%s\n", r.Note)
	}
	if r.Warning != "" {
		fmt.Fprintf(tw, "warning\t%s\n", r.Warning)
	}
	return tw.Flush()
}
