package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/public"
	"github.com/idgenkit/idgen/strategies"
)

// TestDecodePublicID checks that the decode endpoint of a public generator
// reads a public ID back to its inner Snowflake's time and fields.
func TestDecodePublicID(t *testing.T) {
	keys, err := public.ParseKeys("TEST_KEY", strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := strategies.NewText(context.Background(), "snowflake?preset=twitter&worker=5")
	if err != nil {
		t.Fatal(err)
	}
	g, err := public.New(inner, public.Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, map[string]idgen.Generator{"orders": g}, httpapi.Options{})
	r := get(t, srv.URL+"/api/v1/orders/ids/"+id.String())
	var body struct {
		Value     string            `json:"value_string"`
		Breakdown map[string]uint64 `json:"breakdown"`
	}
	if r.code != 200 || json.Unmarshal(r.body, &body) != nil {
		t.Fatalf("GET ids/%s = %d %s; want 200 and JSON", id, r.code, r.body)
	}
	if body.Value != id.String() || body.Breakdown["worker"] != 5 || body.Breakdown["key_id"] != 0 || body.Breakdown["timestamp_ms"] != uint64(id.Time().UnixMilli()) {
		t.Errorf("GET ids/%s = %s; want key_id 0, worker 5, timestamp_ms %d", id, r.body, id.Time().UnixMilli())
	}
	if r := get(t, srv.URL+"/api/v1/orders/ids/Z"+id.String()[1:]); r.code != 400 || !strings.Contains(string(r.body), "key ID Z") {
		t.Errorf("GET ids/ with an unknown key ID = %d %s; want 400 naming key ID Z", r.code, r.body)
	}
}
