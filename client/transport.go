package client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/grpcapi/idgenv1"
	"github.com/idgenkit/idgen/internal/echo"
	"github.com/idgenkit/idgen/internal/storetls"
	"github.com/idgenkit/idgen/internal/tlsfiles"
)

// A transport reaches one server.
type transport interface {
	// generators lists the server's generators and names its default.
	generators(ctx context.Context) (def string, gens []genInfo, err error)
	// fetch returns up to n IDs of the generator (empty: the default), as
	// many as came before an error.
	fetch(ctx context.Context, gen string, scheme *idgen.Scheme, n int64) ([]idgen.ID, error)
	close()
}

// genInfo is one generator a server lists.
type genInfo struct{ name, scheme, layout string }

// tlsConfig returns the TLS configuration of cfg: TLS with the file
// options loaded, nil when neither is set.
func tlsConfig(cfg Config) (*tls.Config, error) {
	files := tlsfiles.Client{CAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, ServerName: cfg.ServerName}
	if cfg.TLS == nil && files.IsZero() {
		return nil, nil
	}
	c, err := files.Config(cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c, nil
}

// dialAll makes a transport for each of cfg.Targets: HTTP for http:// and
// https:// URLs, gRPC otherwise.
func dialAll(cfg Config) ([]transport, *tls.Config, error) {
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		ht := http.DefaultTransport.(*http.Transport).Clone()
		ht.TLSClientConfig, ht.ForceAttemptHTTP2 = tc, true
		hc = &http.Client{Transport: ht}
	}
	creds := insecure.NewCredentials()
	if tc != nil {
		creds = credentials.NewTLS(tc)
	}
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(creds),
		grpc.WithInitialWindowSize(idgenv1.StreamWindow), grpc.WithInitialConnWindowSize(idgenv1.StreamWindow)}, cfg.DialOptions...)
	var ts []transport
	fail := func(err error) ([]transport, *tls.Config, error) {
		for _, t := range ts {
			t.close()
		}
		return nil, nil, err
	}
	for _, t := range cfg.Targets {
		switch {
		case strings.HasPrefix(t, "https://"), strings.HasPrefix(t, "http://"):
			u, err := url.Parse(t)
			if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
				return fail(fmt.Errorf("%w: target %q: want a base URL such as https://ids-a:8443", ErrConfig, echo.Cut(t)))
			}
			if u.Scheme == "http" && tc != nil {
				return fail(fmt.Errorf("%w: target %q is plaintext HTTP but TLS is configured; use https://", ErrConfig, echo.Cut(t)))
			}
			ts = append(ts, &httpTarget{base: strings.TrimSuffix(t, "/"), hc: hc})
		default:
			cc, err := grpc.NewClient(t, opts...)
			if err != nil {
				return fail(fmt.Errorf("%w: target %q: %w", ErrConfig, echo.Cut(t), err))
			}
			ts = append(ts, &grpcTarget{cc: cc, c: idgenv1.NewIDServiceClient(cc)})
		}
	}
	return ts, tc, nil
}

// explainTLS adds to err, an attempt on every target that failed, why
// each target's TLS handshake fails, when it does (storetls.Probe): a
// refused client certificate shows in the fetch's error as a broken pipe
// or a reset only, since TLS 1.3 servers check it after the client's
// handshake ends.
// The hint for a missing certificate names cfg.CertNames.
func explainTLS(err error, cfg Config, tc *tls.Config) error {
	if tc == nil || !errors.Is(err, idgen.ErrUnavailable) {
		return err
	}
	timeout := min(cfg.FetchTimeout, 2*time.Second)
	names := cmp.Or(cfg.CertNames, "CertFile, KeyFile")
	var whys []string
	for _, t := range cfg.Targets {
		addr := t
		if u, perr := url.Parse(t); perr == nil && (u.Scheme == "https" || u.Scheme == "http") {
			addr = u.Host
			if u.Port() == "" {
				addr = net.JoinHostPort(u.Hostname(), "443")
			}
		}
		if _, _, serr := net.SplitHostPort(addr); serr != nil {
			continue // a grpc-go target such as dns:///name: not probed
		}
		if why := storetls.ProbeFor(addr, tc, timeout, names); why != nil {
			whys = append(whys, fmt.Sprintf("%s: %v", t, why))
		}
	}
	if len(whys) == 0 {
		return err
	}
	return fmt.Errorf("%w; TLS handshake: %s", err, strings.Join(whys, "; "))
}

// grpcTarget is a server of package grpcapi.
type grpcTarget struct {
	cc *grpc.ClientConn
	c  idgenv1.IDServiceClient
}

func (t *grpcTarget) generators(ctx context.Context) (string, []genInfo, error) {
	resp, err := t.c.ListGenerators(ctx, &idgenv1.ListGeneratorsRequest{})
	if err != nil {
		return "", nil, err
	}
	gens := make([]genInfo, 0, len(resp.Generators))
	for _, g := range resp.Generators {
		gens = append(gens, genInfo{g.Name, g.Scheme, g.Layout})
	}
	return resp.Default, gens, nil
}

