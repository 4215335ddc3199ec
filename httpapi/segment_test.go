package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/idgenkit/idgen/strategies"
)

// A Leaf segment allocator on the real Redis: its remaining IDs show in
// /metrics, and dense IDs come out over HTTP.
func TestSegmentOverRedis(t *testing.T) {
	url := testenv.RedisURL(t)
	tag := fmt.Sprintf("httpapi-test-%d", time.Now().UnixNano())
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	t.Cleanup(func() {
		k := segment.RedisPrefix + "{" + tag + "}"
		rc.Del(context.Background(), k, k+":step", k+":description")
		rc.Close()
	})
	g, err := strategies.New(context.Background(), strategies.MustParse("segment?step=100&auto_create=true").With("dsn", url).With("tag", tag).String())
	if err != nil {
		t.Fatalf("strategies.New: %v", err)
	}
	t.Cleanup(func() { g.(io.Closer).Close() })
	srv, _ := serve(t, map[string]idgen.Generator{"orders": g}, httpapi.Options{})

	r := get(t, srv.URL+"/api/v1/orders/ids?count=30&format=text")
	if r.code != http.StatusOK {
		t.Fatalf("GET = %d %s; want 200", r.code, r.body)
	}
	lines := strings.Fields(string(r.body))
	for i, line := range lines {
		if want := fmt.Sprint(i + 1); line != want {
			t.Fatalf("ID %d = %s; want %s (a new tag starts at 1, dense)", i, line, want)
		}
	}
	// 30 of the first segment's 100 are used, so the prefetch (at 10 %) has
	// started; once it lands the gauge is the allocator's own count, 70 plus
	// the next segment.
	a := g.(*segment.Allocator)
	for deadline := time.Now().Add(5 * time.Second); a.Stats().Segments < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	st := a.Stats()
	if st.Segments != 2 || st.Remaining <= 70 {
		t.Fatalf("allocator Stats = %+v; want 2 segments fetched and more than 70 IDs left", st)
	}
	if got := scrape(t, srv.URL, `idgen_segment_ids_remaining{generator="orders"}`); got != float64(st.Remaining) {
		t.Errorf("idgen_segment_ids_remaining = %v; want %d", got, st.Remaining)
	}
	if r := get(t, srv.URL+"/readyz"); r.code != http.StatusOK {
		t.Errorf("GET /readyz = %d %s; want 200", r.code, r.body)
	}
}
