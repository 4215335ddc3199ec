package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/idgenkit/idgen/compare"
	"github.com/idgenkit/idgen/internal/numfmt"
	"github.com/idgenkit/idgen/migrate"
)

// bars draws the progress events of compare and migrate on stderr:
// progress bars (vbauerster/mpb, the module's one bar library) when w is
// a terminal, plain lines at every tenth of a phase otherwise. Every line
// starts with prefix ("compare: "). Close it when the run is over.
type bars struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex

	// bars (terminal)
	p          *mpb.Progress
	removeDone bool // a finished phase's bar goes away
	bar        *mpb.Bar
	done       *atomic.Int64 // the phase's duration in ns, once over

	// lines
	name, unit string
	total, at  int64
	from       int64 // done when the phase started (a resumed migration)
	tenth      int
	start      time.Time
}

func newBars(w io.Writer, prefix string) *bars {
	b := &bars{w: w, prefix: prefix}
	if f, ok := w.(*os.File); ok && termWidth(f) > 0 {
		b.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))
	}
	return b
}

// line prints s on its own line, above the bars if any.
func (b *bars) line(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p != nil {
		fmt.Fprintln(b.p, b.prefix+s)
		return
	}
	fmt.Fprintln(b.w, b.prefix+s)
}

// phase starts a bar labelled label, or prints the phase's first line
// naming name: total units, done of them already.
func (b *bars) phase(name, label, unit string, total, done int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.name, b.unit, b.total, b.at, b.from, b.start = name, unit, total, done, done, time.Now()
	b.tenth = 0
	for b.tenth < 10 && total > 0 && done >= tenthMark(total, b.tenth+1) {
		b.tenth++
	}
	if b.p != nil {
		doneNs := new(atomic.Int64)
		b.done = doneNs
		opts := []mpb.BarOption{mpb.PrependDecorators(
			decor.Name(label, decor.WCSyncSpaceR),
			decor.CountersNoUnit("%d/%d", decor.WCSyncWidth),
		),
			mpb.AppendDecorators(
				decor.Any(barRate(b.start, done, unit, doneNs), decor.WCSyncSpace),
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace), "done"),
			)}
		if b.removeDone {
			opts = append(opts, mpb.BarRemoveOnComplete())
		}
		b.bar = b.p.AddBar(total, opts...)
		b.bar.SetCurrent(done)
		return
	}
	if done > 0 {
		fmt.Fprintf(b.w, "%s%s: %d %s, %d done before\n", b.prefix, name, total, unit, done)
		return
	}
	fmt.Fprintf(b.w, "%s%s: %d %s\n", b.prefix, name, total, unit)
}

// percent is done's share of total in whole percent, rounded down (5000
// of 20000 is 25%: a line is printed when a tenth is crossed, and says
// where the count is, not which tenth it crossed).
func percent(done, total int64) int64 {
	if total <= 0 {
		return 100
	}
	return min(100, done*100/total)
}

// tenthMark is the count that completes tenth k (1..10) of total.
func tenthMark(total int64, k int) int64 { return (total*int64(k) + 9) / 10 }

// set advances the phase to done units, printing a line at each tenth
// but the last (the last is finish's line).
func (b *bars) set(done int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = done
	if b.bar != nil {
		b.bar.SetCurrent(done)
		return
	}
	if b.p != nil || b.total == 0 {
		return
	}
	t := b.tenth
	for t < 10 && done >= tenthMark(b.total, t+1) {
		t++
	}
	if t > b.tenth && t < 10 {
		b.tenth = t
		el := time.Since(b.start)
		fmt.Fprintf(b.w, "%s%s: %3d%% %d %s, %.0f %s/s\n", b.prefix, b.name, percent(done, b.total), done, b.unit, float64(done-b.from)/el.Seconds(), b.unit)
	}
}

// finish completes the bar, or prints the phase's last line, elapsed
// being the phase's duration.
func (b *bars) finish(elapsed time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		b.done.Store(int64(elapsed))
		b.bar.SetTotal(-1, true)
		b.bar.Wait()
		b.bar = nil
		return
	}
	n := b.at - b.from
	fmt.Fprintf(b.w, "%s%s: done, %d %s in %.2fs (%.0f %s/s)\n", b.prefix, b.name, n, b.unit, elapsed.Seconds(), float64(n)/elapsed.Seconds(), b.unit)
}

// barRate shows units/s since start (counting from from), or over the phase
// once done is set.
func barRate(start time.Time, from int64, unit string, done *atomic.Int64) decor.DecorFunc {
	return func(s decor.Statistics) string {
		el := time.Since(start)
		if d := done.Load(); d > 0 {
			el = time.Duration(d)
		}
		if el <= 0 {
			return "- " + unit + "/s"
		}
		return fmt.Sprintf("%.0f %s/s", float64(s.Current-from)/el.Seconds(), unit)
	}
}

