package serving

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// A Tracker counts the requests and streams in flight on one transport,
// so that a drain can wait for them and say what it cut off. Its methods
// cost two atomic operations per request; NewTracker makes one.
type Tracker struct {
	requests, streams atomic.Int64
	waiting           atomic.Bool   // a Wait is under way: End wakes it at zero
	wake              chan struct{} // capacity 1
}

// NewTracker returns a Tracker with nothing in flight.
func NewTracker() *Tracker { return &Tracker{wake: make(chan struct{}, 1)} }

func (t *Tracker) counter(stream bool) *atomic.Int64 {
	if stream {
		return &t.streams
	}
	return &t.requests
}

// Start counts a request (a stream when stream is true) in flight.
func (t *Tracker) Start(stream bool) { t.counter(stream).Add(1) }

// End counts the request Start counted as ended.
func (t *Tracker) End(stream bool) {
	if t.counter(stream).Add(-1) == 0 && t.waiting.Load() {
		select {
		case t.wake <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// InFlight returns the requests and streams in flight now.
func (t *Tracker) InFlight() (requests, streams int) {
	return int(t.requests.Load()), int(t.streams.Load())
}

// Wait returns once nothing is in flight, with 0, 0, or when ctx ends,
// with what is in flight then.
func (t *Tracker) Wait(ctx context.Context) (requests, streams int) {
	t.waiting.Store(true)
	defer t.waiting.Store(false)
	for {
		// Read after waiting is set: an End that reached zero before it
		// is seen here, one after it wakes the select.
		if r, s := t.InFlight(); r+s == 0 {
			return 0, 0
		}
		select {
		case <-t.wake:
		case <-ctx.Done():
			return t.InFlight()
		}
	}
}

// Handler returns h counting each request it serves as in flight until
// h returns (or panics).
func (t *Tracker) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Start(false)
		defer t.End(false)
		h.ServeHTTP(w, r)
	})
}

// DrainHTTP shuts srv down (http.Server.Shutdown: no new connections,
// idle ones closed, requests in flight let finish) until ctx ends, then
// closes it, cutting off what still runs. It returns how many requests t
// (the Tracker of srv's handler) counted in flight when ctx ended: 0 when
// everything finished in time.
func DrainHTTP(ctx context.Context, srv *http.Server, t *Tracker) (cut int) {
	if srv.Shutdown(ctx) == nil {
		return 0
	}
	cut, _ = t.InFlight()
	srv.Close()
	return cut
}

// A Transport is one listener a shutdown drains.
type Transport struct {
	// Name names the transport in the cut-off report: "http", "grpc".
	Name string
	// NotServing turns the transport's readiness off (HTTP /readyz 503,
	// gRPC health NOT_SERVING) while it keeps serving; nil for none.
	NotServing func()
	// Drain stops taking new work, lets the work in flight finish until
	// ctx ends, then cuts off what is left and returns how many requests
	// and streams it cut off.
	Drain func(ctx context.Context) (requests, streams int)
}

// A Cut is the work a shutdown cut off on one transport.
type Cut struct {
	Transport         string
	Requests, Streams int
}

// Shutdown first turns every transport's readiness off, then drains them
// all at once within one timeout (0: none given; every drain cuts off at
// once what is in flight), and returns once every drain has returned:
// the work cut off, one Cut per transport that cut any, in the order
// given. Shutdown takes the timeout and a little more, never a timeout
// per transport.
func Shutdown(timeout time.Duration, ts ...Transport) []Cut {
	for _, t := range ts {
		if t.NotServing != nil {
			t.NotServing()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cuts := make([]Cut, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, s := t.Drain(ctx)
			cuts[i] = Cut{t.Name, r, s}
		}()
	}
	wg.Wait()
	out := cuts[:0]
	for _, c := range cuts {
		if c.Requests+c.Streams > 0 {
			out = append(out, c)
		}
	}
	return out
}
