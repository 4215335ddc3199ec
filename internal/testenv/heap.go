package testenv

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// heapObjects is the runtime metric of the bytes in heap objects, live or
// not yet collected: MemStats.HeapAlloc, read without stopping the world.
const heapObjects = "/memory/classes/heap/objects:bytes"

func readHeap() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// HeapGrowth runs a GC, then samples the bytes of heap objects every
// millisecond until the returned stop is called, which returns how far the
// highest sample rose above the reading after the GC (0 if none did). The
// whole process counts: a test allocates what it keeps before it calls
// HeapGrowth.
func HeapGrowth() (stop func() uint64) {
	runtime.GC()
	base := readHeap()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				peak = max(peak, readHeap())
				return
			case <-t.C:
				peak = max(peak, readHeap())
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak - base
	}
}
