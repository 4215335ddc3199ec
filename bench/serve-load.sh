#!/usr/bin/env bash
# Load test of `idgen serve` with wrk over loopback, against the net/http
# floor (internal/cmd/httpfloor: the same server settings and headers, a
# constant body of the same size) in the same run, alternating the two.
# LINKED=1 adds a third server: the floor built with -tags linked, which
# links every package idgen serve links and so carries the same
# package-initialised live heap for the collector to mark (gRPC's and
# etcd's protobuf descriptors); idgen against it is serve's own work, apart
# from what linking those libraries costs any Go server.
#
#   bash bench/serve-load.sh            # 8 s per point; DURATION=20s for longer
#   MODES=pinned CONNS="4 8" REPEATS=5 PORT=23080 bash bench/serve-load.sh
#   MODES=pinned CONNS="8 16" REPEATS=3 BULK=0 LINKED=1 bash bench/serve-load.sh
#
# MODES picks the placements (default all three), CONNS the connection
# counts of the count=1 rows (default 4 8 16), REPEATS how many rounds of
# count=1 rows (one per server, back to back) each count gets, the order
# rotating from round to round so that no server always follows another
# (default 1), BULK=0 skips the count=1000 rows, PORT is the first of the
# four ports the servers take, SERVE_ENV is given to idgen serve's
# environment (e.g. SERVE_ENV=GOGC=1600), and WARMUP (default 2s) is a wrk
# run against each server before its rows: a server's first seconds grow
# its heap and fault its code in, which is not the steady state the rows
# compare.
#
# Under the table, each round's ratios: idgen's req/s over the floor's and
# idgen's p99 over the floor's, and their medians over the repeats; with
# LINKED=1 also idgen's over the linked floor's, and the linked floor's
# over the floor's. On a shared machine a row's p99 moves with whatever
# else runs; compare rounds, which ran back to back, not rows from
# different runs.
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
idgen1=127.0.0.1:$port floor=127.0.0.1:$((port + 1)) idgen14=127.0.0.1:$((port + 2)) linked=127.0.0.1:$((port + 3))
declare -A addr=([floor]=$floor [linked]=$linked [idgen]=$idgen1)
servers=(floor idgen)
[ "${LINKED:-0}" = 1 ] && servers=(floor linked idgen)
warmup=${WARMUP:-2s}
read -r -a serveenv <<<"${SERVE_ENV:-}"
tmp=$(mktemp -d)
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); wait 2>/dev/null || true; }
trap 'stop; rm -rf "$tmp"' EXIT
go build -o "$tmp/idgen" ./cmd/idgen
go build -o "$tmp/httpfloor" ./internal/cmd/httpfloor
[ "${LINKED:-0}" = 1 ] && go build -tags linked -o "$tmp/httpfloor-linked" ./internal/cmd/httpfloor

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
  [ "${LINKED:-0}" = 1 ] && { "${pin[@]}" "$tmp/httpfloor-linked" -addr "$linked" & pids+=($!); }
  "${pin[@]}" "${serveenv[@]}" "$tmp/idgen" serve -s "$spec" --addr "$idgen1" --log-level warn & pids+=($!)
  "${pin[@]}" "${serveenv[@]}" "$tmp/idgen" serve -s "$wide" --addr "$idgen14" --log-level warn & pids+=($!)
  for _ in $(seq 50); do
    curl -sf -o /dev/null "http://$idgen1/healthz" && curl -sf -o /dev/null "http://$idgen14/healthz" &&
      curl -sf -o /dev/null "http://$floor/" &&
      { [ "${LINKED:-0}" != 1 ] || curl -sf -o /dev/null "http://$linked/"; } && break
    sleep 0.1
  done
  for s in "${servers[@]}"; do warm "$mode" "http://${addr[$s]}/api/v1/ids"; done
  for conns in $connss; do
    for i in $(seq "$repeats"); do
      # Round i starts at server (i-1) mod the count and takes them in turn.
      for j in $(seq 0 $((${#servers[@]} - 1))); do
        s=${servers[$(((i - 1 + j) % ${#servers[@]}))]}
        point "$mode" "$s" "http://${addr[$s]}/api/v1/ids" "$conns" 1
      done
    done
  done
  [ "${BULK:-1}" = 0 ] && { stop; continue; }
  point "$mode" floor "http://$floor/api/v1/ids?count=1000&format=text" 2 1000
  point "$mode" idgen "http://$idgen1/api/v1/ids?count=1000&format=text" 2 1000
  point "$mode" idgen-14 "http://$idgen14/api/v1/ids?count=1000&format=text" 2 1000
  stop
done

# Each round's idgen count=1 row against its floor rows.
echo
if [ "${LINKED:-0}" = 1 ]; then
  echo "| placement | conns | idgen/floor req/s, each round | median | idgen/floor p99, each round | median | idgen/linked req/s | median | idgen/linked p99 | median | linked/floor req/s | median | linked/floor p99 | median |"
  echo "|---|---:|---|---:|---|---:|---|---:|---|---:|---|---:|---|---:|"
else
  echo "| placement | conns | idgen/floor req/s, each round | median | idgen/floor p99, each round | median |"
  echo "|---|---:|---|---:|---|---:|"
fi
awk -v nserv="${#servers[@]}" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  # col K: the ratios of column pair K (1 idgen/floor, 2 idgen/linked,
  # 3 linked/floor) of group k, each round and their median.
  function col(k, K,   j, rs, qs, ra, qa) {
    for (j = 1; j <= n[k]; j++) {
      ra[j] = r[k, K, j]; qa[j] = q[k, K, j]
      rs = rs (j > 1 ? " " : "") sprintf("%.2f", ra[j]); qs = qs (j > 1 ? " " : "") sprintf("%.2f", qa[j])
    }
    return sprintf(" %s | %.2f | %s | %.2f |", rs, median(ra, n[k]), qs, median(qa, n[k]))
  }
  # Rows come in rounds of nserv rows, one per server, in any order.
  { rps[$2] = $4; p99[$2] = $5 }
  ++seen == nserv {
    seen = 0
    k = $1 SUBSEP $3
    if (!(k in n)) order[++nk] = k
    m = ++n[k]
    r[k, 1, m] = rps["idgen"] / rps["floor"]; q[k, 1, m] = p99["idgen"] / p99["floor"]
    if (nserv == 3) {
      r[k, 2, m] = rps["idgen"] / rps["linked"]; q[k, 2, m] = p99["idgen"] / p99["linked"]
      r[k, 3, m] = rps["linked"] / rps["floor"]; q[k, 3, m] = p99["linked"] / p99["floor"]
    }
  }
  END {
    for (i = 1; i <= nk; i++) {
      k = order[i]; split(k, kk, SUBSEP)
      line = sprintf("| %s | %d |", kk[1], kk[2]) col(k, 1)
      if (nserv == 3) line = line col(k, 2) col(k, 3)
      print line
    }
  }' "$tmp/rows"
