// Package faults is idgen's fault campaign: Jepsen-style runs of whole
// deployments of real processes, with faults injected while clients issue
// IDs and every ID checked. It holds no library code; the campaign is its
// test, TestCampaign:
//
//	go test -race -run TestCampaign ./internal/faults/                  # CI size, about 55 s (topologies A and B at once)
//	IDGEN_FAULTS=long go test -timeout 60m -run TestCampaign ./internal/faults/   # every fault repeated, >= 10 minutes
//	IDGEN_FAULTS_OUT=results.md ...                                      # also write the tables to a file
//
// Topology A is a three-member etcd cluster (Debian's etcd binary as three
// processes on loopback ports), three `idgen serve` processes (the binary
// built with go build) issuing Snowflake IDs under worker IDs leased from
// that etcd, each talking to every member through its own TCP proxy, and
// three clients (package client) issuing IDs from all three nodes with
// failover. Topology B is three `idgen serve` processes on one segment biz
// tag of a throwaway PostgreSQL cluster, each through its own proxy. The
// faults, their sizes and the promises checked are listed in the README
// ("Fault campaign").
package faults
