package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idgenkit/idgen/client"
)

// remoteFlags are the flags of a command that takes IDs from idgen servers
// with package client: the targets and the TLS files.
type remoteFlags struct {
	from                               []string
	generator                          string
	tlsCA, tlsCert, tlsKey, serverName string
}

func (r *remoteFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&r.from, "from", nil, "take the IDs from an idgen server instead: host:port (gRPC) or http(s)://host:port; repeatable, failing over in order")
	fl.StringVar(&r.generator, "generator", "", "with --from: the server's generator (default: its default)")
	fl.StringVar(&r.tlsCA, "tls-ca", "", "with --from: PEM CA file to verify the servers against instead of the system's roots (turns TLS on for gRPC)")
	fl.StringVar(&r.tlsCert, "tls-cert", "", "with --from: PEM client certificate file, for servers that require one (serve --client-ca)")
	fl.StringVar(&r.tlsKey, "tls-key", "", "with --from: PEM private key file of --tls-cert")
	fl.StringVar(&r.serverName, "tls-server-name", "", "with --from: the name the servers' certificates must carry (default: the host dialled)")
}

// set reports whether a flag other than --from is set.
func (r *remoteFlags) set() bool {
	return r.generator != "" || r.tlsCA != "" || r.tlsCert != "" || r.tlsKey != "" || r.serverName != ""
}

// dial connects to the servers for n IDs (fetched in one block when it
// fits, so that no ID beyond n is drawn). A bad option exits 2; servers
// that do not answer or refuse the handshake exit 1.
func (r *remoteFlags) dial(ctx context.Context, n int) (*client.Generator, error) {
	batch := min(int64(n), client.DefaultMaxBatch)
	g, err := client.New(ctx, client.Config{Targets: r.from, Generator: r.generator, MinBatch: batch, MaxBatch: batch,
		CAFile: r.tlsCA, CertFile: r.tlsCert, KeyFile: r.tlsKey, ServerName: r.serverName,
		CertNames: "--tls-cert, --tls-key"})
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	return g, nil
}
