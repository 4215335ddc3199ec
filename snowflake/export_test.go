package snowflake

import "time"

// SystemClockWithStep returns a SystemClock as if the wall clock had been
// stepped by step since it was created.
func SystemClockWithStep(step time.Duration) Clock {
	now := time.Now()
	return systemClock{start: now, startNs: now.UnixNano() - int64(step)}
}
