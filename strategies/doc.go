// Package strategies builds any idgen.Generator from a one-line spec,
//
//	name?key=value&key=value
//
// such as "snowflake?preset=twitter&worker=7" or "uuidv7". A Spec is the
// parsed form (ParseSpec, MustParse, Get, With, String), with one escaping
// rule. Each strategy declares its keys; an unknown name, key or value is
// refused with a *SpecError that names the key and lists the valid ones.
// List feeds help output.
//
// The package reads no environment: Options carry what a spec does not
// (the worker ID override idgen's CLI reads from IDGEN_WORKER_ID, the keys
// of public IDs). A generator built over a worker source (worker_source)
// owns it and closes it in Close. Config files live in package
// strategies/config.
package strategies
