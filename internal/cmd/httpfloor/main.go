// Command httpfloor is the floor bench/serve-load.sh measures idgen serve
// against: net/http with idgen serve's server settings (read 5 s, write
// 10 s, idle 2 min timeouts), answering every request with the same
// headers and a constant body the size of a count=1 JSON answer (213
// bytes). What idgen serve costs above it is the handler's own work and
// what linking serve's libraries costs (-tags linked takes the second
// away: see linked.go).
//
//	go run ./internal/cmd/httpfloor -addr 127.0.0.1:18081
package main

import (
	"flag"
	"log"
	"net/http"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	flag.Parse()
	body := []byte(`{"ids":[{"value_string":"2123968132472270848","value_hex":"1d79d9c362427000","breakdown":` +
		`{"timestamp_ms":1795228438858,"datacenter_id":1,"worker_id":7,"sequence_number":0}}],` +
		`"generated_at":"2026-11-21T02:33:58Z"}` + "\n")
	text := []byte(strings.Repeat("2123968132472270848\n", 1000))
	ct, cc, nosniff := []string{"application/json"}, []string{"no-store"}, []string{"nosniff"}
	srv := &http.Server{
		Addr: *addr,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h["Content-Type"], h["Cache-Control"], h["X-Content-Type-Options"] = ct, cc, nosniff
			if r.URL.RawQuery != "" { // ?count=1000&format=text: 1,000 IDs of text
				h["Content-Type"] = []string{"text/plain; charset=utf-8"}
				w.Write(text)
				return
			}
			w.Write(body)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       5 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	log.Fatal(srv.ListenAndServe())
}
