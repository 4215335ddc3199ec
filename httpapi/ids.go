package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/serving"
)

// query is what /ids accepts: count and format.
type query struct {
	count int
	text  bool
}

// parseQuery reads count (1 to max, default 1) and format (json or text)
// from raw, and the Accept header when format is absent. Other keys are
// refused, so that a typo (?cout=5) does not silently give one ID.
func parseQuery(raw, accept string, max int) (query, error) {
	q := query{count: 1}
	var sawCount, sawFormat bool
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(kv, "%+") {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				return q, fmt.Errorf("query parameter %q is not valid percent-encoding", clip(kv))
			}
			if v, err = url.QueryUnescape(v); err != nil {
				return q, fmt.Errorf("query parameter %q is not valid percent-encoding", clip(kv))
			}
		}
		switch k {
		case "count":
			if sawCount {
				return q, errors.New("count given twice")
			}
			sawCount = true
			n, err := parseCount(v, max)
			if err != nil {
				return q, err
			}
			q.count = n
		case "format":
			if sawFormat {
				return q, errors.New("format given twice")
			}
			sawFormat = true
			switch v {
			case "json":
			case "text":
				q.text = true
			default:
				return q, fmt.Errorf("format %q: want json or text", clip(v))
			}
		default:
			return q, fmt.Errorf("unknown query parameter %q; allowed: count, format", clip(k))
		}
	}
	if !sawFormat && accept != "" {
		q.text = prefersText(accept)
	}
	return q, nil
}

// parseCount reads a decimal count in [1, max].
func parseCount(v string, max int) (int, error) {
	if v == "" {
		return 0, fmt.Errorf("count is empty; want an integer from 1 to %d", max)
	}
	n, neg, digits := 0, false, v
	if digits[0] == '-' || digits[0] == '+' {
		neg, digits = digits[0] == '-', digits[1:]
	}
	if digits == "" {
		return 0, fmt.Errorf("count %q is not an integer; want 1 to %d", clip(v), max)
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("count %q is not an integer; want 1 to %d", clip(v), max)
		}
		if n <= max { // stop growing once out of range; the digits are still checked
			n = n*10 + int(c-'0')
		}
	}
	if neg && n != 0 {
		return 0, fmt.Errorf("count %s outside [1, %d]", clip(v), max)
	}
	if n < 1 || n > max {
		return 0, fmt.Errorf("count %s outside [1, %d]", clip(v), max)
	}
	return n, nil
}

// prefersText reports whether an Accept header ranks text/plain above
// application/json: the first of the two listed wins, and */* or nothing
// of either means JSON. Quality values are not weighed.
func prefersText(accept string) bool {
	for accept != "" {
		var mr string
		mr, accept, _ = strings.Cut(accept, ",")
		mt, _, _ := strings.Cut(mr, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/plain":
			return true
		case "application/json", "*/*", "application/*":
			return false
		}
	}
	return false
}

// ChunkIDs is how many IDs a response takes from the generator and writes
// at a time. A count up to ChunkIDs is issued whole before the status line,
// and answered with a Content-Length; a larger count is streamed (chunked
// transfer), so that the memory a request holds does not grow with its
// count: about ChunkIDs IDs and their text (some 200 KB of JSON).
const ChunkIDs = 1024

