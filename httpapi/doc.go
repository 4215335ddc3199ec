// Package httpapi serves idgen generators over HTTP. A Handler is an
// http.Handler that users mount in their own server; "idgen serve" runs one.
//
// Routes (GET or HEAD; any request body is ignored). HEAD of an /ids route
// answers the status and headers a GET would (a 400 for a bad count, a 503
// when the generator's idgen.Readier, found by idgen.ReadyOf, says it
// cannot issue) and issues no ID:
//
//	/api/v1/ids?count=N          N IDs (1 ≤ N ≤ Options.MaxCount, default 1) of the default generator
//	/api/v1/ids/{id}             an ID of the default generator's scheme, decoded
//	/api/v1/{name}/ids?count=N   N IDs of the named generator
//	/api/v1/{name}/ids/{id}      an ID of the named generator's scheme, decoded
//	/api/v1/generators           the generators served, their schemes and which is the default
//	/api/v1/openapi.json         the OpenAPI 3 document of this API
//	/healthz                     200 while the process serves HTTP
//	/readyz                      200 when every generator can issue, 503 otherwise and after Shutdown
//	/metrics                     Prometheus metrics
//
// IDs are answered as JSON (the service contract of DESIGN.md):
//
//	{"ids":[{"value_string":"178294819283726336","value_hex":"02798e94a8c1f000",
//	  "breakdown":{"timestamp_ms":1780416300000,"datacenter_id":4,"worker_id":18,"sequence_number":0}}],
//	 "generated_at":"2026-06-01T11:07:00Z"}
//
// value_string is the scheme's canonical text (decimal for 64-bit schemes;
// always a JSON string, since values above 2^53-1 do not survive
// JavaScript's doubles). value_hex is the ID's bytes in lowercase hex: 16
// digits for 64-bit schemes, 32 for UUIDs and ULIDs. The breakdown of a
// Snowflake layout has timestamp_ms (the start of the ID's tick, Unix ms),
// one <name>_id per node field (datacenter_id, worker_id, shard_id, ...),
// sequence_number, and random when the layout has a random field; other
// schemes give timestamp_ms when they carry a time, then their fields by
// name (numbers up to 53 bits, strings above). generated_at is RFC 3339 UTC.
//
// With ?format=text, or an Accept header that prefers text/plain, the IDs
// come as bare canonical text, one per line: the fast path for bulk.
//
// Errors are JSON, {"error": "..."}, naming the input at fault (cut to
// about 64 bytes, here and in the log): 400 for a bad count or format, or
// an ID that is not of the generator's scheme (for uuidv4 and uuidv7, a UUID
// of another version), 404 for an unknown route or generator, 405 for a
// method other than GET or HEAD, 503 when the generator cannot issue (clock
// rollback, lost worker lease, store down: with Retry-After; a clock outside
// the layout's lifetime, before its epoch or past its end: without), 500
// otherwise.
// A panic in the handler is recovered, logged, and answered 500.
//
// A count up to ChunkIDs (1,024) is issued whole before the status line: a
// request that fails gets its error status and issues nothing. A larger
// count is streamed, ChunkIDs at a time, with chunked transfer, so that a
// request's memory does not grow with its count (about 0.2 MB of JSON per
// chunk; TestStreamLarge: count=200,000 grows the heap by 0.8 MB, and a
// million by 0.7 MB when measured, where building the answer whole had
// taken 502 MB). Options.Timeout then bounds
// the time spent waiting for IDs, summed over the chunks, and
// Options.WriteTimeout is given to each chunk's write rather than to the
// whole response. A failure after the first chunk (the generator fails
// mid-stream, the client reads a chunk slower than the write timeout) ends
// the response without its terminating chunk: the client's read fails
// (unexpected EOF), and a short body never passes for a whole one; the IDs
// sent are lost, a gap, never a duplicate. HTTP/1.0, which has no chunked
// transfer, gets 505 for a count above ChunkIDs. A generator that can tell
// whether a count can be had now without waiting (an Available(n int64)
// error method: a segment.Allocator, which says no while its store fails
// and it holds fewer) is asked before a count above ChunkIDs streams: a
// request it cannot serve gets 503 and draws nothing.
package httpapi
