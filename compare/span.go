package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

// SwappedV1 is the row of UUIDv1 keys stored with their time fields
// swapped as MySQL's UUID_TO_BIN(u, 1) does (strategies.SwapUUIDv1):
// time_high and version, time_mid, time_low, then the clock sequence and
// node. It is a row of the comparison, not a strategy: the keys are
// uuidv1's, and only their byte order in the index differs.
const SwappedV1 = "uuidv1-swapped"

// MaxSpan is the longest Config.Span.
const MaxSpan = 10 * 365 * 24 * time.Hour

// buildSwapped builds the SwappedV1 row from uuidv1's generators.
func buildSwapped(ctx context.Context, writers int) (*plan, string, error) {
	p, note, err := buildPlan(ctx, strategies.Options{}, "uuidv1", writers)
	if err != nil {
		return nil, "", err
	}
	p.spec, p.label, p.name, p.swap = SwappedV1, SwappedV1, SwappedV1, true
	return p, note, nil
}

// ordered reports whether p's keys sort in the order they are issued, so
// that the rows created in one second are one range of the primary key:
// the Baseline's sequence, a time-ordered scheme, SwappedV1.
func (p *plan) ordered() bool {
	return p.scheme == nil || p.scheme.TimeOrdered || p.swap
}

// A clock gives each row's time under Config.Span: in round r (1, 2,
// ...), row k (0-based over the preloaded and measured rows, in the order
// the writers claim them) of total is issued at start + span × (r - 1) +
// span × k / total, start being span × rounds before the run began, as
// migrate's backfill issues keys at their rows' times. Each round has its
// own span of time, after the previous one's: a generator that keeps its
// last time (a Snowflake sequence) never sees its clock go back.
type clock struct {
	start time.Time
	span  time.Duration
	total int64
	round int
}

// at returns row k's time.
func (c clock) at(k int64) time.Time {
	return c.start.Add(c.span*time.Duration(c.round-1) + time.Duration(float64(c.span)*float64(k)/float64(c.total)))
}

// issue fills ids with the keys of the rows first, first+1, ... (1-based,
// as the phases number them): gen.Next in real time, or NewAt on the
// simulated clock when Config.Span is set and gen can issue keys at a time.
func (h *harness) issue(ctx context.Context, p *plan, gen idgen.Generator, ids []idgen.ID, first int64) error {
	ag, ok := gen.(idgen.AtGenerator)
	if h.cfg.Span == 0 || !ok {
		if _, err := idgen.NextN(ctx, gen, ids); err != nil {
			return fmt.Errorf("%s: generating IDs: %w", p.label, err)
		}
		return nil
	}
	for i := range ids {
		t := h.clock.at(first - 1 + int64(i))
		id, err := ag.NewAt(t)
		if err != nil {
			return &idgen.FieldError{Field: "Config.Span", Value: h.cfg.Span.String(),
				Allowed: fmt.Sprintf("%s cannot issue the ID of %s", p.label, t.UTC().Format(time.RFC3339)), Err: err}
		}
		ids[i] = id
	}
	return nil
}

// spanNote says which rows --span does not apply to.
func spanNote(plans []*plan) []string {
	var out []string
	for _, p := range plans {
		if len(p.gens) == 0 {
			continue
		}
		if _, ok := p.gens[0].(idgen.AtGenerator); !ok {
			out = append(out, fmt.Sprintf("%s cannot issue keys at a given time: its keys are issued in real time despite the span", p.label))
		}
	}
	return out
}

// storeKey returns the key column's bytes of id for p: keyBytes, with
// SwappedV1's swap.
func storeKey(dst []byte, id idgen.ID, p *plan) ([]byte, error) {
	n := len(dst)
	dst, err := keyBytes(dst, id, p.column)
	if err == nil && p.swap {
		strategies.SwapUUIDv1(dst[n:])
	}
	return dst, err
}

// recordReads records the settings of the reads and of Span in rec.
func (cfg Config) recordReads(rec *ConfigRecord) {
	rec.Reads, rec.ReadOps, rec.ReadTimeSec = !cfg.NoReads, cfg.ReadOps, cfg.ReadTime.Seconds()
	if cfg.Span > 0 {
		rec.Span = cfg.Span.String()
	}
}
