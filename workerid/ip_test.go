package workerid_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/idgenkit/idgen/workerid"
)

func addrs(t *testing.T, cidrs ...string) []net.Addr {
	t.Helper()
	var out []net.Addr
	for _, c := range cidrs {
		ip, n, err := net.ParseCIDR(c)
		if err != nil {
			t.Fatalf("ParseCIDR(%q) = %v", c, err)
		}
		n.IP = ip
		out = append(out, n)
	}
	return out
}

func TestIP(t *testing.T) {
	tests := []struct {
		name    string
		bits    int
		addrs   []string
		workers int64
		want    int64
		err     error
	}{
		{"low 16 bits", 0, []string{"127.0.0.1/8", "10.1.2.3/8"}, 1 << 16, 2<<8 | 3, nil},
		{"default shrinks to the field", 0, []string{"192.168.7.200/24"}, 1024, (7<<8 | 200) & 1023, nil},
		{"explicit 8 bits", 8, []string{"172.16.5.9/12"}, 1024, 9, nil},
		{"public first, private second", 0, []string{"8.8.8.8/32", "10.0.0.77/8"}, 256, 77, nil},
		{"only public", 0, []string{"8.8.8.8/32", "100.64.1.1/10"}, 1024, 0, workerid.ErrNotPrivate},
		{"bits above the field", 16, []string{"10.0.0.1/8"}, 1024, 0, workerid.ErrConfig},
		{"bits below 8", 4, []string{"10.0.0.1/8"}, 1024, 0, workerid.ErrConfig},
		{"field too small", 0, []string{"10.0.0.1/8"}, 32, 0, workerid.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := workerid.IP(tt.bits, addrs(t, tt.addrs...), workerid.Space{Workers: tt.workers})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("IP(%d, %v) = %v, %v; want %v", tt.bits, tt.addrs, s, err, tt.err)
				}
				return
			}
			if err != nil || s.Identity().WorkerID != tt.want {
				t.Fatalf("IP(%d, %v) = %v, %v; want worker %d", tt.bits, tt.addrs, s, err, tt.want)
			}
		})
	}
}

func TestHostnameHash(t *testing.T) {
	if _, err := workerid.HostnameHash("web-1", false, workerid.Space{}); !errors.Is(err, workerid.ErrConfig) {
		t.Fatalf("HostnameHash without opt-in = %v; want ErrConfig", err)
	}
	a, err := workerid.HostnameHash("web-1", true, workerid.Space{Workers: 1024})
	if err != nil {
		t.Fatalf("HostnameHash(web-1) = %v", err)
	}
	b, _ := workerid.HostnameHash("web-1", true, workerid.Space{Workers: 1024})
	if a.Identity().WorkerID != b.Identity().WorkerID {
		t.Fatalf("HostnameHash(web-1) twice = %d, %d; want the same", a.Identity().WorkerID, b.Identity().WorkerID)
	}
	var w workerid.Warner = a
	if msg := w.Warning(); !strings.Contains(msg, "web-1") || !strings.Contains(msg, "not safe for a dynamic fleet") {
		t.Fatalf("Warning() = %q; want the hostname and the collision warning", msg)
	}
	static, _ := workerid.NewStatic(1, workerid.Space{})
	if msg := static.Warning(); msg != "" {
		t.Fatalf("Static Warning() = %q; want none", msg)
	}
}

func TestOpenSchemes(t *testing.T) {
	tests := []struct {
		url string
		err error
	}{
		{"ip:x", workerid.ErrConfig},
		{"ip:0", workerid.ErrConfig},
		{"ip:12", workerid.ErrConfig}, // above the 10-bit field
		{"hostname-hash", workerid.ErrConfig},
		{"hostname-hash?accept_collisions=yes", workerid.ErrConfig},
		{"hostname-hash?other=1", workerid.ErrConfig},
		{"zk://", workerid.ErrConfig},
		{"zk://127.0.0.1:1/p?foo=1", workerid.ErrConfig},
		{"zk://127.0.0.1:1/p?ttl=1s", workerid.ErrConfig},
		{"mysql://root@127.0.0.1:1/test?workers=2000", workerid.ErrConfig},
		{"redis://127.0.0.1:1/0?ttl=x", workerid.ErrConfig},
	}
	for _, tt := range tests {
		s, err := workerid.Open(context.Background(), tt.url, workerid.Space{Workers: 1024})
		if !errors.Is(err, tt.err) {
			t.Fatalf("Open(%q) = %v, %v; want %v", tt.url, s, err, tt.err)
		}
	}
	s, err := workerid.Open(context.Background(), "hostname-hash?accept_collisions=true", workerid.Space{Workers: 1024})
	if err != nil || s.(workerid.Warner).Warning() == "" {
		t.Fatalf("Open(hostname-hash?accept_collisions=true) = %v, %v; want a source with a warning", s, err)
	}
}
