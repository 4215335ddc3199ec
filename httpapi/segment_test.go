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

// redisTag returns the test Redis and a biz tag of the test's own, whose
// keys are deleted at its end.
func redisTag(t *testing.T) (url, tag string) {
	t.Helper()
	url = testenv.RedisURL(t)
	tag = fmt.Sprintf("httpapi-%s-%d", t.Name(), time.Now().UnixNano())
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
	return url, tag
}

// A Leaf segment allocator on the real Redis: its remaining IDs show in
// /metrics, and dense IDs come out over HTTP.
func TestSegmentOverRedis(t *testing.T) {
	url, tag := redisTag(t)
	g, err := strategies.NewText(context.Background(), strategies.MustParse("segment?step=100&auto_create=true").With("dsn", url).With("tag", tag).String())
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
	// the next segment. The wait is for both: the fetch counts its segment
	// a moment before the allocator holds it (Segments 2 with Remaining 70
	// was read once in that window). A Redis round trip takes ms; the bound
	// is 30 s.
	a := g.(*segment.Allocator)
	landed := func() bool { st := a.Stats(); return st.Segments >= 2 && st.Remaining > 70 }
	for deadline := time.Now().Add(30 * time.Second); !landed() && time.Now().Before(deadline); {
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

// During a store outage, a request for more IDs than the allocator holds
// gets 503 before it draws any, so the held IDs still serve the requests
// that follow (before: count=5000 drew and dropped every held ID, and
// count=1 got 503 too). The allocator knows the store is down once a fetch
// has failed: here the prefetch of the third segment. It holds 1,799 IDs,
// more than the first chunk of a streamed answer (1,024): without asking
// first, count=5000 would get a 200 cut short after 1,024 IDs.
func TestSegmentOutageKeepsHeld(t *testing.T) {
	url, tag := redisTag(t)
	purl, p := testenv.ViaProxy(t, url)
	spec := strategies.MustParse("segment?step=2000&min_step=2000&max_step=2000&auto_create=true").With("dsn", purl).With("tag", tag)
	g, err := strategies.NewText(context.Background(), spec.String())
	if err != nil {
		t.Fatalf("strategies.New: %v", err)
	}
	t.Cleanup(func() { g.(io.Closer).Close() })
	srv, _ := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	text := func(count int) []string {
		t.Helper()
		r := get(t, srv.URL+"/api/v1/ids?format=text&count="+fmt.Sprint(count))
		if r.code != http.StatusOK {
			t.Fatalf("GET count=%d = %d %s; want 200", count, r.code, r.body)
		}
		return strings.Fields(string(r.body))
	}
	a := g.(*segment.Allocator)
	text(1900) // IDs 1 to 1900, past the first segment's 10 %: the second is fetched
	for deadline := time.Now().Add(5 * time.Second); a.Stats().Segments < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	p.Cut()
	text(301) // to 2201: past the second segment's 10 %, whose prefetch fails
	for deadline := time.Now().Add(5 * time.Second); a.Available(5000) == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the failed fetch is recorded
	}
	if st := a.Stats(); st.Remaining != 1799 || st.FetchErrors == 0 || a.Available(5000) == nil {
		t.Fatalf("allocator Stats = %+v, Available(5000) = %v; want 1799 IDs held and a failed fetch", st, a.Available(5000))
	}
	r := get(t, srv.URL+"/api/v1/ids?count=5000")
	checkError(t, r, http.StatusServiceUnavailable, "1799 IDs held, 5000 asked, store failing")
	if r.header.Get("Retry-After") == "" {
		t.Errorf("503 for count=5000 without Retry-After")
	}
	if got := text(1); got[0] != "2202" {
		t.Fatalf("GET count=1 after the refused request = %v; want 2202, the next held ID", got)
	}
	if got := text(1798); got[0] != "2203" || got[1797] != "4000" {
		t.Fatalf("GET count=1798 = %s to %s; want the held 2203 to 4000", got[0], got[len(got)-1])
	}
	checkError(t, get(t, srv.URL+"/api/v1/ids"), http.StatusServiceUnavailable, "store failing")
}
