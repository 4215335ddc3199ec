// Package grpcapi serves idgen generators over gRPC as idgen.v1.IDService
// (proto/idgen/v1/idgen.proto; generated code in grpcapi/idgenv1), beside
// the standard health service (grpc.health.v1, SERVING while the server
// runs) and server reflection, so that stock tools (grpcurl,
// grpc_health_probe) work. "idgen serve --grpc-addr" runs one.
//
// Methods:
//
//	Next            count IDs (1 to Options.MaxCount, at most MaxNextCount) with their breakdown
//	NextStream      packed batches (id_size bytes per ID, big-endian) until count are sent
//	Decode          an ID of a generator's scheme, taken apart
//	ListGenerators  the generators, their schemes and the default
//
// Limits and names are HTTP's, from one serving core: Options.MaxCount and
// Options.Timeout mean what they mean in httpapi.Options, and a generator
// name follows httpapi's rule ([A-Za-z0-9][A-Za-z0-9_.-]*, at most 64
// characters, not "ids", "generators" or "openapi.json"), so that one set of
// generators serves alike on both; errors map to the codes below from the
// same classes as HTTP's statuses. Every message fits in grpc-go's default 4 MiB
// (MaxMessageBytes): a Next answer holds at most MaxNextCount IDs (25,260
// of the twitter layout), a NextStream batch at most MaxBatch (524,160 IDs
// of 8 bytes), whatever batch_size asks; a stream's buffer holds min(count,
// batch) IDs, not MaxCount. Decode checks an ID as HTTP does (for a UUID
// scheme of one version, the version) and answers with HTTP's words.
// Errors map to codes: InvalidArgument for a bad count or ID (the message
// names the input, cut to about 64 bytes, and the allowed range); NotFound
// for an unknown generator;
// Unavailable for a clock rollback, a lost worker lease, a store down or
// the timeout, with an errdetails.RetryInfo saying when to retry;
// FailedPrecondition for what waiting does not mend (a clock outside the
// layout's lifetime, a biz tag exhausted); Internal otherwise. A failed Next issues nothing.
//
// Drain stops a grpc.Server built by NewGRPCServer: health NOT_SERVING
// first, then the calls and streams in flight let finish until its context
// ends, and the number it cut off returned.
//
// Metrics, registered on Options.Registry: grpc_server_handled_total,
// grpc_server_handling_seconds and the other go-grpc-middleware server
// metrics per method and code, idgen_grpc_ids_issued_total by
// generator, and the generators' own counters as httpapi exports them
// (idgen_clock_rollback_failures_total, idgen_clock_steps_total,
// idgen_layout_end_timestamp_seconds and the rest, read from each
// generator's idgen.Stats), once per registry when an httpapi.Handler
// shares it.
package grpcapi
