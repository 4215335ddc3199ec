package serving

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDeadlineCtx(t *testing.T) {
	// Unasked, it has a deadline and no timer; asked, it expires on time.
	start := time.Now()
	c := NewDeadline(context.Background(), start.Add(20*time.Millisecond))
	if d, ok := c.Deadline(); !ok || !d.Equal(start.Add(20*time.Millisecond)) {
		t.Fatalf("Deadline() = %v, %v; want start+20ms, true", d, ok)
	}
	if c.timed != nil {
		t.Fatal("a timer was made before Done or Err was called")
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err() before the deadline = %v", err)
	}
	<-c.Done()
	if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() after Done = %v; want DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("Done after %v; want at least 20ms", waited)
	}
	c.Release()

	// An earlier parent deadline wins, and the parent's cancel reaches it.
	parent, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	c = NewDeadline(parent, time.Now().Add(time.Hour))
	if d, _ := c.Deadline(); d.After(time.Now().Add(time.Minute)) {
		t.Fatalf("Deadline() = %v; want the parent's, 1ms away", d)
	}
	<-c.Done()
	if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() after the parent expired = %v; want DeadlineExceeded", err)
	}
	c.Release()

	// Released unasked: canceled from then on, never a nil channel.
	c = NewDeadline(context.Background(), time.Now().Add(time.Hour))
	c.Release()
	select {
	case <-c.Done():
	default:
		t.Fatal("Done() of a released context is open")
	}
	if err := c.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() of a released context = %v; want Canceled", err)
	}
}

// A released Deadline reset for the next request (it lives in the
// pooled request state) is lazy and open again, with the new deadline.
func TestDeadlineCtxReset(t *testing.T) {
	c := NewDeadline(context.Background(), time.Now().Add(-time.Second))
	<-c.Done() // past: the timer fires at once
	c.Release()
	d := time.Now().Add(time.Hour)
	c.Reset(context.Background(), d)
	if c.timed != nil || c.released {
		t.Fatal("reset kept the last use's timer or release")
	}
	if got, _ := c.Deadline(); !got.Equal(d) {
		t.Errorf("Deadline() after reset = %v; want %v", got, d)
	}
	select {
	case <-c.Done():
		t.Fatal("Done() after reset is closed")
	default:
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err() after reset = %v; want nil", err)
	}
	c.Release()
}
