#!/usr/bin/env bash
# Load test of `idgen serve` with wrk over loopback, against the net/http
# floor (internal/cmd/httpfloor: the same server settings and headers, a
# constant body of the same size) in the same run, alternating the two.
#
#   bash bench/serve-load.sh            # 8 s per point; DURATION=20s for longer
#
# Three placements on this machine's cores:
#   pinned    the server on CPU 0 (GOMAXPROCS=1), wrk on CPU 1: the load
#             generator does not steal the server's core
#   shared-1P both unpinned, the server with GOMAXPROCS=1: one busy thread
#             each, no more than the cores
#   shared    both unpinned, the server with GOMAXPROCS=all cores: more
#             busy threads than cores, so the OS scheduler's time slices
#             show in the tail
# Needs wrk (apt-get install wrk) and taskset (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "serve-load: wrk not found; apt-get install wrk" >&2; exit 1; }
dur=${DURATION:-8s}
spec='snowflake?preset=twitter&datacenter=1&worker=7'
# twitter's 12-bit sequence caps a worker at 4,096 IDs per ms, so bulk
# requests also run on a layout with a 14-bit sequence (16,384 per ms).
wide='snowflake?layout=time:41,worker:8,sequence:14;tick=1ms&worker=7'
tmp=$(mktemp -d)
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); wait 2>/dev/null || true; }
trap 'stop; rm -rf "$tmp"' EXIT
go build -o "$tmp/idgen" ./cmd/idgen
go build -o "$tmp/httpfloor" ./internal/cmd/httpfloor

# point MODE TARGET URL CONNS IDS_PER_REQUEST: one wrk run, one table row.
point() {
  local mode=$1 target=$2 url=$3 conns=$4 per=$5 pin=()
  [ "$mode" = pinned ] && pin=(taskset -c 1)
  "${pin[@]}" wrk -t1 -c"$conns" -d"$dur" --latency "$url" >"$tmp/wrk.out"
  awk -v mode="$mode" -v target="$target" -v conns="$conns" -v per="$per" -v path="${url#http://*/}" '
    function us(v) { if (v ~ /us$/) return v+0; if (v ~ /ms$/) return (v+0)*1000; if (v ~ /s$/) return (v+0)*1e6; return v+0 }
    $1 == "50%" { p50 = us($2) } $1 == "99%" { p99 = us($2) }
    $1 == "Requests/sec:" { rps = $2 }
    /Non-2xx/ { bad = $NF }
    END {
      if (bad != "") { print "serve-load: " bad " non-2xx answers from " target > "/dev/stderr"; exit 1 }
      printf "| %-9s | %-8s | /%-34s | %5d | %9.0f | %10.0f | %6.0f | %6.0f |\n", mode, target, path, conns, rps, rps*per, p50, p99
    }' "$tmp/wrk.out"
}

echo "| placement | server | request | conns | req/s | IDs/s | p50 µs | p99 µs |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for mode in pinned shared-1P shared; do
  case $mode in
    pinned) pin=(taskset -c 0 env GOMAXPROCS=1) ;;
    shared-1P) pin=(env GOMAXPROCS=1) ;;
    *) pin=(env) ;;
  esac
  "${pin[@]}" "$tmp/httpfloor" -addr 127.0.0.1:18081 & pids+=($!)
  "${pin[@]}" "$tmp/idgen" serve -s "$spec" --addr 127.0.0.1:18080 --log-level warn & pids+=($!)
  "${pin[@]}" "$tmp/idgen" serve -s "$wide" --addr 127.0.0.1:18082 --log-level warn & pids+=($!)
  for _ in $(seq 50); do
    curl -sf -o /dev/null http://127.0.0.1:18080/healthz && curl -sf -o /dev/null http://127.0.0.1:18082/healthz &&
      curl -sf -o /dev/null http://127.0.0.1:18081/ && break
    sleep 0.1
  done
  for conns in 4 8 16; do
    point "$mode" floor "http://127.0.0.1:18081/api/v1/ids" "$conns" 1
    point "$mode" idgen "http://127.0.0.1:18080/api/v1/ids" "$conns" 1
  done
  point "$mode" floor "http://127.0.0.1:18081/api/v1/ids?count=1000&format=text" 2 1000
  point "$mode" idgen "http://127.0.0.1:18080/api/v1/ids?count=1000&format=text" 2 1000
  point "$mode" idgen-14 "http://127.0.0.1:18082/api/v1/ids?count=1000&format=text" 2 1000
  stop
done
