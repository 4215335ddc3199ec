package workerid

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"net"
	"os"

	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/errclass"
)

// DefaultIPBits is the number of low address bits IP takes when the URL
// names none: Sonyflake's 16, or fewer where the layout's field is smaller.
const DefaultIPBits = 16

// MinIPBits is the fewest low address bits IP accepts: the hosts of a /24
// differ only in the last 8.
const MinIPBits = 8

// ErrNotPrivate reports an address IP refuses: no private IPv4 address
// (RFC 1918: 10/8, 172.16/12, 192.168/16) on any interface.
var ErrNotPrivate = errclass.Unavailable("workerid: no private IPv4 address")

// A Warner is a Source that carries a warning for the operator: a worker ID
// that may collide with another node's. internal/cli prints it.
type Warner interface {
	// Warning returns the warning, or "" for none.
	Warning() string
}

// Warning returns the source's warning for the operator, "" for none.
func (s *Static) Warning() string { return s.warning }

// fieldBits returns the bits of the space's worker field: log2 of Workers,
// rounded down.
func (s Space) fieldBits() int { return bits.Len64(uint64(s.max()+1)) - 1 }

// IP returns a Static source of the low n bits of the first private IPv4
// address among addrs (nil means the machine's interfaces, in their
// order), as Sonyflake's default does; n = 0 means min(DefaultIPBits, the
// worker field's bits). Two nodes whose addresses share the low n bits get
// the same worker ID: it is safe only on a fixed network where that cannot
// happen, never for a dynamic fleet (Kubernetes pods, CGNAT), where a lease
// is. Errors: n outside [MinIPBits, the field's bits] or a field smaller
// than MinIPBits wraps ErrConfig; no private address, ErrNotPrivate.
func IP(n int, addrs []net.Addr, space Space) (*Static, error) {
	field := space.fieldBits()
	if n == 0 {
		n = min(DefaultIPBits, field)
	}
	if field < MinIPBits {
		return nil, fmt.Errorf("%w: ip: the worker field has %d bits, fewer than the %d the hosts of a /24 need; use a lease", ErrConfig, field, MinIPBits)
	}
	if n < MinIPBits || n > field {
		return nil, fmt.Errorf("%w: ip:%d: want %d to %d address bits (the worker field has %d)", ErrConfig, n, MinIPBits, field, field)
	}
	if addrs == nil {
		var err error
		if addrs, err = net.InterfaceAddrs(); err != nil {
			return nil, fmt.Errorf("workerid: listing the interfaces' addresses: %w", err)
		}
	}
	var seen []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip4 := ipn.IP.To4()
		if ip4 == nil || ip4.IsLoopback() {
			continue
		}
		if !ip4.IsPrivate() {
			seen = append(seen, ip4.String())
			continue
		}
		v := uint64(ip4[0])<<24 | uint64(ip4[1])<<16 | uint64(ip4[2])<<8 | uint64(ip4[3])
		return NewStatic(int64(v&(1<<n-1)), space)
	}
	return nil, fmt.Errorf("%w (RFC 1918) on any interface; found %v", ErrNotPrivate, seen)
}

// HostnameHash returns a Static source of a 64-bit FNV-1a hash of hostname
// (empty means os.Hostname) modulo the space, with a warning (Warning) that
// two hosts may collide. acceptCollisions must be true: the caller opts in
// explicitly, since k hosts in a space of N IDs share an ID with
// probability about k²/2N (a third for 32 hosts in 1024 IDs). Never safe
// for a dynamic fleet; use a lease. Errors: no opt-in wraps ErrConfig.
func HostnameHash(hostname string, acceptCollisions bool, space Space) (*Static, error) {
	if !acceptCollisions {
		return nil, fmt.Errorf("%w: hostname-hash can give two hosts the same worker ID; opt in with hostname-hash?accept_collisions=true, or use a lease", ErrConfig)
	}
	if hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("workerid: reading the hostname: %w", err)
		}
		hostname = h
	}
	f := fnv.New64a()
	f.Write([]byte(hostname))
	n := space.max() + 1
	s, err := NewStatic(int64(f.Sum64()%uint64(n)), space)
	if err != nil {
		return nil, err
	}
	k := math.Sqrt(2 * float64(n) * 0.01) // hosts at a 1% collision chance
	s.warning = fmt.Sprintf("idgen: worker ID %d is a hash of hostname %q into %d IDs: two hosts can get the same ID and issue duplicate IDs "+
		"(a 1%% chance from about %.0f hosts); not safe for a dynamic fleet, use a lease (postgres://, mysql://, etcd://, zk://)",
		s.ident.WorkerID, echo.Cut(hostname), n, math.Max(k, 2))
	return s, nil
}
