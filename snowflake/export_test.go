package snowflake

import "time"

// SystemClockWithStep returns a SystemClock as if the wall clock had been
// stepped by step since it was created, and the step not followed yet.
func SystemClockWithStep(step time.Duration) Clock {
	c := followWall(time.Now)
	c.base.Add(-int64(step))
	c.nextCheck.Store(int64(time.Hour))
	return c
}

// SystemClockOver returns a SystemClock over the wall clock wall.
func SystemClockOver(wall func() time.Time) Clock { return followWall(wall) }
