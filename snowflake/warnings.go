package snowflake

import (
	"fmt"
	"time"
)

// Warnings returns what makes l degenerate, one sentence each, for an
// operator choosing a layout (idgen explain prints them): a tick under
// 1 ms, a lifetime under a year, and neither a sequence nor a random
// field. Nil when there is none. l's defaults apply (WithDefaults).
func (l Layout) Warnings() []string {
	l = l.WithDefaults()
	var ws []string
	if l.Tick < time.Millisecond {
		ws = append(ws, fmt.Sprintf("tick %v is under 1ms: system clocks seldom advance that finely, "+
			"and the time field's lifetime shrinks with the tick", l.Tick))
	}
	if end := l.End(); yearsBetween(l.Epoch, end) < 1 {
		ws = append(ws, fmt.Sprintf("the lifetime is %s: IDs run out that long after the epoch; "+
			"give the time field more bits or a longer tick", lifetime(l.Epoch, end)))
	}
	_, hasSeq := l.Field(FieldSequence)
	_, hasRand := l.Field(FieldRandom)
	if !hasSeq && !hasRand {
		ws = append(ws, fmt.Sprintf("no sequence field: a node issues one ID per %v tick", l.Tick))
	}
	return ws
}

// lifetime prints the span from epoch to end: a duration under a day
// (2ms, 1h0m0s), else days.
func lifetime(epoch, end time.Time) string {
	if d := end.Sub(epoch); d < 24*time.Hour {
		return d.String()
	}
	return fmt.Sprintf("%.1f days", float64(end.Unix()-epoch.Unix())/86400)
}

// yearsBetween returns b-a in years of 365.2425 days, without the 292-year
// cap of a time.Duration.
func yearsBetween(a, b time.Time) float64 {
	return (float64(b.Unix()-a.Unix()) + float64(b.Nanosecond()-a.Nanosecond())/1e9) / (365.2425 * 86400)
}
