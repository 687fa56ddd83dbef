#!/usr/bin/env bash
# Our host backend (gpudirect-launch --np N bench --backend libfabric: shared-memory staging on one
# host, GPUDIRECT_COMM_STAGING=0 for libfabric messages only) against Open MPI (MPI_Allreduce,
# MPI_Allgather over vader) and Gloo (ring allreduce, allgather over TCP) on this machine, in one
# run: all_reduce and all_gather, 2 and 4 ranks, 4 KiB..256 MiB. Every tool times the same way
# (pre-faulted buffers reused, warm-up, mean per iteration on rank 0: SMALL_ITERS=100 iterations up
# to SMALL_MAX=4 MiB, ITERS=10 above); each measurement is repeated REPS=3 times, the tools
# interleaved, and the median taken. Open MPI runs twice: default
# malloc, and malloc tuned so its per-call scratch buffers are not unmapped and faulted in again
# every call (mpi_t: the one the goals compare with). Prints busbw (nccl-tests' definition) of
# every tool, the ratios ours/peer (above 1: we are faster), this machine's single-thread memcpy
# bandwidth measured in the same run, our 2-rank large all_reduce as a fraction of it, and
# whether issue 10's goals hold.
#   perf/compare_cpu_collectives.sh [--quick] [--rt] [--across-nodes] [BUILD_DIR]
#     --quick          one repetition, 4 KiB..16 MiB: a check that everything runs (a minute or two)
#     --rt             run every tool under `chrt -r 1` (round-robin real-time): on a machine shared
#                      with builds, this keeps their time slices out of everyone's timings alike
#     --across-nodes   also two network namespaces joined by a veth link (needs root and iproute2):
#                      one rank in each over libfabric's default across hosts (net where libfabric has it,
#                      else tcp;ofi_rxm; FI_PROVIDER set by you wins), 1 MiB..64 MiB, against iperf3's
#                      single stream on the same link and Open MPI's tcp BTL (--across-nodes-only: just that)
#     --by-host        --across-nodes and also 2 ranks in each namespace: all_reduce, all_gather and
#                      reduce_scatter by host (the default in jobs across hosts) against one ring over all
#                      4 ranks (GPUDIRECT_COMM_BY_HOST=0); no Open MPI column: it did not run with 2 ranks
#                      in each namespace of one machine (with vader a rank died of SIGSEGV, the tcp BTL alone hung)
#   needs openmpi-bin libopenmpi-dev libgloo-dev (and iperf3 for --across-nodes)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
quick=0 across=0 within=1 by_host=0 build="" rt=()
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    --across-nodes) across=1 ;;
    --across-nodes-only) across=1 within=0 ;;
    --by-host) by_host=1 across=1 ;;
    --rt) rt=(chrt -r 1) ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare_cpu_collectives.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
build=${build:-$src/build/release}
launch=$build/launcher/gpudirect-launch
peers=$src/build/peers/bin
if [ "$quick" = 1 ]; then REPS=${REPS:-1} ITERS=${ITERS:-5} SMALL_ITERS=${SMALL_ITERS:-20} MAX=${MAX:-16777216}; fi
REPS=${REPS:-3}
ITERS=${ITERS:-10}
SMALL_ITERS=${SMALL_ITERS:-100}
SMALL_MAX=${SMALL_MAX:-4194304}
MIN=${MIN:-4096}
MAX=${MAX:-268435456}
mkdir -p "$peers"
[ -x "$launch" ] || { echo "compare_cpu_collectives.sh: no $launch: build first (cmake --preset release && cmake --build --preset release --target gpudirect-launch)" >&2; exit 1; }
for tool in mpicxx mpirun; do
  command -v "$tool" >/dev/null || { echo "compare_cpu_collectives.sh: $tool not found: apt-get install openmpi-bin libopenmpi-dev libgloo-dev" >&2; exit 1; }
done
echo "compare: building the peer drivers"
mpicxx -O2 -std=c++17 "$src/perf/peers/mpi_collectives.cpp" -o "$peers/mpi_collectives"
g++ -O2 -std=c++17 "$src/perf/peers/gloo_collectives.cpp" -o "$peers/gloo_collectives" -lgloo -pthread
g++ -O2 -std=c++17 -x c++ - -o "$peers/memcpy_bandwidth" <<'CPP'
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstring>
int main() {
  const std::size_t bytes = 256u << 20;
  auto* a = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
  auto* b = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
  std::memset(a, 1, bytes); std::memset(b, 2, bytes);
  double best = 0;
  for (int i = 0; i < 10; ++i) {
    const auto t = std::chrono::steady_clock::now();
    std::memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    if (bytes / s / 1e9 > best) best = bytes / s / 1e9;
  }
  std::printf("%.2f\n", best);
}
CPP
work=$(mktemp -d)
ns_a=gdcmp-a ns_b=gdcmp-b addr_a=10.97.0.1 addr_b=10.97.0.2
across_down() { ip netns del "$ns_a" 2>/dev/null || true; ip netns del "$ns_b" 2>/dev/null || true; }
cleanup() { [ "$across" = 1 ] && across_down; rm -rf "$work"; }
trap cleanup EXIT

