package httpapi

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
)

// An idEncoder writes the IDs of one scheme as JSON objects,
//
//	{"value_string":"...","value_hex":"...","breakdown":{...}}
//
// For a Snowflake layout the breakdown is computed from the layout's Spans
// without allocating; other schemes go through Scheme.Decompose.
type idEncoder struct {
	scheme *idgen.Scheme
	layout string // the Snowflake layout's text; "" for other schemes

	// Snowflake only.
	sf      bool
	time    snowflake.Span
	fields  []sfField // the layout's fields but time, high to low
	l       snowflake.Layout
	msTick  int64 // ms per tick when the tick is whole ms and the epoch ms-aligned, else 0
	epochMs int64
	lastTS  atomic.Pointer[tickText]   // the latest tick's timestamp_ms digits
	seq     int                        // the sequence's index in fields; -1: none
	seqHex  int                        // the low hex digits the sequence's bits reach
	tmpl    atomic.Pointer[idTemplate] // the latest tick's template, with seq
}

// A tickText is a tick's timestamp_ms in decimal: the IDs of a tick (and
// the one-ID answers of a busy server, many per ms) share it.
type tickText struct {
	tick uint64
	text []byte
}

// sfField is one non-time field of a Snowflake layout.
type sfField struct {
	key []byte // `,"worker_id":`
	// The decimal text of each value, for fields of up to textBits bits:
	// value v's is digits[ends[v-1]:ends[v]] (from 0 for v = 0). Pointer
	// free, so that the collector does not scan it. nil above textBits.
	digits []byte
	ends   []uint16
	snowflake.Span
}

// text returns the decimal text of value v of f, which has a table.
func (f *sfField) text(v uint64) []byte {
	lo := uint16(0)
	if v > 0 {
		lo = f.ends[v-1]
	}
	return f.digits[lo:f.ends[v]]
}

// textBits is the widest field whose values' text an encoder holds (4,096
// strings for a 12-bit sequence): copied, not formatted, per ID.
const textBits = 12

// breakdownKey is the JSON name of a Snowflake field in the breakdown.
func breakdownKey(field string) string {
	switch field {
	case snowflake.FieldTime:
		return "timestamp_ms"
	case snowflake.FieldSequence:
		return "sequence_number"
	case snowflake.FieldRandom:
		return "random"
	}
	return field + "_id"
}

func encoderFor(s *idgen.Scheme) *idEncoder {
	e := &idEncoder{scheme: s}
	l, ok := snowflake.LayoutOf(s)
	if !ok || s.Size != 8 {
		return e
	}
	e.sf, e.l, e.layout, e.seq = true, l, l.String(), -1
	for _, f := range l.Spans() {
		if f.Name == snowflake.FieldSequence {
			e.seq, e.seqHex = len(e.fields), (int(f.Shift)+f.Width+3)/4
		}
		if f.Name == snowflake.FieldTime {
			e.time = f
			continue
		}
		key := append([]byte{','}, strconv.Quote(breakdownKey(f.Name))...)
		sf := sfField{key: append(key, ':'), Span: f}
		if f.Width <= textBits {
			sf.ends = make([]uint16, 1<<f.Width)
			for v := range sf.ends {
				sf.digits = strconv.AppendInt(sf.digits, int64(v), 10)
				sf.ends[v] = uint16(len(sf.digits)) // at most 4,096 × 4 digits
			}
		}
		e.fields = append(e.fields, sf)
	}
	tick, epoch := l.TickTime(1).Sub(l.TickTime(0)), l.TickTime(0)
	if tick%time.Millisecond == 0 && epoch.Nanosecond()%int(time.Millisecond) == 0 {
		e.msTick, e.epochMs = int64(tick/time.Millisecond), epoch.UnixMilli()
	}
	return e
}

// appendText appends id's canonical text.
func (e *idEncoder) appendText(b []byte, id idgen.ID) []byte {
	if e.sf {
		v, _ := id.Uint64()
		return appendUint(b, v)
	}
	b, _ = id.AppendText(b)
	return b
}

// appendIDs appends ids as text lines or as JSON objects separated by
// commas; first says whether ids open the array (no comma before them).
func (e *idEncoder) appendIDs(b []byte, ids []idgen.ID, text, first bool) []byte {
	if text {
		for _, id := range ids {
			b = e.appendText(b, id)
			b = append(b, '\n')
		}
		return b
	}
	for i, id := range ids {
		if i > 0 || !first {
			b = append(b, ',')
		}
		b = e.appendObject(b, id)
	}
	return b
}

// appendObject appends id as {"value_string":...,"value_hex":...,"breakdown":{...}}.
func (e *idEncoder) appendObject(b []byte, id idgen.ID) []byte {
	if e.sf {
		v, _ := id.Uint64()
		if e.seq >= 0 {
			return e.appendFromTemplate(b, v)
		}
		return e.appendSnowflake(b, v)
	}
	b = append(b, `{"value_string":"`...)
	start := len(b)
	b, _ = id.AppendText(b)
	if needsEscape(b[start:]) {
		text := string(b[start:])
		b = appendJSONString(b[:start-1], text)
		b = append(b, `,"value_hex":"`...)
	} else {
		b = append(b, `","value_hex":"`...)
	}
	b = hex.AppendEncode(b, id.Bytes())
	b = append(b, `","breakdown":{`...)
	first := true
	if t := id.Time(); !t.IsZero() {
		b = append(b, `"timestamp_ms":`...)
		b = strconv.AppendInt(b, t.UnixMilli(), 10)
		first = false
	}
	for _, f := range e.scheme.Decompose(id) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, f.Name)
		b = append(b, ':')
		if f.Bits > 53 { // beyond a double's exact integers: a string
			b = append(b, '"')
			b = appendUint(b, f.Value)
			b = append(b, '"')
		} else {
			b = appendUint(b, f.Value)
		}
	}
	return append(b, "}}"...)
}

