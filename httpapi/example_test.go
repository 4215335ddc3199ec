package httpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/snowflake"
)

// A Handler is an http.Handler: mount it in a server of your own.
func Example() {
	layout, _ := snowflake.Preset("twitter")
	clock := idgentest.NewClock(time.Date(2026, 6, 1, 11, 7, 0, 0, time.UTC)) // for reproducible output
	nodes := map[string]int64{"datacenter": 4, "worker": 18}
	g, err := snowflake.New(context.Background(), snowflake.Config{Layout: layout, Nodes: nodes, Clock: clock})
	if err != nil {
		panic(err)
	}
	h, err := httpapi.New(map[string]idgen.Generator{"orders": g}, httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	for _, target := range []string{"/api/v1/orders/ids?count=2&format=text", "/api/v1/orders/ids/2061404137190924289"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// 200 2061404137190924288
	// 2061404137190924289
	// 200 {"value_string":"2061404137190924289","value_hex":"1c9b942417c92001","breakdown":{"timestamp_ms":1780312020000,"datacenter_id":4,"worker_id":18,"sequence_number":1}}
}
