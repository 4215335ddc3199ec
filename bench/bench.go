// Package bench measures ID generators side by side: IDs per second, time
// per ID, bytes per ID, whether they are time-ordered, and their text
// length. It is what "idgen bench" prints.
//
// These are throughput figures for one process on one machine, for
// comparing strategies with each other in the same run; for an adapter's
// overhead over its library, see the go test benchmarks in package
// strategies.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/numfmt"
	"github.com/idgenkit/idgen/internal/redact"
	"github.com/idgenkit/idgen/strategies"
)

// Config says what Run measures. Every field's zero value is usable.
type Config struct {
	// Specs are the strategies to run, as strategies.New takes them. Empty
	// means every registered strategy that needs no external store
	// (Strategy.External false), by name with default keys.
	Specs []string
	// SpecOptions are the strategies.Options the specs are built with
	// (a worker ID override, the keys of public IDs). Zero means none.
	SpecOptions strategies.Options
	// Duration is how long each strategy runs. Zero means 2 s.
	Duration time.Duration
	// Goroutines call Next at once on one generator. Zero means GOMAXPROCS.
	Goroutines int
}

// DefaultDuration is a strategy's run time when Config.Duration is zero.
const DefaultDuration = 2 * time.Second

// A Result is one strategy's run.
type Result struct {
	Spec       string // as given, passwords masked (redact.Spec)
	Scheme     *idgen.Scheme
	IDs        uint64        // IDs issued
	Elapsed    time.Duration // wall time of the run
	Goroutines int
	TextLen    int // length of the canonical text, the longest seen
}

// PerSecond returns IDs issued per second of wall time, all goroutines
// together.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.IDs) / r.Elapsed.Seconds()
}

// NsPerID returns the mean time one goroutine spent per Next call, in ns:
// Elapsed × Goroutines / IDs. With one goroutine it is 1e9 / PerSecond.
func (r Result) NsPerID() float64 {
	if r.IDs == 0 {
		return 0
	}
	return float64(r.Elapsed.Nanoseconds()) * float64(r.Goroutines) / float64(r.IDs)
}

// DefaultSpecs returns the names of the registered strategies that need no
// external store, sorted.
func DefaultSpecs() []string {
	var specs []string
	for _, s := range strategies.List() {
		if !s.External {
			specs = append(specs, s.Name)
		}
	}
	return specs
}

// Run builds each spec's generator and measures it for cfg.Duration, one
// strategy after the other, in the order given. A bad spec is refused
// before anything runs (the error wraps strategies.ErrSpec). A generator
// that implements io.Closer is closed after its run. Results and errors
// name a spec with its passwords masked.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Duration < 0 || cfg.Goroutines < 0 {
		return nil, fmt.Errorf("bench: duration %v and goroutines %d must not be negative", cfg.Duration, cfg.Goroutines)
	}
	if cfg.Duration == 0 {
		cfg.Duration = DefaultDuration
	}
	if cfg.Goroutines == 0 {
		cfg.Goroutines = runtime.GOMAXPROCS(0)
	}
	specs := cfg.Specs
	if len(specs) == 0 {
		specs = DefaultSpecs()
	}
	parsed := make([]strategies.Spec, len(specs))
	for i, spec := range specs {
		var err error
		if parsed[i], err = strategies.CheckSpec(spec); err != nil { // the one parse of each spec
			return nil, err
		}
		if _, err := cfg.SpecOptions.SchemeOf(parsed[i]); err != nil {
			return nil, err
		}
	}
	var out []Result
	for i, spec := range specs {
		label := redact.Spec(spec)
		g, err := cfg.SpecOptions.New(ctx, parsed[i])
		if err != nil {
			return out, fmt.Errorf("bench: %s: %w", label, err)
		}
		r, err := Measure(ctx, g, cfg.Duration, cfg.Goroutines)
		if c, ok := g.(io.Closer); ok {
			c.Close()
		}
		if err != nil {
			return out, fmt.Errorf("bench: %s: %w", label, err)
		}
		r.Spec = label
		out = append(out, r)
	}
	return out, nil
}

// Measure runs g for d on n goroutines (n >= 1) and returns what it issued.
// It stops early with ctx's error, or with the first error Next returns.
func Measure(ctx context.Context, g idgen.Generator, d time.Duration, n int) (Result, error) {
	n = max(n, 1)
	var (
		stop  atomic.Bool
		total atomic.Uint64
		mu    sync.Mutex
		first error
		text  int
		wg    sync.WaitGroup
	)
	start := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	stopWatch := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopWatch()
	for range n {
		wg.Go(func() {
			var count uint64
			var last idgen.ID
			for !stop.Load() {
				id, err := g.Next(ctx)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					stop.Store(true)
					break
				}
				last = id
				count++
			}
			total.Add(count)
			mu.Lock()
			text = max(text, len(last.String()))
			mu.Unlock()
		})
	}
	wg.Wait()
	r := Result{Scheme: g.Scheme(), IDs: total.Load(), Elapsed: time.Since(start), Goroutines: n, TextLen: text}
	if first != nil && !errors.Is(first, context.Canceled) {
		return r, first
	}
	return r, ctx.Err()
}

// WriteTable writes results as an aligned table:
//
//	strategy   IDs/s       ns/ID  bytes  time-ordered  text  column
//	uuidv7     3,412,005   586.2  16     yes           36    uuid
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\tIDs/s\tns/ID\tbytes\ttime-ordered\ttext\tcolumn")
	for _, r := range rs {
		ordered := "no"
		if r.Scheme.TimeOrdered {
			ordered = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%s\t%d\t%s\n", r.Spec, numfmt.Thousands(uint64(r.PerSecond()+0.5)), r.NsPerID(),
			r.Scheme.Size, ordered, r.TextLen, r.Scheme.Column)
	}
	return tw.Flush()
}

// SplitSpecs splits comma-separated lists of specs ("uuidv7,ulid,xid"; the
// flag may repeat) into specs. A comma inside a spec, as in
// "snowflake?layout=time:41,worker:10,sequence:12", is kept: a piece that
// does not start with a registered strategy's name continues the spec
// before it. Empty pieces are dropped.
func SplitSpecs(lists []string) []string {
	var specs []string
	for _, list := range lists {
		for _, piece := range strategies.SplitList(list, nil) {
			if piece = strings.TrimSpace(piece); piece != "" {
				specs = append(specs, piece)
			}
		}
	}
	return specs
}