// serveIDs issues q.count IDs of g and answers them as JSON or text, one
// chunk of ChunkIDs at a time. Options.Timeout bounds the time spent
// waiting for IDs, summed over the chunks; writing to the client does not
// count. Options.WriteTimeout is given to each chunk's write. The first
// chunk is issued before the status line, so that an issue failing at once
// gets its error status. A failure after the status line (the generator
// fails, the client is gone or reads a chunk slower than the write
// timeout) ends the response without its last chunk: the client sees a cut
// transfer, never a body that looks whole.
func (h *Handler) serveIDs(w http.ResponseWriter, r *http.Request, st *reqState, g *genRoute) {
	var accept string
	if v := r.Header["Accept"]; len(v) > 0 { // the canonical key: no Get, no canonicalisation
		accept = v[0]
	}
	q, err := parseQuery(r.URL.RawQuery, accept, h.maxCount)
	if err != nil {
		h.writeError(w, st, serving.ClassOf(serving.KindInvalid).HTTP, err.Error())
		return
	}
	if r.Method == http.MethodHead {
		ctx := r.Context()
		if h.timeout > 0 {
			dc := &st.dl
			dc.Reset(ctx, st.start.Add(h.timeout))
			defer dc.Release()
			ctx = dc
		}
		h.headIDs(ctx, w, st, g, q)
		return
	}
	if q.count > ChunkIDs && !r.ProtoAtLeast(1, 1) {
		// HTTP/1.0 has no chunked transfer: a response cut short would end
		// as a whole one does, at the connection's close.
		h.writeError(w, st, http.StatusHTTPVersionNotSupported, fmt.Sprintf(
			"count %d above %d needs HTTP/1.1 or later (chunked transfer), so that a cut response cannot pass for a whole one", q.count, ChunkIDs))
		return
	}
	if q.count > ChunkIDs {
		// A streamed answer commits to 200 after its first chunk: a
		// generator that can tell says now whether the whole count can be
		// had, so that a request it cannot serve draws nothing.
		if a, ok := as[availability](g.gen); ok {
			if err := a.Available(int64(q.count)); err != nil {
				h.issueError(w, st, g, err)
				return
			}
		}
	}
	is := issuer{h: h, ctx: r.Context(), g: g, start: st.start, dl: &st.dl}
	n := min(q.count, ChunkIDs)
	if cap(st.ids) < n {
		st.ids = make([]idgen.ID, n, max(n, 16))
	}
	ids := st.ids[:n]
	if err := is.issue(ids); err != nil {
		h.issueError(w, st, g, err)
		return
	}
	ct := ctJSON
	if q.text {
		ct = ctText
	}
	b := st.buf[:0]
	if !q.text {
		b = append(b, `{"ids":[`...)
	}
	b = g.enc.appendIDs(b, ids, q.text, true)
	left := q.count - n
	if left == 0 {
		h.write(w, st, http.StatusOK, ct, h.appendEnd(b, st, q.text))
		return
	}
	is.stream()
	hdr := w.Header()
	hdr["Content-Type"] = ct
	hdr["Cache-Control"] = noStore
	hdr["X-Content-Type-Options"] = nosniff
	st.code, st.wrote = http.StatusOK, true
	w.WriteHeader(http.StatusOK)
	var rc *http.ResponseController
	if h.writeTO > 0 {
		rc = http.NewResponseController(w)
	}
	for {
		if rc != nil {
			rc.SetWriteDeadline(time.Now().Add(h.writeTO)) // an error: a writer without deadlines; the server's stands
		}
		if _, err := w.Write(b); err != nil { // the client is gone, or too slow for the write timeout
			st.buf, st.abort = b, true
			return
		}
		if left == 0 {
			st.buf = b
			return
		}
		n = min(left, ChunkIDs)
		ids = st.ids[:n]
		if err := is.issue(ids); err != nil {
			h.countIssueError(g, err)
			st.buf, st.abort = b, true
			return
		}
		left -= n
		b = g.enc.appendIDs(b[:0], ids, q.text, false)
		if left == 0 {
			b = h.appendEnd(b, st, q.text)
		}
	}
}

// appendEnd closes a response's body.
func (h *Handler) appendEnd(b []byte, st *reqState, text bool) []byte {
	if text {
		return b
	}
	return append(b, h.stamp(st.start)...)
}

// A stampText is the end of a JSON answer for one second:
// `],"generated_at":"2026-06-01T11:07:00Z"}` and a newline.
type stampText struct {
	sec  int64
	text []byte
}

// stamp returns the end of a JSON answer generated at t: formatted once
// per second and shared, as the answers of a second all end alike.
func (h *Handler) stamp(t time.Time) []byte {
	sec := t.Unix()
	if s := h.stamps.Load(); s != nil && s.sec == sec {
		return s.text
	}
	b := append(make([]byte, 0, 48), `],"generated_at":"`...)
	b = t.UTC().AppendFormat(b, time.RFC3339)
	s := &stampText{sec: sec, text: append(b, "\"}\n"...)}
	h.stamps.Store(s)
	return s.text
}

// availability is a generator that issues from IDs it holds and can tell,
// without waiting or drawing, whether n can be had now (a
// segment.Allocator: nil, or ErrUnavailable while its store fails and it
// holds fewer).
type availability interface{ Available(n int64) error }

