package snowflake

import (
	"slices"
	"strings"
	"time"
)

func fields(spec ...any) []LayoutField {
	var fs []LayoutField
	for i := 0; i < len(spec); i += 2 {
		fs = append(fs, LayoutField{Name: spec[i].(string), Bits: spec[i+1].(int)})
	}
	return fs
}

// presets are the layouts seen in the field (DESIGN.md).
var presets = map[string]Layout{
	// Twitter (2010): 41 bits of ms, 5 datacenter, 5 worker, 12 sequence.
	"twitter": {Fields: fields("time", 41, "datacenter", 5, "worker", 5, "sequence", 12),
		Epoch: time.UnixMilli(1288834974657).UTC()},
	// Discord: Twitter's widths with 42 bits of ms, using all 64 bits.
	"discord": {Fields: fields("time", 42, "worker", 5, "process", 5, "sequence", 12),
		Epoch: time.UnixMilli(1420070400000).UTC(), Unsigned: true},
	// Instagram: 41 bits of ms, 13 logical shard, 10 sequence (64 bits).
	"instagram": {Fields: fields("time", 41, "shard", 13, "sequence", 10),
		Epoch: time.UnixMilli(1314220021721).UTC(), Unsigned: true},
	// Sonyflake: 39 bits of 10 ms, 8 sequence above 16 machine, from
	// sony/sonyflake/v2's default StartTime, 2025-01-01 (v1's was
	// 2014-09-01): the same layout as the sonyflake strategy's defaults.
	"sonyflake": {Fields: fields("time", 39, "sequence", 8, "machine", 16),
		Tick: 10 * time.Millisecond, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
	// Baidu UidGenerator: 28 bits of seconds, 22 worker, 13 sequence. Its
	// lifetime from the 2016-05-20 epoch ended on 2024-11-20.
	"baidu": {Fields: fields("time", 28, "worker", 22, "sequence", 13),
		Tick: time.Second, Epoch: time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)},
	// Multi-region: 41 bits of ms, 3 region, 10 worker, 10 sequence (64
	// bits; the epoch is configurable and defaults to DefaultEpoch).
	"region": {Fields: fields("time", 41, "region", 3, "worker", 10, "sequence", 10), Unsigned: true},
	// Simpleflake: 41 bits of ms and 22 random bits; no coordination, and
	// uniqueness only in probability.
	"simpleflake": {Fields: fields("time", 41, "random", 22),
		Epoch: time.Date(2000, 1, 1, 5, 0, 0, 0, time.UTC)},
	// JavaScript-safe: 53 bits, so that every ID is below 2^53 and a plain
	// JavaScript number holds it exactly (Number.MAX_SAFE_INTEGER is
	// 2^53-1): 41 bits of ms from 2026-01-01 (as default's), 5 worker, 7
	// sequence. The 11 bits it gives up cost default's datacenter field
	// and 5 sequence bits: 32 workers of 128,000 IDs/s each.
	"js53": {Fields: fields("time", 41, "worker", 5, "sequence", 7)},
	// idgen's default: Twitter's widths from a 2026-01-01 epoch.
	"default": {Fields: fields("time", 41, "datacenter", 5, "worker", 5, "sequence", 12)},
}

// Presets returns the names of the preset layouts, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns the named preset layout. Errors wrap ErrInvalidLayout and
// list the presets.
func Preset(name string) (Layout, error) {
	l, ok := presets[name]
	if !ok {
		return Layout{}, invalid("unknown preset %q; allowed %s", name, strings.Join(Presets(), ", "))
	}
	l.Fields = slices.Clone(l.Fields)
	return l.WithDefaults(), nil
}

// Resolve returns the layout named by s: a preset name, or a layout's text
// form (see ParseLayout).
func Resolve(s string) (Layout, error) {
	if !strings.ContainsAny(s, ":;") {
		return Preset(s)
	}
	return ParseLayout(s)
}
