package compare

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// A Progress follows a run. Run calls Phase, Rows and PhaseDone from the
// writers' goroutines, one call at a time.
type Progress interface {
	// Status reports what the run is doing between phases.
	Status(msg string)
	// Phase starts a phase of rows rows for strategy: "preload" or "measure".
	Phase(strategy, phase string, rows int)
	// Rows reports n more rows of the current phase inserted.
	Rows(n int)
	// PhaseDone ends the current phase.
	PhaseDone(elapsed time.Duration)
	// Note reports a metric the run cannot measure, and why.
	Note(msg string)
}

type nopProgress struct{}

func (nopProgress) Status(string)             {}
func (nopProgress) Phase(string, string, int) {}
func (nopProgress) Rows(int)                  {}
func (nopProgress) PhaseDone(time.Duration)   {}
func (nopProgress) Note(string)               {}

// A Printer is the Progress of the idgen command: progress bars
// (vbauerster/mpb) when its writer is a terminal, plain lines at every
// tenth of a phase otherwise. Close it when the run is over.
type Printer struct {
	w  io.Writer
	mu sync.Mutex

	// bars (terminal)
	p    *mpb.Progress
	bar  *mpb.Bar
	done *atomic.Int64

	// lines
	name, phase string
	total, rows int
	tenth       int
	start       time.Time
}

var _ Progress = (*Printer)(nil)

// NewPrinter returns a Printer writing to w.
func NewPrinter(w io.Writer) *Printer {
	pr := &Printer{w: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && termWidth(f) > 0 {
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))
	}
	return pr
}

// Status prints msg on its own line.
func (pr *Printer) Status(msg string) { pr.line("compare: " + msg) }

// Note prints msg on its own line.
func (pr *Printer) Note(msg string) { pr.line("compare: note: " + msg) }

func (pr *Printer) line(s string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.p != nil {
		fmt.Fprintln(pr.p, s)
		return
	}
	fmt.Fprintln(pr.w, s)
}

// Phase starts a bar, or prints the phase's first line.
func (pr *Printer) Phase(strategy, phase string, rows int) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.name, pr.phase, pr.total, pr.rows, pr.tenth, pr.start = strategy, phase, rows, 0, 0, time.Now()
	if pr.p != nil {
		done := new(atomic.Int64) // the phase's duration in ns, once over
		pr.done = done
		pr.bar = pr.p.AddBar(int64(rows),
			mpb.PrependDecorators(
				decor.Name(fmt.Sprintf("%-28.28s %-7s", strategy, phase), decor.WCSyncSpaceR),
				decor.CountersNoUnit("%d/%d", decor.WCSyncWidth),
			),
			mpb.AppendDecorators(
				decor.Any(rate(pr.start, done), decor.WCSyncSpace),
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace), "done"),
			),
		)
		return
	}
	fmt.Fprintf(pr.w, "compare: %s %s: %d rows\n", strategy, phase, rows)
}

// Rows advances the bar, or prints a line at each tenth.
func (pr *Printer) Rows(n int) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.rows += n
	if pr.bar != nil {
		pr.bar.IncrBy(n)
		return
	}
	if pr.p != nil || pr.total == 0 {
		return
	}
	t := pr.tenth
	for t < 10 && pr.rows >= threshold(pr.total, t+1) {
		t++
	}
	if t > pr.tenth && t < 10 { // the last tenth is PhaseDone's line
		pr.tenth = t
		el := time.Since(pr.start)
		fmt.Fprintf(pr.w, "compare: %s %s: %3d%% %d rows, %.0f rows/s\n", pr.name, pr.phase, t*10, pr.rows, float64(pr.rows)/el.Seconds())
	}
}

// PhaseDone completes the bar, or prints the phase's last line.
func (pr *Printer) PhaseDone(elapsed time.Duration) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.bar != nil {
		pr.done.Store(int64(elapsed))
		pr.bar.SetTotal(-1, true)
		pr.bar.Wait()
		pr.bar = nil
		return
	}
	fmt.Fprintf(pr.w, "compare: %s %s: done, %d rows in %.2fs (%.0f rows/s)\n", pr.name, pr.phase, pr.rows, elapsed.Seconds(), float64(pr.rows)/elapsed.Seconds())
}

// rate shows rows/s since start, or over the phase once done is set.
func rate(start time.Time, done *atomic.Int64) decor.DecorFunc {
	return func(s decor.Statistics) string {
		el := time.Since(start)
		if d := done.Load(); d > 0 {
			el = time.Duration(d)
		}
		if el <= 0 {
			return "- rows/s"
		}
		return fmt.Sprintf("%.0f rows/s", float64(s.Current)/el.Seconds())
	}
}

func termWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// Close stops the bars' rendering.
func (pr *Printer) Close() error {
	if pr.p != nil {
		pr.p.Wait()
	}
	return nil
}
