package workerid_test

import (
	"context"
	"testing"
	"time"

	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/workerid"
)

// TestEtcdMemberThatHangs: a member that stops answering but keeps its TCP
// connections (frozen with SIGSTOP, partitioned away) costs the lease
// nothing while another member answers. Before, the client of all
// members sent that member a share of the renewals and each one waited
// until LostAfter: the fault campaign's frozen etcd leader stopped every
// serve node although two members kept a quorum. Here the first endpoint
// is the shared etcd through a Link held after the start, the second the
// same etcd direct; ttl 6 s (renewals every 600 ms, lost after 3 s, an
// attempt given up after 1.2 s). Three LostAfter periods without a loss,
// and a mark written on the request path, show that renewals and writes
// went to the member that answers.
func TestEtcdMemberThatHangs(t *testing.T) {
	t.Parallel() // a namespace and a Link of its own; it sleeps, beside TestProcessFreeze
	host := sharedEtcd(t)
	link := testenv.NewLink(t, host)
	cfg := workerid.LeaseConfig{Namespace: uniqueName(t), Space: workerid.Space{Workers: 4}, TTL: 6 * time.Second}
	s, err := workerid.OpenEtcd(context.Background(), workerid.EtcdConfig{LeaseConfig: cfg,
		Endpoints: []string{link.Addr(), host}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	link.Hold(true)
	defer link.Hold(false)
	select {
	case <-s.Lost():
		t.Fatal("lease lost while one of two endpoints hung and the other answered")
	case <-time.After(9 * time.Second):
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.Store(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Errorf("Store of a mark a minute ahead with one endpoint hung: %v", err)
	}
}