// fetch streams n IDs, in batches that fit in grpc-go's default 4 MiB
// message (idgenv1.MaxBatch): a server whose max count is larger would
// otherwise send batches the connection refuses.
func (t *grpcTarget) fetch(ctx context.Context, gen string, scheme *idgen.Scheme, n int64) ([]idgen.ID, error) {
	batch := uint32(min(n, int64(idgenv1.MaxBatch(scheme.Size))))
	st, err := t.c.NextStream(ctx, &idgenv1.NextStreamRequest{Generator: gen, Count: uint64(n), BatchSize: batch})
	if err != nil {
		return nil, err
	}
	ids := make([]idgen.ID, 0, n)
	size := scheme.Size
	for {
		b, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return ids, nil
		}
		if err != nil {
			return ids, err
		}
		if int(b.IdSize) != size || len(b.Packed)%size != 0 {
			return ids, fmt.Errorf("client: server sent %d-byte IDs in %d bytes; the scheme %s has %d", b.IdSize, len(b.Packed), scheme.Name, size)
		}
		ids = slices.Grow(ids, len(b.Packed)/size)
		for p := b.Packed; len(p) > 0; p = p[size:] {
			id, err := scheme.FromBytes(p[:size])
			if err != nil {
				return ids, err
			}
			ids = append(ids, id)
		}
	}
}

func (t *grpcTarget) close() { t.cc.Close() }

// httpTarget is a server of package httpapi at a base URL.
type httpTarget struct {
	base     string
	hc       *http.Client
	maxCount atomic.Int64 // the server's --max-count, from its OpenAPI document; 0: not known yet
}

// get GETs base+path and returns the body's reader when the status is
// 200; else an error with the status and the start of the body.
func (t *httpTarget) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	return resp, nil
}

func (t *httpTarget) getJSON(ctx context.Context, path string, v any) error {
	resp, err := t.get(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

func (t *httpTarget) generators(ctx context.Context) (string, []genInfo, error) {
	var doc struct {
		Default    string `json:"default"`
		Generators []struct {
			Name, Scheme, Layout string
		} `json:"generators"`
	}
	if err := t.getJSON(ctx, "/api/v1/generators", &doc); err != nil {
		return "", nil, err
	}
	gens := make([]genInfo, 0, len(doc.Generators))
	for _, g := range doc.Generators {
		gens = append(gens, genInfo{g.Name, g.Scheme, g.Layout})
	}
	return doc.Default, gens, nil
}

// max returns the largest count the server allows, read once from the
// count parameter's maximum in its /api/v1/openapi.json.
func (t *httpTarget) max(ctx context.Context) (int64, error) {
	if m := t.maxCount.Load(); m > 0 {
		return m, nil
	}
	var doc struct {
		Components struct {
			Parameters struct {
				Count struct {
					Schema struct {
						Maximum int64 `json:"maximum"`
					} `json:"schema"`
				} `json:"count"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := t.getJSON(ctx, "/api/v1/openapi.json", &doc); err != nil {
		return 0, err
	}
	m := doc.Components.Parameters.Count.Schema.Maximum
	if m < 1 {
		return 0, errors.New("GET /api/v1/openapi.json: no maximum for the count parameter")
	}
	t.maxCount.Store(m)
	return m, nil
}

// fetch GETs min(n, the server's max count) IDs as text, one a line. Only
// whole lines count: a response cut mid-line (the server failed after the
// status line) gives the IDs of the lines before the cut, and the error.
func (t *httpTarget) fetch(ctx context.Context, gen string, scheme *idgen.Scheme, n int64) ([]idgen.ID, error) {
	m, err := t.max(ctx)
	if err != nil {
		return nil, err
	}
	n = min(n, m)
	path := "/api/v1/ids"
	if gen != "" {
		path = "/api/v1/" + url.PathEscape(gen) + "/ids"
	}
	resp, err := t.get(ctx, path+"?format=text&count="+strconv.FormatInt(n, 10))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	ids := make([]idgen.ID, 0, n)
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) == 0 {
				if int64(len(ids)) != n {
					return ids, fmt.Errorf("GET %s: %d IDs; asked for %d", path, len(ids), n)
				}
				return ids, nil
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // a line without its end
			}
			return ids, fmt.Errorf("GET %s: after %d IDs: %w", path, len(ids), err)
		}
		id, err := scheme.Parse(string(line[:len(line)-1]))
		if err != nil {
			return ids, fmt.Errorf("GET %s: the server sent %q, not a %s ID: %w", path, echo.Cut(string(line)), scheme.Name, err)
		}
		ids = append(ids, id)
	}
}

func (t *httpTarget) close() { t.hc.CloseIdleConnections() }
