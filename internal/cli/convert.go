package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/strategies"
)

// convertTargets are the schemes convert names with --to.
var convertTargets = map[string]*idgen.Scheme{
	"uuid":   strategies.UUIDScheme(),
	"ulid":   strategies.ULIDScheme(),
	"uuidv7": strategies.UUIDv7Scheme(),
	"uuidv4": strategies.UUIDv4Scheme(),
}

func newConvertCmd() *cobra.Command {
	var to, from, encoding string
	cmd := &cobra.Command{
		Use:   "convert ID (--to SCHEME | --encoding NAME)",
		Short: "Convert an ID to another scheme holding the same bits (ULID <-> UUID, UUIDv7 <-> ULID)",
		Long: `convert rewrites an ID in another scheme when no bit is lost: a ULID and the
uuid column value of the same 128 bits, a UUIDv7 and the ULID of the same
millisecond and order. A pair that would lose or invent bits (a UUIDv4 has
no time to make a ULID of; a ULID not made from a UUIDv7 loses 6 random bits
as a UUIDv7) is refused with exit code 2.

Schemes for --to: ` + strings.Join(targetNames(), ", ") + `.

--encoding writes the ID (converted, with --to) in another text encoding
instead: ` + strings.Join(public.EncodingNames(), ", ") + `.
--from 'STRATEGY?encoding=NAME' reads an ID written in one (a spec with keys
adds &encoding=NAME).`,
		Example: `  idgen convert 01J8Z3YQ5V8KZ4X2M9N7P6R5T4 --to uuid
  idgen convert 0190f1d2-7a3b-7c4d-8e5f-6a7b8c9d0e1f --to ulid
  idgen convert 1541815603606036480 --encoding crockford`,
		Args: oneArg("the ID to convert"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" && encoding == "" {
				return badInput(fmt.Errorf("convert: --to is required unless --encoding is given: give --to SCHEME (%s) or --encoding NAME (%s)", strings.Join(targetNames(), ", "), strings.Join(public.EncodingNames(), ", ")))
			}
			var enc *public.Encoding
			if encoding != "" {
				var err error
				if enc, err = public.LookupEncoding(encoding); err != nil {
					return badInput(fmt.Errorf("--encoding %q: want one of %s", echo.Cut(encoding), strings.Join(public.EncodingNames(), ", ")))
				}
			}
			target, ok := convertTargets[to]
			if !ok && to != "" {
				return badInput(fmt.Errorf("--to %q: want one of %s", to, strings.Join(targetNames(), ", ")))
			}
			id, err := specOptions().ParseWith(args[0], from)
			if err != nil {
				return badInput(err)
			}
			out := id
			if target != nil {
				if out, err = strategies.ConvertExact(id, target); err != nil {
					return badInput(err)
				}
			}
			if enc == nil {
				fmt.Fprintln(cmd.OutOrStdout(), out)
				return nil
			}
			if err := enc.Fits(out.Scheme().Size); err != nil {
				return badInput(fmt.Errorf("--encoding %q: %w", encoding, err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", enc.AppendText(nil, out.Bytes()))
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "target scheme: "+strings.Join(targetNames(), ", "))
	cmd.Flags().StringVar(&from, "from", "", "read ID as this strategy's scheme (default: detect from its form)")
	cmd.Flags().StringVar(&encoding, "encoding", "", "write the ID in this text encoding: "+strings.Join(public.EncodingNames(), ", "))
	return cmd
}

func targetNames() []string { return []string{"uuid", "ulid", "uuidv7", "uuidv4"} }
