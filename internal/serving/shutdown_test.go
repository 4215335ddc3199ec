package serving_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/serving"
)

func TestTrackerWait(t *testing.T) {
	tr := serving.NewTracker()
	if r, s := tr.Wait(context.Background()); r != 0 || s != 0 {
		t.Fatalf("Wait with nothing in flight = %d, %d; want 0, 0", r, s)
	}
	tr.Start(false)
	tr.Start(true)
	tr.Start(true)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tr.End(true)
		tr.End(false)
		tr.End(true)
	}()
	if r, s := tr.Wait(context.Background()); r != 0 || s != 0 {
		t.Fatalf("Wait until all ended = %d, %d; want 0, 0", r, s)
	}
	<-ended
	tr.Start(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, s := tr.Wait(ctx); r != 0 || s != 1 {
		t.Fatalf("Wait cut short with a stream in flight = %d, %d; want 0, 1", r, s)
	}
}

// Shutdown turns every transport's readiness off before any drain starts,
// runs the drains at once (each here waits for the other to have started:
// drains one after the other would both run into the timeout), and
// reports only the transports that cut something off.
func TestShutdown(t *testing.T) {
	var mu sync.Mutex
	var events []string
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	transport := func(name, other string, cut int) serving.Transport {
		return serving.Transport{Name: name, NotServing: func() { note("not serving " + name) },
			Drain: func(ctx context.Context) (int, int) {
				note("drain " + name)
				close(started[name])
				select {
				case <-started[other]:
					return 0, cut
				case <-ctx.Done():
					return 100, 100
				}
			}}
	}
	cuts := serving.Shutdown(time.Minute, transport("a", "b", 0), transport("b", "a", 2))
	if got := fmt.Sprint(cuts); got != "[{b 0 2}]" {
		t.Errorf("Shutdown = %s; want [{b 0 2}]: b's cut stream, a cut nothing, the drains together", got)
	}
	if got := fmt.Sprint(events[:2]); got != "[not serving a not serving b]" {
		t.Errorf("events %q; want both transports not serving before any drain", events)
	}
}
