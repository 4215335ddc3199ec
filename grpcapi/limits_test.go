package grpcapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/httpapi"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/idgenkit/idgen/strategies"
)

// Decode gives the answer HTTP's /ids/{id} gives, input by input: a UUID of
// another version on a uuidv7 or uuidv4 generator (v4, v1, the nil UUID) is
// InvalidArgument as it is 400, with the same words.
func TestDecodeSameAsHTTP(t *testing.T) {
	gens := map[string]idgen.Generator{
		"v7": strategies.NewUUIDv7(),
		"v4": strategies.NewUUIDv4(),
		"sf": newSnowflake(t, 5, snowflake.Config{}),
	}
	cc := serve(t, gens, grpcapi.Options{Default: "sf"})
	c := idgenv1.NewIDServiceClient(cc)
	h, err := httpapi.New(gens, httpapi.Options{Default: "sf", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	const (
		aV4  = "6f1c2a3b-4d5e-4f60-8a7b-8c9d0e1f2a3b"
		aV7  = "019a7b3c-1d2e-7f30-8a41-52b6c7d8e9f0"
		aV1  = "6f1c2a3b-4d5e-1f60-8a7b-8c9d0e1f2a3b"
		nil_ = "00000000-0000-0000-0000-000000000000"
	)
	tests := []struct {
		gen, id string
		ok      bool
		msg     string
	}{
		{"v7", aV7, true, ""},
		{"v4", aV4, true, ""},
		{"v7", aV4, false, `"` + aV4 + `" is a version 4 UUID; generator "v7" issues version 7`},
		{"v7", aV1, false, `"` + aV1 + `" is a version 1 UUID; generator "v7" issues version 7`},
		{"v7", nil_, false, `"` + nil_ + `" is a version 0 UUID; generator "v7" issues version 7`},
		{"v4", aV7, false, `"` + aV7 + `" is a version 7 UUID; generator "v4" issues version 4`},
		{"v7", "not-a-uuid", false, `"not-a-uuid" is not a uuidv7 ID of generator "v7"`},
		{"sf", "12x", false, `"12x" is not a snowflake ID of generator "sf"`},
		{"sf", strings.Repeat("9", 100), false, `is not a snowflake ID of generator "sf"`},
		{"sf", "2123931401576411136", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.gen+"/"+tt.id[:min(len(tt.id), 12)], func(t *testing.T) {
			got, gerr := c.Decode(context.Background(), &idgenv1.DecodeRequest{Generator: tt.gen, Id: tt.id})
			resp, err := http.Get(srv.URL + "/api/v1/" + tt.gen + "/ids/" + url.PathEscape(tt.id))
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Error       string `json:"error"`
				TimestampMs *int64 `json:"timestamp_ms"`
				Value       string `json:"value_string"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			st := status.Convert(gerr)
			if !tt.ok {
				if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tt.msg) {
					t.Errorf("Decode(%s, %q) = %v %q; want InvalidArgument with %q", tt.gen, tt.id, st.Code(), st.Message(), tt.msg)
				}
				if resp.StatusCode != http.StatusBadRequest || "idgen: "+body.Error != st.Message() {
					t.Errorf("GET /api/v1/%s/ids/%s = %d %q; want 400 with gRPC's words %q", tt.gen, tt.id, resp.StatusCode, body.Error, st.Message())
				}
				return
			}
			if gerr != nil || resp.StatusCode != http.StatusOK || got.Text != body.Value {
				t.Errorf("Decode(%s, %q) = %v, %v; HTTP %d %q; want both to decode it", tt.gen, tt.id, got, gerr, resp.StatusCode, body.Value)
			}
		})
	}
}

// NextStream sizes its buffer by min(count, batch), not by MaxCount: five
// one-ID streams on a server whose MaxCount is 20,000,000 grow the heap by
// at most 16 MiB (they allocated MaxCount IDs each, 32 bytes apiece: the
// heap grew by 3.2 GB for five). The bound leaves the GC its 4 MB minimum goal and the gRPC
// transport's buffers (a 1 MiB flow-control window per connection).
func TestStreamBuffers(t *testing.T) {
	cc := serve(t, map[string]idgen.Generator{"default": newSnowflake(t, 6, snowflake.Config{})}, grpcapi.Options{MaxCount: 20_000_000})
	c := idgenv1.NewIDServiceClient(cc)
	if _, err := c.ListGenerators(context.Background(), &idgenv1.ListGeneratorsRequest{}); err != nil {
		t.Fatal(err) // the connection is up before the baseline
	}
	stop := testenv.HeapGrowth()
	for range 5 {
		s, err := c.NextStream(context.Background(), &idgenv1.NextStreamRequest{Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Recv()
		if err != nil || len(b.Packed) != 8 {
			t.Fatalf("NextStream(count=1) = %v, %v; want one 8-byte ID", b, err)
		}
		if _, err := s.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("NextStream(count=1) after its ID = %v; want EOF", err)
		}
	}
	growth := stop()
	t.Logf("5 one-ID streams at MaxCount 20,000,000: heap objects peaked %.1f MB above the start", float64(growth)/1e6)
	if growth > 16<<20 {
		t.Errorf("heap grew by %.1f MB for 5 one-ID streams; want at most 16 MiB", float64(growth)/1e6)
	}
}

// With MaxCount raised to a million, every message fits grpc-go's default
// 4 MiB receive limit: a NextStream batch is split at MaxBatch (8-byte and
// 16-byte IDs, batch_size 0 or above it), and a Next whose answer would not
// fit is refused with
// InvalidArgument, naming the largest count that fits, instead of failing
// in the client with ResourceExhausted.
func TestMessageLimit(t *testing.T) {
	gens := map[string]idgen.Generator{"sf": newSnowflake(t, 7, snowflake.Config{}), "v7": strategies.NewUUIDv7()}
	cc := serve(t, gens, grpcapi.Options{MaxCount: 1_000_000, Default: "sf"})
	c := idgenv1.NewIDServiceClient(cc)
	ctx := context.Background()
	for _, gen := range []string{"sf", "v7"} {
		size := gens[gen].Scheme().Size
		count := grpcapi.MaxBatch(size) + 1 // one ID more than a message holds
		for _, batch := range []uint32{0, 1_000_000} {
			s, err := c.NextStream(ctx, &idgenv1.NextStreamRequest{Generator: gen, Count: uint64(count), BatchSize: batch})
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for {
				b, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("NextStream(%s, count=%d, batch_size=%d) after %v: %v", gen, count, batch, sizes, err)
				}
				sizes = append(sizes, len(b.Packed)/int(b.IdSize))
			}
			if len(sizes) != 2 || sizes[0] != count-1 || sizes[1] != 1 {
				t.Errorf("NextStream(%s, count=%d, batch_size=%d) batches = %v; want [%d 1]", gen, count, batch, sizes, count-1)
			}
		}
	}
	_, err := c.Next(ctx, &idgenv1.NextRequest{Count: 1_000_000})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "count 1000000: a Next answer of generator \"sf\" holds at most") ||
		!strings.Contains(st.Message(), "use NextStream") {
		t.Fatalf("Next(count=1000000) = %v %q; want InvalidArgument naming the largest count and NextStream", st.Code(), st.Message())
	}
	fits := grpcapi.MaxNextCount(gens["sf"].Scheme())
	resp, err := c.Next(ctx, &idgenv1.NextRequest{Count: uint32(fits)})
	if err != nil || len(resp.Ids) != fits {
		t.Fatalf("Next(count=%d, the largest that fits) = %v; want %d IDs", fits, err, fits)
	}
	if _, err := c.Next(ctx, &idgenv1.NextRequest{Count: uint32(fits + 1)}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Next(count=%d, one above what fits) = %v; want InvalidArgument", fits+1, err)
	}
}