// Close stops the bars' rendering.
func (b *bars) Close() error {
	if b.p != nil {
		b.p.Wait()
	}
	return nil
}

// compareProgress draws compare's Progress on stderr. On a terminal:
// one bar per phase that updates in place and goes away when the phase is
// done. Elsewhere (a pipe, a file): no per-phase lines, but one line per
// round that lists each row's insert rate, so that the default run prints
// a few dozen lines. Status lines and notes show either way; quiet shows
// nothing. Once ctx is done (a signal stopped the run), it shows nothing
// more: the command then says only that the run was cancelled.
type compareProgress struct {
	ctx   context.Context
	quiet bool
	b     *bars

	mu       sync.Mutex
	round    string   // the current round's header, printed with its rates
	rates    []string // "uuidv4 71,204"
	strategy string   // the current phase's row and phase
	phase    string
	rows     int
}

var _ compare.Progress = (*compareProgress)(nil)

func newCompareProgress(ctx context.Context, w io.Writer, quiet bool) *compareProgress {
	b := newBars(w, "compare: ")
	b.removeDone = true
	return &compareProgress{ctx: ctx, quiet: quiet, b: b}
}

func (c *compareProgress) off() bool { return c.quiet || c.ctx.Err() != nil }

func (c *compareProgress) Status(msg string) {
	if c.off() {
		return
	}
	c.flushRound()
	if head, _, ok := strings.Cut(msg, ": "); ok && strings.Contains(head, " round ") {
		c.mu.Lock()
		c.round, c.rates = head, nil
		c.mu.Unlock()
		if c.b.p != nil {
			c.b.line(head)
		}
		return
	}
	c.b.line(msg)
}

func (c *compareProgress) Note(msg string) {
	if c.off() {
		return
	}
	c.b.line("note: " + msg)
}

func (c *compareProgress) Phase(strategy, phase string, n int) {
	c.mu.Lock()
	c.strategy, c.phase, c.rows = strategy, phase, n
	c.mu.Unlock()
	if c.off() || c.b.p == nil {
		return
	}
	unit := "rows"
	if strings.HasPrefix(phase, "read ") { // a read phase counts reads
		unit = "reads"
	}
	c.b.phase(strategy+" "+phase, fmt.Sprintf("%-28.28s %-11s", strategy, phase), unit, int64(n), 0)
}

func (c *compareProgress) Rows(n int) {
	if c.off() || c.b.p == nil {
		return
	}
	c.b.mu.Lock()
	at := c.b.at + int64(n)
	c.b.mu.Unlock()
	c.b.set(at)
}

func (c *compareProgress) PhaseDone(elapsed time.Duration) {
	c.mu.Lock()
	if c.phase == "measure" && elapsed > 0 {
		c.rates = append(c.rates, fmt.Sprintf("%s %s", c.strategy, thousandsOf(float64(c.rows)/elapsed.Seconds())))
	}
	c.mu.Unlock()
	if c.off() || c.b.p == nil {
		return
	}
	c.b.finish(elapsed)
}

// flushRound prints the finished round's line: its header and each row's
// rows/s.
func (c *compareProgress) flushRound() {
	c.mu.Lock()
	round, rates := c.round, c.rates
	c.round, c.rates = "", nil
	c.mu.Unlock()
	if round == "" || len(rates) == 0 || c.off() {
		return
	}
	c.b.line(round + " done, rows/s: " + strings.Join(rates, ", "))
}

// Close prints the last round's line and stops the bars.
func (c *compareProgress) Close() error {
	c.flushRound()
	return c.b.Close()
}

// thousandsOf writes v rounded, with commas: 71204.4 → "71,204".
func thousandsOf(v float64) string { return numfmt.Thousands(uint64(v + 0.5)) }

// migrateBars draws migrate's Progress.
type migrateBars struct{ *bars }

var _ migrate.Progress = migrateBars{}

func newMigrateBars(w io.Writer) migrateBars { return migrateBars{newBars(w, "")} }

func (m migrateBars) Phase(name, unit string, total, done int64) {
	m.phase(name, fmt.Sprintf("%-28.28s", name), unit, total, done)
}
func (m migrateBars) At(done int64)                   { m.set(done) }
func (m migrateBars) PhaseDone(elapsed time.Duration) { m.finish(elapsed) }

// stepLog returns a Logger printing each record's message, one per line, to
// w: a library's step log as the command shows it.
func stepLog(w io.Writer) *slog.Logger { return slog.New(&lineHandler{w: w}) }

type lineHandler struct {
	mu sync.Mutex
	w  io.Writer
}

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintln(h.w, r.Message)
	return err
}
func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lineHandler) WithGroup(string) slog.Handler      { return h }