ours() {  # collective np -> "bytes us" lines
  "${rt[@]}" "$launch" --np "$2" bench "$1" -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w 3 -c 0 -a 0 --backend libfabric 2>&1 |
    awk '/^\[0\] +[0-9]+ +[0-9]+ / {print $2, $7}'
}
mpi() {  # collective np [tuned]
  local env=()
  [ "${3:-}" = tuned ] && env=(-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=1000000000000)
  "${rt[@]}" mpirun --allow-run-as-root --oversubscribe -np "$2" "${env[@]}" "$peers/mpi_collectives" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3 2>/dev/null
}
gloo() {  # collective np
  local store=$work/gloo-$RANDOM pids=()
  mkdir -p "$store"
  for r in $(seq 1 $(($2 - 1))); do "${rt[@]}" "$peers/gloo_collectives" "$r" "$2" "$store" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3 >/dev/null & pids+=($!); done
  "${rt[@]}" "$peers/gloo_collectives" 0 "$2" "$store" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3
  wait "${pids[@]}"
}
median_of() {  # files... -> "bytes median_us spread%"
  cat "$@" | awk '{t[$1] = t[$1] " " $2} END {for (s in t) print s, t[s]}' | sort -n | while read -r size times; do
    printf '%s %s\n' "$size" "$(printf '%s\n' $times | sort -g | awk '{v[NR]=$1} END {m=v[int((NR+1)/2)]; printf "%.2f %.0f", m, (v[NR]-v[1])/m*100}')"
  done
}
# tool collective np: the sizes up to SMALL_MAX with SMALL_ITERS iterations, the rest with ITERS
# (ten iterations of a 1 MiB call are half a millisecond: one preemption moves it by a fifth).
sweep() {
  local first_max=$MIN
  while [ $((first_max * 4)) -le "$SMALL_MAX" ] && [ $((first_max * 4)) -le "$MAX" ]; do first_max=$((first_max * 4)); done
  (MAX=$first_max ITERS=$SMALL_ITERS; "$@")
  if [ $((first_max * 4)) -le "$MAX" ]; then (MIN=$((first_max * 4)); "$@"); fi
}
# tools... : runs every tool REPS times, interleaved (a burst of load hits all of them alike),
# leaving $work/TOOL.median
measure() {
  local collective=$1 np=$2 tool rep
  shift 2
  rm -f "$work"/*.rep.* "$work"/*.median
  for rep in $(seq 1 "$REPS"); do
    for tool in "$@"; do
      sweep "$tool" "$collective" "$np" >"$work/$tool.rep.$rep"
    done
  done
  for tool in "$@"; do median_of "$work/$tool".rep.* >"$work/$tool.median"; done
}
mpi_tuned() { mpi "$1" "$2" tuned; }

memcpy_gbs=$("${rt[@]}" "$peers/memcpy_bandwidth")
summary=$work/summary
: >"$summary"
echo "compare: single-thread memcpy on this machine: $memcpy_gbs GB/s (256 MiB, best of 10); $REPS repetitions, $SMALL_ITERS iterations up to $SMALL_MAX B and $ITERS above, medians"
for collective in $([ "$within" = 1 ] && echo all_reduce all_gather); do
  for np in 2 4; do
    measure "$collective" "$np" ours mpi_tuned mpi gloo
    echo
    echo "# $collective, $np ranks: busbw in GB/s (median of $REPS; spread % of our time), ratio = our busbw / peer's (>1: ours faster)"
    printf '# %10s %14s %8s %8s %8s %9s %9s %9s %9s\n' bytes ours mpi_t mpi gloo ours/mpi_t ours/mpi ours/gloo ours_us
    join <(sort -k1,1 "$work/ours.median") <(sort -k1,1 "$work/mpi_tuned.median") | join - <(sort -k1,1 "$work/mpi.median") |
      join - <(sort -k1,1 "$work/gloo.median") | sort -n | awk -v n="$np" -v c="$collective" -v summary="$summary" -v memcpy="$memcpy_gbs" '{
        f = (c == "all_reduce") ? 2 * (n - 1) / n : (n - 1) / n;
        bw = $1 / $2 / 1000 * f;
        printf "  %10d %8.2f (%2d%%) %8.2f %8.2f %8.2f %9.2f %9.2f %9.2f %9.1f\n",
          $1, bw, $3, $1 / $4 / 1000 * f, $1 / $6 / 1000 * f, $1 / $8 / 1000 * f, $4 / $2, $6 / $2, $8 / $2, $2
        print c, n, $1, $4 / $2, bw / memcpy >> summary }'
  done
done

[ "$within" = 1 ] && echo && echo "# goals (issue 10), from the tables above; the machine's load is whatever it was during this run"
awk -v memcpy="$memcpy_gbs" '
  $3 >= 1048576 { key = $1 " at " $2 " ranks"; if (!(key in low) || $4 < low[key]) { low[key] = $4; at[key] = $3 } }
  $3 < 1048576 { key = $1 " at " $2 " ranks"; if (!(key in small) || $4 < small[key]) { small[key] = $4; sat[key] = $3 } }
  $1 == "all_reduce" && $2 == 2 && $3 >= 67108864 { frac[$3] = $5 }
  END {
    for (k in low) printf "  %-24s 1 MiB and up: lowest ours/mpi_t %.2f (at %d B)  %s\n", k, low[k], at[k], (low[k] >= 1 ? "goal met (>= 1.0)" : "goal NOT met (>= 1.0)")
    for (k in small) printf "  %-24s below 1 MiB:  lowest ours/mpi_t %.2f (at %d B)\n", k, small[k], sat[k]
    for (s in frac) printf "  all_reduce at 2 ranks, %d B: busbw %.0f%% of memcpy (%s GB/s)  %s\n", s, frac[s] * 100, memcpy, (frac[s] >= 0.5 ? "goal met (>= 50%)" : "goal NOT met (>= 50%)")
  }' "$summary" | sort

[ "$across" = 1 ] || exit 0

# ---- across nodes: two network namespaces joined by one veth link ----
command -v iperf3 >/dev/null || { echo "compare_cpu_collectives.sh: --across-nodes needs iperf3 (apt-get install iperf3)" >&2; exit 1; }
across_down
ip netns add "$ns_a" && ip netns add "$ns_b"
ip link add gdcmp0 netns "$ns_a" type veth peer name gdcmp1 netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/24" dev gdcmp0 && ip -n "$ns_b" addr add "$addr_b/24" dev gdcmp1
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set gdcmp0 up && ip -n "$ns_b" link set gdcmp1 up
in_a() { ip netns exec "$ns_a" "$@"; }
in_b() { ip netns exec "$ns_b" "$@"; }

# iperf3, one stream, B -> A
in_a iperf3 -s -1 -p 15201 >/dev/null 2>&1 &
sleep 0.5
iperf_gbs=$(in_b iperf3 -c "$addr_a" -p 15201 -t 3 -f g 2>/dev/null | awk '/receiver/ {for (i = 1; i <= NF; i++) if ($i == "Gbits/sec") print $(i - 1) / 8}')
wait
# For context (the goal is the single stream): one stream each way at once, as a ring step sends
# and receives at the same time; the slower direction's rate.
in_a iperf3 -s -1 -p 15202 >/dev/null 2>&1 &
sleep 0.5
bidir_gbs=$(in_b iperf3 -c "$addr_a" -p 15202 -t 3 -f g --bidir 2>/dev/null |
  awk '/receiver/ {for (i = 1; i <= NF; i++) if ($i == "Gbits/sec") { v = $(i - 1) / 8; if (min == "" || v < min) min = v } } END {print min}')
wait
echo
echo "# across nodes (two network namespaces, one veth link, one rank in each): iperf3 single stream ${iperf_gbs} GB/s; both ways at once ${bidir_gbs} GB/s each (slower direction)"

# Up to 64 MiB across the link (ACROSS_MAX): past that each size only takes longer at the same rate.
MAX=${ACROSS_MAX:-$((MAX < 67108864 ? MAX : 67108864))}
MIN=${ACROSS_MIN:-$((MIN > 1048576 ? MIN : 1048576))}
# Ours with PER ranks in each namespace (the lower ones in A), GPUDIRECT_COMM_BY_HOST=BY_HOST.
ours_in_namespaces() {  # collective per by_host -> "bytes us"
  local per=$2 n=$(($2 * 2)) port=$((15300 + RANDOM % 500)) pids=() r
  # torchrun-style ranks: their rendezvous secret in the environment, never on a command line.
  local -x GPUDIRECT_RENDEZVOUS_SECRET
  GPUDIRECT_RENDEZVOUS_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  for r in $(seq $((n - 1)) -1 0); do
    local ns=$ns_b host=node-b nic=gdcmp1
    [ "$r" -lt "$per" ] && ns=$ns_a host=node-a nic=gdcmp0
    local run=(ip netns exec "$ns" "${rt[@]}" env GPUDIRECT_COMM_BY_HOST="$3" RANK=$r WORLD_SIZE=$n LOCAL_RANK=$((r % per))
      LOCAL_WORLD_SIZE=$per MASTER_ADDR=$addr_a MASTER_PORT=$port FI_TCP_IFACE=$nic
      unshare --uts sh -c "hostname $host; exec \"$launch\" bench $1 -b $MIN -e $MAX -f 4 -n $ITERS -w 3 -c 0 -a 0 --backend libfabric")
    if [ "$r" = 0 ]; then
      "${run[@]}" 2>&1 | awk -v backend="$work/across_backend" '/^ +[0-9]+ +[0-9]+ / {print $1, $6} /^\[0\] +[0-9]+ +[0-9]+ / {print $2, $7}
        /^# gpudirect-launch bench/ {print > backend}'
    else
      "${run[@]}" >/dev/null 2>&1 &
      pids+=($!)
    fi
  done
  wait "${pids[@]}"
}
ours_across() { ours_in_namespaces "$1" 1 1; }
# Open MPI across the namespaces: mpirun in A starts the remote orted in B through an "rsh agent"
# that enters B's namespace instead of ssh.
agent=$work/netns-agent
cat >"$agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in node-b) exec ip netns exec $ns_b sh -c "\$*" ;; *) exec sh -c "\$*" ;; esac
EOF
chmod +x "$agent"
printf '%s slots=1\nnode-b slots=1\n' "$addr_a" >"$work/hostfile"
mpi_across() {  # collective -> "bytes us"
  in_a "${rt[@]}" mpirun --allow-run-as-root -np 2 --bind-to none --hostfile "$work/hostfile" --mca plm_rsh_agent "$agent" --mca btl tcp,self \
    --mca btl_tcp_if_include 10.97.0.0/24 --mca oob_tcp_if_include 10.97.0.0/24 -x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=1000000000000 \
    "$peers/mpi_collectives" -c "$1" -b "$MIN" -e "$MAX" -n "$ITERS" -w 3 2>/dev/null || true
}
for collective in all_reduce all_gather; do
  measure "$collective" 2 ours_across mpi_across
  echo "# $collective, 2 ranks across the link ($(grep -o 'libfabric:[^ ]*' "$work/across_backend" 2>/dev/null || echo '?')): busbw GB/s, ours as a fraction of iperf3's single stream, ratio ours/mpi_tcp"
  printf '# %10s %8s %8s %12s %11s\n' bytes ours mpi_tcp ours/iperf3 ours/mpi_tcp
  if [ -s "$work/mpi_across.median" ]; then
    join <(sort -k1,1 "$work/ours_across.median") <(sort -k1,1 "$work/mpi_across.median")
  else
    awk '{print $0, "nan", 0}' "$work/ours_across.median"
  fi | sort -n | awk -v c="$collective" -v iperf="$iperf_gbs" '{
      f = (c == "all_reduce") ? 1 : 0.5;
      bw = $1 / $2 / 1000 * f; mbw = ($4 == "nan") ? 0 : $1 / $4 / 1000 * f
      printf "  %10d %8.2f %8.2f %12.2f %11s\n", $1, bw, mbw, bw / iperf, (mbw > 0 ? sprintf("%.2f", bw / mbw) : "n/a") }'
done

[ "$by_host" = 1 ] || exit 0
ours_by_host() { ours_in_namespaces "$1" 2 1; }
ours_one_ring() { ours_in_namespaces "$1" 2 0; }
echo
echo "# 2 ranks in each namespace (4 ranks on this machine's cores): by host against one ring over all ranks"
for collective in all_reduce all_gather reduce_scatter; do
  measure "$collective" 4 ours_by_host ours_one_ring
  echo "# $collective, 2 x 2 ranks across the link: busbw GB/s (median of $REPS), ratio by_host/one_ring"
  printf '# %10s %8s %8s %15s\n' bytes by_host one_ring by_host/one_ring
  join <(sort -k1,1 "$work/ours_by_host.median") <(sort -k1,1 "$work/ours_one_ring.median") | sort -n | awk -v c="$collective" '{
      f = (c == "all_reduce") ? 1.5 : 0.75;
      printf "  %10d %8.2f %8.2f %15.2f\n", $1, $1 / $2 / 1000 * f, $1 / $4 / 1000 * f, $4 / $2 }'
done
