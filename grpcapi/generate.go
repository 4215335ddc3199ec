package grpcapi

// The generated code in idgenv1 is checked in. To regenerate it after
// editing proto/idgen/v1/idgen.proto, install protoc (Debian: apt-get
// install protobuf-compiler) and run go generate ./grpcapi/; the script
// pins protoc-gen-go and protoc-gen-go-grpc to go.mod's versions.
//go:generate ../proto/generate.sh
