// Package strategies builds any idgen.Generator from a one-line spec,
//
//	name?key=value&key=value
//
// such as "snowflake?preset=twitter&worker=7" or "uuidv7". Each strategy
// declares its keys; an unknown name, key or value is refused with an error
// that lists the valid ones. List feeds help output.
//
// The environment variable IDGEN_WORKER_ID, when set, overrides the worker
// ID of every strategy that has one.
package strategies
