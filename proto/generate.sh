#!/bin/sh
# Regenerates grpcapi/idgenv1 from proto/idgen/v1/idgen.proto.
# Needs protoc (Debian: apt-get install protobuf-compiler). The Go plugins come
# from the Go module proxy at the versions matching go.mod:
# protoc-gen-go = google.golang.org/protobuf's version, protoc-gen-go-grpc v1.6.2.
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
GOBIN=$bin go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
protoc -I proto \
	--plugin=protoc-gen-go="$bin/protoc-gen-go" --go_out=. --go_opt=module=github.com/idgenkit/idgen \
	--plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" --go-grpc_out=. --go-grpc_opt=module=github.com/idgenkit/idgen \
	proto/idgen/v1/idgen.proto
