package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/snowflake"
)

// After Shutdown, /readyz answers 503 so that load balancers drain the
// server; /healthz and the IDs are still served.
func TestShutdownNotReady(t *testing.T) {
	g := newSnowflake(t, nil, snowflake.Fail, nil)
	srv, h := serve(t, map[string]idgen.Generator{"default": g}, httpapi.Options{})
	if r := get(t, srv.URL+"/readyz"); r.code != http.StatusOK {
		t.Fatalf("/readyz before Shutdown = %d %s; want 200", r.code, r.body)
	}
	h.Shutdown()
	checkError(t, get(t, srv.URL+"/readyz"), http.StatusServiceUnavailable, "shutting down: finishing requests in flight")
	for _, path := range []string{"/healthz", "/api/v1/ids"} {
		if r := get(t, srv.URL+path); r.code != http.StatusOK {
			t.Errorf("%s after Shutdown = %d %s; want 200", path, r.code, r.body)
		}
	}
}
