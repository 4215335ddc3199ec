package testenv

import (
	"net"
	"sync"
	"testing"
	"time"
)

// A Link forwards TCP connections from 127.0.0.1:random to one server and
// can delay every chunk (latency, each way) or hold the path: a partition,
// not a reset (Proxy.Cut resets). While held, connections stay open and
// new ones are accepted, but nothing is delivered; after it heals what was
// sent arrives, as TCP retransmits it after a partition. To a client, a
// held server is one frozen with SIGSTOP.
type Link struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	cut    bool
	delay  time.Duration // added to each direction
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewLink starts a Link to target (host:port), closed when the test ends.
func NewLink(t testing.TB, target string) *Link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("link listen: %v", err)
	}
	p := &Link{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	return p
}

// Addr is the link's host:port.
func (p *Link) Addr() string { return p.ln.Addr().String() }

// Hold cuts (true) or heals (false) the path.
func (p *Link) Hold(cut bool) {
	p.mu.Lock()
	p.cut = cut
	p.mu.Unlock()
	p.cond.Broadcast()
}

// SetDelay sets the latency added to each direction of every connection.
func (p *Link) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// up waits while the path is cut; false once the Link is closed.
func (p *Link) up() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.cut && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

func (p *Link) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Link) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

func (p *Link) forward(c net.Conn) {
	defer c.Close()
	if !p.up() { // a connection opened during a cut waits for the heal, as a SYN retried
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(s) {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { p.pipe(s, c); done <- struct{}{} }()
	go func() { p.pipe(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

type chunk struct {
	b  []byte
	at time.Time // when to deliver it
}

// pipe copies src to dst, each chunk delivered its delay after it was read
// and not while the path is cut; reading goes on meanwhile (up to 64
// chunks), as the network holds packets in flight.
func (p *Link) pipe(dst, src net.Conn) {
	ch := make(chan chunk, 64)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for ck := range ch {
			if d := time.Until(ck.at); d > 0 {
				time.Sleep(d)
			}
			if !p.up() {
				return
			}
			if _, err := dst.Write(ck.b); err != nil {
				return
			}
		}
	}()
	for {
		b := make([]byte, 32<<10)
		n, err := src.Read(b)
		if n > 0 {
			p.mu.Lock()
			d := p.delay
			p.mu.Unlock()
			select {
			case ch <- chunk{b[:n], time.Now().Add(d)}:
			case <-wrote: // the writer gave up
				return
			}
		}
		if err != nil {
			close(ch)
			<-wrote
			return
		}
	}
}

func (p *Link) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cond.Broadcast()
	p.ln.Close()
	p.wg.Wait()
}