// appendSnowflake appends the object of the Snowflake ID v, formatting
// each part.
func (e *idEncoder) appendSnowflake(b []byte, v uint64) []byte {
	b = append(b, `{"value_string":"`...)
	b = appendUint(b, v)
	b = append(b, `","value_hex":"`...)
	b = appendHex64(b, v)
	b = e.appendTimestamp(append(b, `","breakdown":{"timestamp_ms":`...), e.time.Value(v))
	return append(e.appendFields(b, v, e.fields), "}}"...)
}

// appendTimestamp appends the timestamp_ms of tick, formatted once per
// tick (lastTS).
func (e *idEncoder) appendTimestamp(b []byte, tick uint64) []byte {
	if t := e.lastTS.Load(); t != nil && t.tick == tick {
		return append(b, t.text...)
	}
	start := len(b)
	if e.msTick != 0 {
		b = strconv.AppendInt(b, e.epochMs+int64(tick)*e.msTick, 10)
	} else {
		b = strconv.AppendInt(b, e.l.TickTime(int64(tick)).UnixMilli(), 10)
	}
	e.lastTS.Store(&tickText{tick: tick, text: bytes.Clone(b[start:])})
	return b
}

// appendFields appends `,"key":value` for each of fields, by v.
func (e *idEncoder) appendFields(b []byte, v uint64, fields []sfField) []byte {
	for i := range fields {
		b = fields[i].appendValue(append(b, fields[i].key...), v)
	}
	return b
}

// appendValue appends f's value in v, from the table when f has one.
func (f *sfField) appendValue(b []byte, v uint64) []byte {
	if f.ends != nil {
		return append(b, f.text(f.Value(v))...)
	}
	return appendUint(b, f.Value(v))
}

// An idTemplate is the text of the Snowflake IDs that differ from key in
// their sequence alone (one tick of one node): text[:dec] is
// `{"value_string":"` and key's digits, text[dec:hex] the value_hex of
// key, text[hex:mid] the breakdown up to the sequence's value, text[mid:]
// what follows it.
type idTemplate struct {
	key           uint64
	text          []byte
	dec, hex, mid int
}

// appendFromTemplate appends the object of v as appendSnowflake does, but
// from the template of v's tick and node (made once per tick): key's
// digits with the sequence added in place, key's hex digits with those
// the sequence reaches written anew, the template's breakdown around the
// sequence's value. When the sum carries past the
// first digit (key 999...), it formats v in full.
func (e *idEncoder) appendFromTemplate(b []byte, v uint64) []byte {
	sq := &e.fields[e.seq]
	key := v &^ (sq.Mask << sq.Shift)
	t := e.tmpl.Load()
	if t == nil || t.key != key {
		t = e.template(key)
		e.tmpl.Store(t)
	}
	start := len(b)
	b = append(b, t.text[:t.dec]...)
	if !addDecimal(b[start+len(`{"value_string":"`):], v-key) {
		return e.appendSnowflake(b[:start], v)
	}
	b = append(b, t.text[t.dec:t.hex]...)
	for i, x := len(b)-1, v; i >= len(b)-e.seqHex; i, x = i-1, x>>4 { // the hex digits the sequence's bits reach
		b[i] = hexDigits[x&0xf]
	}
	b = sq.appendValue(append(b, t.text[t.hex:t.mid]...), v)
	return append(b, t.text[t.mid:]...)
}

// template returns the idTemplate of key, whose sequence is 0.
func (e *idEncoder) template(key uint64) *idTemplate {
	t := &idTemplate{key: key}
	b := appendUint(append(make([]byte, 0, 256), `{"value_string":"`...), key)
	t.dec = len(b)
	b = appendHex64(append(b, `","value_hex":"`...), key)
	t.hex = len(b)
	b = e.appendTimestamp(append(b, `","breakdown":{"timestamp_ms":`...), e.time.Value(key))
	b = append(e.appendFields(b, key, e.fields[:e.seq]), e.fields[e.seq].key...)
	t.mid = len(b)
	t.text = append(e.appendFields(b, key, e.fields[e.seq+1:]), "}}"...)
	return t
}

// addDecimal adds x to the decimal digits d in place and reports whether
// the sum fits in as many digits.
func addDecimal(d []byte, x uint64) bool {
	for i := len(d) - 1; x > 0; i-- {
		if i < 0 {
			return false
		}
		s := uint64(d[i]-'0') + x%10
		x /= 10
		if s >= 10 {
			s -= 10
			x++
		}
		d[i] = byte('0' + s)
	}
	return true
}

func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

const hexDigits = "0123456789abcdef"

// appendHex64 appends v as 16 lowercase hex digits.
func appendHex64(b []byte, v uint64) []byte {
	var buf [16]byte
	for i := 15; i >= 0; i-- {
		buf[i] = hexDigits[v&0xf]
		v >>= 4
	}
	return append(b, buf[:]...)
}

// needsEscape reports whether s cannot sit in a JSON string as it is.
func needsEscape(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
