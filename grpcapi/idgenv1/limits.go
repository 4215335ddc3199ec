package idgenv1

// The limits both ends of idgen.v1.IDService size their messages and
// windows by (package grpcapi serves them, package client asks within
// them). They live beside the generated code so that a client needs no
// server package.
const (
	// MaxMessageBytes is grpc-go's default limit on a message a client
	// receives (4 MiB, grpc.MaxCallRecvMsgSize): every message a server
	// sends fits in it, so that a stock client reads it.
	MaxMessageBytes = 4 << 20
	// MessageFraming is what MaxBatch leaves of MaxMessageBytes for the
	// message's own fields and framing.
	MessageFraming = 1 << 10
	// StreamWindow is the HTTP/2 flow-control window, in bytes, of the
	// servers and of the client's connections: a NextStream batch of
	// 10,000 64-bit IDs is 80 KB, past the 64 KiB default.
	StreamWindow = 1 << 20
)

// MaxBatch returns the most IDs of size bytes one IDBatch carries within
// MaxMessageBytes: 524,160 of 8 bytes, 262,080 of 16.
func MaxBatch(size int) int { return (MaxMessageBytes - MessageFraming) / max(size, 1) }