// issuer issues one request's chunks within Options.Timeout, summed over
// the chunks: the time from the request's arrival to the first chunk's IDs,
// then each later chunk's wait for its IDs. The first chunk reads no clock
// (its deadline is the arrival's plus the timeout): the hot path of small
// requests stays as it was.
type issuer struct {
	h         *Handler
	ctx       context.Context
	g         *genRoute
	start     time.Time         // the request's arrival
	dl        *serving.Deadline // the request's, reset for each chunk
	streaming bool              // past the first chunk
	spent     time.Duration     // of Options.Timeout, once streaming
}

func (is *issuer) issue(ids []idgen.ID) error {
	ctx := is.ctx
	var t0 time.Time
	if is.h.timeout > 0 {
		deadline := is.start.Add(is.h.timeout)
		if is.streaming {
			t0 = time.Now()
			deadline = t0.Add(is.h.timeout - is.spent)
		}
		dc := is.dl
		dc.Reset(ctx, deadline)
		defer dc.Release()
		ctx = dc
	}
	_, err := idgen.NextN(ctx, is.g.gen, ids)
	if is.streaming && is.h.timeout > 0 {
		is.spent += time.Since(t0)
	}
	if err == nil {
		is.g.issued.Add(uint64(len(ids)))
	}
	return err
}

// stream marks the first chunk issued: from here each chunk has what the
// earlier ones left of Options.Timeout.
func (is *issuer) stream() {
	is.streaming = true
	if is.h.timeout > 0 {
		is.spent = time.Since(is.start)
	}
}

// headIDs answers HEAD for q: the status and headers a GET would get,
// issuing nothing. A generator with a Readier (idgen.ReadyOf) is asked whether it can issue, and
// its error answered as a GET's would be; any other generator is taken to
// be able to.
func (h *Handler) headIDs(ctx context.Context, w http.ResponseWriter, st *reqState, g *genRoute, q query) {
	if r, ok := idgen.ReadyOf(g.gen); ok {
		if err := r.Ready(ctx); err != nil {
			h.issueError(w, st, g, err)
			return
		}
	}
	ct := ctJSON
	if q.text {
		ct = ctText
	}
	h.write(w, st, http.StatusOK, ct, st.buf[:0])
}

// Kinds of issuing errors, counted per generator: serving's, whose
// classes give the status.
const numErrKinds = int(serving.NumIssueKinds)

var errKindNames = serving.KindNames

// countIssueError counts and logs a failed issue and returns its answer
// (serving.Classify).
func (h *Handler) countIssueError(g *genRoute, err error) serving.Answer {
	a := serving.Classify(err)
	g.errs[a.Kind].Add(1)
	if errors.As(err, new(*idgen.ClockRollbackError)) {
		g.rollbackFailures.Add(1)
	}
	h.log.Error("httpapi: issuing IDs failed", "generator", g.name, "kind", errKindNames[a.Kind], "status", a.Class.HTTP, "err", err)
	return a
}

// issueError answers a failed issue: nothing of the request is sent. A
// class with a retry (a 503 but for a clock outside the layout's lifetime,
// which waiting does not mend) carries Retry-After, in whole seconds.
func (h *Handler) issueError(w http.ResponseWriter, st *reqState, g *genRoute, err error) {
	a := h.countIssueError(g, err)
	if a.Class.Retry {
		secs := (a.Retry + time.Second - 1) / time.Second
		w.Header()["Retry-After"] = []string{itoa(int(secs))}
	}
	h.writeError(w, st, a.Class.HTTP, fmt.Sprintf("generator %q: %s", g.name, a.Msg))
}

// serveDecode answers the breakdown of text, an ID of g's scheme, checked
// as gRPC's Decode checks it (serving.Decode).
func (h *Handler) serveDecode(w http.ResponseWriter, st *reqState, g *genRoute, text string) {
	id, err := serving.Decode(g.scheme, g.name, text)
	if err != nil {
		a := serving.Classify(err)
		h.writeError(w, st, a.Class.HTTP, a.Msg)
		return
	}
	b := g.enc.appendObject(st.buf[:0], id)
	h.write(w, st, http.StatusOK, ctJSON, append(b, '\n'))
}

