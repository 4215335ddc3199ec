package strategies

import (
	"crypto/rand"
	mrand "math/rand/v2"
	"sync"
)

// entropyBufSize is how many bytes of crypto/rand one refill reads: one
// getrandom call serves 128 UUIDs. Here a 16-byte crypto/rand read costs
// about 140 ns and a 2 KiB read about 2.2 ns a byte, so batching saves
// about 100 ns per 16-byte ID.
const entropyBufSize = 2048

// cryptoSource hands out crypto/rand bytes from a buffer refilled in one
// read when empty; each byte is handed out once. It is not safe for
// concurrent use: its owner's mutex guards it.
type cryptoSource struct {
	pos int
	buf [entropyBufSize]byte
}

// Read fills p with random bytes; crypto/rand's Read never fails.
func (c *cryptoSource) Read(p []byte) (int, error) {
	if len(p) > entropyBufSize {
		rand.Read(p)
		return len(p), nil
	}
	if entropyBufSize-c.pos < len(p) {
		rand.Read(c.buf[:])
		c.pos = 0
	}
	n := copy(p, c.buf[c.pos:])
	clear(c.buf[c.pos : c.pos+n]) // a leaked buffer holds nothing issued
	c.pos += n
	return n, nil
}

// entropy is a cryptoSource with a mutex of its own.
type entropy struct {
	mu  sync.Mutex
	src cryptoSource
}

func newEntropy() *entropy { return &entropy{src: cryptoSource{pos: entropyBufSize}} }

// Read fills p with random bytes. It implements io.Reader and never fails.
func (e *entropy) Read(p []byte) (int, error) {
	e.mu.Lock()
	n, _ := e.src.Read(p)
	e.mu.Unlock()
	return n, nil
}

// fillLocked is Read for a caller that holds a lock of its own guarding e
// and never calls Read.
func (e *entropy) fillLocked(p []byte) { e.src.Read(p) }

// chachaSource is a ChaCha8 stream (math/rand/v2: a cryptographically
// strong generator, here seeded from crypto/rand) with the Int63n that
// oklog/ulid's MonotonicEntropy uses for its increments. It serves ULID,
// where a crypto/rand byte per 2.2 ns would cost 10 % of the ID. Not safe
// for concurrent use: its owner's mutex guards it.
type chachaSource struct{ c *mrand.ChaCha8 }

func newChaChaSource() chachaSource {
	var seed [32]byte
	rand.Read(seed[:])
	return chachaSource{mrand.NewChaCha8(seed)}
}

// Read fills p with random bytes; it never fails.
func (s chachaSource) Read(p []byte) (int, error) { return s.c.Read(p) }

// Int63n returns a uniform random value in [0, n), n > 0.
func (s chachaSource) Int63n(n int64) int64 {
	limit := uint64(1<<63) - uint64(1<<63)%uint64(n)
	for {
		if v := s.c.Uint64() >> 1; v < limit {
			return int64(v % uint64(n))
		}
	}
}
