//go:build linked

package main

// Built with -tags linked, the floor links every package idgen serve
// links, and so runs their package initialisation: the same live heap
// (protobuf descriptors of gRPC and etcd, gonum/plot's fonts) for the
// collector to mark at each cycle, with the floor's handler. Against it,
// bench/serve-load.sh (LINKED=1, which runs it beside the plain floor)
// measures idgen serve's own work apart from what linking those libraries
// costs any Go server.
import _ "github.com/idgenkit/idgen/internal/cli"