// serveReady checks every generator, in name order, and answers 503 naming
// the first that cannot issue.
func (h *Handler) serveReady(w http.ResponseWriter, r *http.Request, st *reqState) {
	if h.draining.Load() {
		h.writeError(w, st, http.StatusServiceUnavailable, "shutting down: finishing requests in flight")
		return
	}
	for _, name := range h.names {
		g := h.gens[name]
		ctx, cancel := context.WithTimeout(r.Context(), h.readyTO)
		err := ready(ctx, g.gen)
		cancel()
		if err != nil {
			msg := fmt.Sprintf("generator %q not ready: %v", name, err)
			gs, _ := idgen.StatsOf(g.gen)
			if words := behindWords(gs); words != "" {
				msg += "; " + words
			}
			h.log.Warn("httpapi: generator not ready", "generator", name, "err", err)
			h.writeError(w, st, http.StatusServiceUnavailable, msg)
			return
		}
	}
	h.write(w, st, http.StatusOK, ctJSON, h.appendClocks(append(st.buf[:0], `{"status":"ready"`...)))
}

// appendClocks appends the clock details of the generators that report them
// (drift and ahead, in seconds) as a "generators" member, and closes the
// object.
func (h *Handler) appendClocks(b []byte) []byte {
	n := 0
	for _, name := range h.names {
		st, _ := idgen.StatsOf(h.gens[name].gen)
		if !st.Has(idgen.StatsClock) {
			continue
		}
		if n == 0 {
			b = append(b, `,"generators":{`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, name)
		b = append(b, ":{"...)
		b = append(b, `"clock_drift_seconds":`...)
		b = strconv.AppendFloat(b, st.Drift.Seconds(), 'g', -1, 64)
		b = append(b, `,"clock_ahead_seconds":`...)
		b = strconv.AppendFloat(b, st.Ahead.Seconds(), 'g', -1, 64)
		if words := behindWords(st); words != "" {
			b = append(b, `,"behind_high_water_seconds":`...)
			b = strconv.AppendFloat(b, st.BehindHighWater.Seconds(), 'g', -1, 64)
			b = append(b, `,"high_water":`...)
			b = appendJSONString(b, words)
		}
		b = append(b, '}')
	}
	if n > 0 {
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

// behindWords says, when st's clock is behind the high-water mark it read
// at start or at a new lease identity, by how much and until when; else
// it returns "".
func behindWords(st idgen.Stats) string {
	if st.BehindHighWater <= 0 {
		return ""
	}
	return BehindHighWaterWords(st.BehindHighWater, st.HighWater)
}

// BehindHighWaterWords states a clock behind the high-water mark in
// words, as /readyz and `idgen inspect` do: "the clock is behind the
// high-water mark by 562ms (after a restart, or a worker ID taken over):
// IDs wait, fail or run ahead of the clock by rollback= until
// 2026-11-22T22:46:54.968Z".
func BehindHighWaterWords(behind time.Duration, mark time.Time) string {
	if behind >= time.Millisecond {
		behind = behind.Round(time.Millisecond)
	}
	return fmt.Sprintf("the clock is behind the high-water mark by %v (after a restart, or a worker ID taken over): "+
		"IDs wait, fail or run ahead of the clock by rollback= until %s", behind, mark.UTC().Format(time.RFC3339Nano))
}

// ready asks g whether it can issue: idgen.ReadyOf's Ready, else one
// call to Next whose ID is dropped (a gap, never a duplicate).
func ready(ctx context.Context, g idgen.Generator) error {
	if r, ok := idgen.ReadyOf(g); ok {
		return r.Ready(ctx)
	}
	_, err := g.Next(ctx)
	return err
}

// serveGenerators lists the generators and their schemes.
func (h *Handler) serveGenerators(w http.ResponseWriter, st *reqState) {
	b := append(st.buf[:0], `{"default":`...)
	b = appendJSONString(b, h.def.name)
	b = append(b, `,"generators":[`...)
	for i, name := range h.names {
		g := h.gens[name]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, name)
		b = append(b, `,"scheme":`...)
		b = appendJSONString(b, g.scheme.Name)
		b = append(b, `,"size":`...)
		b = appendUint(b, uint64(g.scheme.Size))
		b = append(b, `,"time_ordered":`...)
		b = fmt.Appendf(b, "%t", g.scheme.TimeOrdered)
		if g.enc.layout != "" {
			b = append(b, `,"layout":`...)
			b = appendJSONString(b, g.enc.layout)
		}
		b = append(b, `,"path":`...)
		b = appendJSONString(b, apiPrefix+name+"/ids")
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	h.write(w, st, http.StatusOK, ctJSON, b)
}
