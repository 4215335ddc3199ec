#!/usr/bin/env bash
# Load test of `idgen serve` with wrk over loopback, against the net/http
# floor (internal/cmd/httpfloor: the same server settings and headers, a
# constant body of the same size) in the same run, alternating the two.
#
#   bash bench/serve-load.sh            # 8 s per point; DURATION=20s for longer
#   MODES=pinned CONNS="4 8" REPEATS=5 PORT=23080 bash bench/serve-load.sh
#
# MODES picks the placements (default all three), CONNS the connection
# counts of the count=1 rows (default 4 8 16), REPEATS how many floor/idgen
# pairs of count=1 rows each count gets, back to back, every other pair
# idgen first (default 1), BULK=0
# skips the count=1000 rows, PORT is the first of the three ports the
# servers take, SERVE_ENV is given to idgen serve's environment (e.g.
# SERVE_ENV=GOGC=1600), FLOOR_TAGS are build tags for the floor
# (FLOOR_TAGS=linked: the floor links every package idgen serve links, so
# it carries the same package-initialised live heap), and WARMUP (default 2s) is a wrk run against each
# server before its rows: a server's first seconds grow its heap and fault
# its code in, which is not the steady state the rows compare.
#
# Under the table, each pair's ratios: idgen's req/s over the floor's and
# idgen's p99 over the floor's, and their medians over the repeats. On a
# shared machine a row's p99 moves with whatever else runs; compare pairs,
# which ran back to back, not rows from different runs.
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
modes=${MODES:-pinned shared-1P shared}
connss=${CONNS:-4 8 16}
repeats=${REPEATS:-1}
port=${PORT:-18080}
idgen1=127.0.0.1:$port floor=127.0.0.1:$((port + 1)) idgen14=127.0.0.1:$((port + 2))
warmup=${WARMUP:-2s}
read -r -a serveenv <<<"${SERVE_ENV:-}"
tmp=$(mktemp -d)
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); wait 2>/dev/null || true; }
trap 'stop; rm -rf "$tmp"' EXIT
go build -o "$tmp/idgen" ./cmd/idgen
go build -tags "${FLOOR_TAGS:-}" -o "$tmp/httpfloor" ./internal/cmd/httpfloor

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
      if (per == 1) print mode, target, conns, rps, p99 >> rows
    }' rows="$tmp/rows" "$tmp/wrk.out"
}

# warm MODE URL: a wrk run whose figures are dropped.
warm() {
  local pin=()
  [ "$1" = pinned ] && pin=(taskset -c 1)
  "${pin[@]}" wrk -t1 -c4 -d"$warmup" "$2" >/dev/null
}

echo "| placement | server | request | conns | req/s | IDs/s | p50 µs | p99 µs |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for mode in $modes; do
  case $mode in
    pinned) pin=(taskset -c 0 env GOMAXPROCS=1) ;;
    shared-1P) pin=(env GOMAXPROCS=1) ;;
    *) pin=(env) ;;
  esac
  "${pin[@]}" "$tmp/httpfloor" -addr "$floor" & pids+=($!)
  "${pin[@]}" "${serveenv[@]}" "$tmp/idgen" serve -s "$spec" --addr "$idgen1" --log-level warn & pids+=($!)
  "${pin[@]}" "${serveenv[@]}" "$tmp/idgen" serve -s "$wide" --addr "$idgen14" --log-level warn & pids+=($!)
  for _ in $(seq 50); do
    curl -sf -o /dev/null "http://$idgen1/healthz" && curl -sf -o /dev/null "http://$idgen14/healthz" &&
      curl -sf -o /dev/null "http://$floor/" && break
    sleep 0.1
  done
  warm "$mode" "http://$floor/api/v1/ids"
  warm "$mode" "http://$idgen1/api/v1/ids"
  for conns in $connss; do
    for i in $(seq "$repeats"); do
      # Every other pair runs idgen first, so that neither server always
      # follows the other.
      if [ $((i % 2)) = 1 ]; then
        point "$mode" floor "http://$floor/api/v1/ids" "$conns" 1
        point "$mode" idgen "http://$idgen1/api/v1/ids" "$conns" 1
      else
        point "$mode" idgen "http://$idgen1/api/v1/ids" "$conns" 1
        point "$mode" floor "http://$floor/api/v1/ids" "$conns" 1
      fi
    done
  done
  [ "${BULK:-1}" = 0 ] && { stop; continue; }
  point "$mode" floor "http://$floor/api/v1/ids?count=1000&format=text" 2 1000
  point "$mode" idgen "http://$idgen1/api/v1/ids?count=1000&format=text" 2 1000
  point "$mode" idgen-14 "http://$idgen14/api/v1/ids?count=1000&format=text" 2 1000
  stop
done

# Each idgen count=1 row against the floor row of its pair.
echo
echo "| placement | conns | idgen/floor req/s, each pair | median | idgen/floor p99, each pair | median |"
echo "|---|---:|---|---:|---|---:|"
awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  # Rows come in pairs of one floor and one idgen row, either order.
  $2 == "floor" { frps = $4; fp99 = $5 }
  $2 == "idgen" { irps = $4; ip99 = $5 }
  ($2 == "floor" || $2 == "idgen") && ++half == 2 {
    half = 0
    k = $1 SUBSEP $3
    if (!(k in n)) order[++nk] = k
    n[k]++; r[k, n[k]] = irps / frps; q[k, n[k]] = ip99 / fp99
  }
  END {
    for (i = 1; i <= nk; i++) {
      k = order[i]; split(k, kk, SUBSEP); rs = ""; qs = ""
      for (j = 1; j <= n[k]; j++) {
        ra[j] = r[k, j]; qa[j] = q[k, j]
        rs = rs (j > 1 ? " " : "") sprintf("%.2f", ra[j]); qs = qs (j > 1 ? " " : "") sprintf("%.2f", qa[j])
      }
      printf "| %s | %d | %s | %.2f | %s | %.2f |\n", kk[1], kk[2], rs, median(ra, n[k]), qs, median(qa, n[k])
    }
  }' "$tmp/rows"
