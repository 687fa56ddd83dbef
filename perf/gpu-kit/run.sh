#!/usr/bin/env bash
# The whole GPU check in one command, on a GPU machine that has CUDA's libraries only in torch's
# wheels and none of this project's build dependencies. Made by perf/gpu-kit/make-kit.sh; run as
#   bash KIT/run.sh [--out DIR] [--budget SECONDS] [--speed-steps N] [--cuda-libs DIRS] [--peak-tflops X] [--dry-run]
#
# In this order, each step skipped when what is left of the budget (default 460 s: it stops itself
# before 8 minutes) is less than its estimate, and each GPU step stopped, naming the cause, where
# there is no usable CUDA device:
#    1. CUDA's libraries: torch's wheel folders first (<site-packages>/nvidia/cu13/lib, nvidia/nccl/lib),
#       nvidia-smi and the driver's libraries (/usr/local/nvidia), compute-sanitizer; the kit's
#       libraries unpacked; every library of every binary must resolve; cuBLAS must load
#    2. the CPU reference (OpenBLAS) trains the tiny model 2 steps; where OpenBLAS's own kernel
#       choice fails it is tried again with OPENBLAS_CORETYPE=Haswell, kept for what follows;
#       the mock token file (llm.c .bin v1) reads
#    3. tests/gpu/check_cuda_training.sh: the CUDA model against the CPU reference (with each attention,
#       the tensor-core one also against the reference kernels), train --backend nccl against
#       libfabric, ZeRO-1 forced at one GPU against replicated
#    4. compute-sanitizer memcheck, train_cuda_check on tiny (--attention tensor-core: both attentions)
#    5. the speed table: gpt2-124m, T 1024, micro-batch 16 then 32: ours with the reference (warp-per-row)
#       and the tensor-core attention (train --attention, where the build has it), and with the
#       tensor-core attention and the fast paths of issue 34 item 3 that change one GPU's speed; llm.c's train_gpt2cu when
#       the kit has one; PyTorch eager (bf16 autocast) where torch imports; all on the kit's token
#       file; median step time after the first step, tokens/s, MFU by one formula for all columns;
#       our memory plan vs cudaMemGetInfo vs nvidia-smi's peak
#    6. compute-sanitizer racecheck, train_cuda_check on tiny
#    7. ZeRO-1 forced at one GPU under memcheck
#    8. the node check against the real NVML, where this build has one
#    9. extras while time is left: compute-sanitizer synccheck, train_cuda_check on tiny
# Writes 3 files into --out (default $OUT, else ./gpu-kit-out), appending, never deleting:
#   kit-run.log (every command and all its output), kit-speed.tsv (the speed table), kit-summary.txt
#   (the summary, also printed last). Scratch (unpacked libraries, checkpoints) goes to a new
#   directory under TMPDIR, kept and named.
# Exit: 0 all ran and passed; 1 a step failed; 2 no usable CUDA device (GPU steps stopped);
#       3 all that ran passed but steps were skipped for time; 6 usage. --dry-run: everything but the
#       workloads (libraries found, unpacked and resolved, cuBLAS loaded, the device probed), then the
#       plan; 0 when the kit can start here.
# Tools it needs: bash, coreutils (mkdir mktemp cat head tail sort wc cut tr timeout uname nproc),
#   grep, sed, awk, and /lib64/ld-linux-x86-64.so.2; python3 for PyTorch's column and the check's
#   comparisons; xz is the kit's own.
set -euo pipefail

kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-$PWD/gpu-kit-out}
budget=460
dry_run=0
speed_steps=12
cuda_libs=""
peak_tflops=""
loader=/lib64/ld-linux-x86-64.so.2

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out DIR}; shift 2 ;;
    --budget) budget=${2:?--budget SECONDS}; shift 2 ;;
    --speed-steps) speed_steps=${2:?--speed-steps N}; shift 2 ;;
    --cuda-libs) cuda_libs=${2:?--cuda-libs DIR[:DIR]}; shift 2 ;;
    --peak-tflops) peak_tflops=${2:?--peak-tflops X}; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (bash $0 --help)" >&2; exit 6 ;;
  esac
done

t0=$SECONDS
mkdir -p "$out"
log=$out/kit-run.log
speed_tsv=$out/kit-speed.tsv
summary_file=$out/kit-summary.txt
work=$(mktemp -d "${TMPDIR:-/tmp}/gpudirect-kit.XXXXXX")
launch=$kit/build/launcher/gpudirect-launch
llmc_problem=""
check=$kit/build/tests/train_cuda_check
llmc=$kit/peers/train_gpt2cu

say() {
  local line
  line=$(printf '[%3ds] %s' "$((SECONDS - t0))" "$*")
  printf '%s\n' "$line"
  printf '%s\n' "$line" >>"$log"
}
step_names=() step_states=() step_details=()
record() {  # name state detail
  step_names+=("$1")
  step_states+=("$2")
  step_details+=("$3")
  say "$1: $2${3:+: $3}"
}

printf '\n########## gpudirect GPU kit, %s, %s\n' "$(uname -n)" "$(sed -n 's/^source: //p' "$kit/MANIFEST.txt" 2>/dev/null)" >>"$log"
say "gpudirect GPU kit ($(sed -n 's/^source: //p' "$kit/MANIFEST.txt" 2>/dev/null || echo 'no MANIFEST.txt')): budget ${budget} s, $( [ $dry_run = 1 ] && echo 'DRY RUN, ')results in $out, scratch in $work (kept)"

# ---------------------------------------------------------------- the summary (also on a signal)
gpu_name="" driver="" peak_source=""
speed_rows=()
row_brief=""
print_summary() {
  local status=$1 i
  {
    echo
    echo "== gpudirect GPU kit: summary ($(uname -n); GPU: ${gpu_name:-none}${driver:+, driver $driver}; $(nproc) CPUs; $((SECONDS - t0)) s of ${budget})"
    printf '%-62s %-9s %s\n' "step" "result" "detail"
    for i in "${!step_names[@]}"; do
      printf '%-62s %-9s %s\n' "${step_names[$i]}" "${step_states[$i]}" "${step_details[$i]}"
    done
    if [ ${#speed_rows[@]} -gt 0 ]; then
      echo
      echo "speed: gpt2-124m (L12 H12 C768 T1024 V50257), median step time after the first; MFU = tokens/s x (6N + 6LCT) / peak,"
      echo "       N = $n_params, $flops_per_token FLOP/token, peak ${peak_tflops:-unknown} TFLOP/s (${peak_source:-no GPU name}); memory in GiB"
      printf '%-44s %3s %5s %9s %10s %6s %6s %11s %11s %6s  %s\n' \
        "run" "B" "steps" "ms/step" "tokens/s" "MFU%" "plan" "getinfo-alloc" "getinfo-end" "smi-peak" "note"
      printf '%s\n' "${speed_rows[@]}"
    fi
    echo "files: $log, $speed_tsv, $summary_file; scratch $work"
    echo "run.sh: $status"
  } | tee -a "$summary_file"
}
on_signal() {
  record "run.sh" INTERRUPTED "by a signal after $((SECONDS - t0)) s"
  print_summary "interrupted"
  exit 130
}
trap on_signal INT TERM

# ---------------------------------------------------------------- running a step within the budget
gpu_stop=""      # non-empty: why GPU steps cannot run here
planned=0        # the dry run's clock: the estimates of the steps it would have run
extra=0          # 1 for the extras at the end: left out for time, they do not make the run incomplete
step_log="" step_rc=0 step_secs=0
# run_step ID NAME ESTIMATE_S MAX_S NEEDS_GPU -- COMMAND...: 0 when it ran (step_rc, step_log set), 1 when not (recorded)
run_step() {
  local id=$1 name=$2 est=$3 max=$4 gpu=$5 left limit s0 shown
  shift 6
  shown="$*"
  shown=${shown/"env LD_LIBRARY_PATH=$kit_ld "/}  # the same for every command of ours: said once, above
  step_log=$work/$id.log
  step_rc=0
  if [ "$gpu" = 1 ] && [ -n "$gpu_stop" ]; then
    record "$name" STOPPED "${gpu_stop%% (*}"
    return 1
  fi
  if [ "$dry_run" = 1 ]; then
    left=$((budget - (SECONDS - t0) - planned))
  else
    left=$((budget - (SECONDS - t0)))
  fi
  if [ "$left" -lt "$est" ]; then
    # an extra left out for time does not make the run incomplete; a step of the check does
    record "$name" "$([ "$extra" = 1 ] && echo 'NOT RUN' || echo SKIPPED)" "no time: needs ~${est} s, ${left} s of the budget left"
    return 1
  fi
  if [ "$dry_run" = 1 ]; then
    planned=$((planned + est))
    record "$name" "DRY RUN" "would run at ~$(((SECONDS - t0) + planned - est)) s for ~${est} s (at most ${max} s): $shown"
    return 1
  fi
  limit=$((left - 3 < max ? left - 3 : max))
  say "$name: running (~${est} s expected, stopped at ${limit} s): $shown"
  printf '\n===== %s: %s\n' "$name" "$*" >>"$log"
  s0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$step_log" 2>&1 || step_rc=$?
  step_secs=$((SECONDS - s0))
  cat "$step_log" >>"$log"
  printf '===== %s: exit %s after %s s\n' "$name" "$step_rc" "$step_secs" >>"$log"
  if [ "$step_rc" = 124 ] || [ "$step_rc" = 137 ]; then
    say "$name: stopped by its time limit (${limit} s)"
  fi
  return 0
}
timed_out() { [ "$step_rc" = 124 ] || [ "$step_rc" = 137 ]; }
# The first line of the step's log matching a pattern (or its last line), for the summary.
log_line() { grep -m1 -E "$1" "$step_log" || tail -n1 "$step_log"; }
show() { grep -E "$1" "$step_log" | head -n "${2:-40}" || true; }  # lines worth seeing on stdout

# ---------------------------------------------------------------- 1. CUDA's libraries, the kit's libraries
python=""
for p in /opt/torch/.venv/bin/python3 "$(command -v python3 || true)"; do
  if [ -n "$p" ] && [ -x "$p" ]; then python=$p; break; fi
done
[ -n "$python" ] && PATH=$(dirname "$python"):$PATH  # the check's python3 is torch's
site_dirs=()
if [ -n "$python" ]; then
  while IFS= read -r d; do site_dirs+=("$d"); done < <("$python" -c \
    'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null || true)
fi
for d in /opt/torch/.venv/lib/python3*/site-packages /usr/local/lib/python3*/dist-packages /usr/local/lib/python3*/site-packages \
  /usr/lib/python3/dist-packages; do
  [ -d "$d" ] && site_dirs+=("$d")
done
find_lib() {  # soname, candidate directories...: the first directory holding it
  local name=$1 d
  shift
  for d in "$@"; do
    if [ -n "$d" ] && [ -e "$d/$name" ]; then echo "$d"; return 0; fi
  done
  return 1
}
wheel_dirs() {  # subfolders of nvidia/ in every site-packages
  local sp sub
  for sp in "${site_dirs[@]}"; do for sub in "$@"; do echo "$sp/nvidia/$sub/lib"; done; done
}
toolkit_dirs=(/usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib)
given_dirs=()
[ -z "$cuda_libs" ] || IFS=: read -r -a given_dirs <<<"$cuda_libs"
mapfile -t cublas_wheels < <(wheel_dirs cu13 cublas)
mapfile -t nccl_wheels < <(wheel_dirs nccl cu13)
mapfile -t cublas_candidates < <(printf '%s\n' "${given_dirs[@]}" "${cublas_wheels[@]}" "${toolkit_dirs[@]}" | grep .)
mapfile -t nccl_candidates < <(printf '%s\n' "${given_dirs[@]}" "${nccl_wheels[@]}" "${toolkit_dirs[@]}" /usr/lib/x86_64-linux-gnu | grep .)
cublas_dir=$(find_lib libcublas.so.13 "${cublas_candidates[@]}" || true)
nccl_dir=$(find_lib libnccl.so.2 "${nccl_candidates[@]}" || true)
where() { case $1 in */nvidia/*) echo "torch's wheel" ;; *) echo "not a wheel: given or the CUDA toolkit's" ;; esac; }
if [ -z "$nccl_dir" ]; then
  record "CUDA libraries" FAILED "libnccl.so.2 not found (looked in ${nccl_candidates[*]}); our binaries cannot start: give --cuda-libs DIR"
  print_summary "FAILED (exit 1)"
  exit 1
fi
if [ -z "$cublas_dir" ]; then
  gpu_stop="libcublas.so.13 not found (looked in ${cublas_candidates[*]}): give --cuda-libs DIR"
fi
# nvidia-smi and the driver's libraries: often outside PATH and the loader's path (/usr/local/nvidia)
smi=$(command -v nvidia-smi || true)
for d in /usr/local/nvidia/bin /usr/bin /opt/nvidia/bin; do
  if [ -z "$smi" ] && [ -x "$d/nvidia-smi" ]; then smi=$d/nvidia-smi; PATH=$PATH:$d; fi
done
driver_dirs=""
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && driver_dirs+=:$d; done
sanitizer=$(command -v compute-sanitizer || true)
for d in /usr/local/cuda/bin /usr/local/cuda-13*/bin /opt/nvidia/compute-sanitizer; do
  if [ -z "$sanitizer" ] && [ -x "$d/compute-sanitizer" ]; then sanitizer=$d/compute-sanitizer; fi
done
export PATH
# Our binaries (and llm.c's) get the kit's libraries and CUDA's on the loader's path; nothing else
# does (PyTorch, nvidia-smi and the system's tools keep their own, newer libz, liblzma, ...).
kit_ld=$work/lib${cublas_dir:+:$cublas_dir}:$nccl_dir$driver_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
with_kit=(env "LD_LIBRARY_PATH=$kit_ld")
say "our binaries run with LD_LIBRARY_PATH=$kit_ld"
say "cuBLAS: ${cublas_dir:-NOT FOUND}${cublas_dir:+ ($(where "$cublas_dir"))}; NCCL: $nccl_dir ($(where "$nccl_dir")); python3: ${python:-none}"
say "nvidia-smi: ${smi:-not found}; compute-sanitizer: ${sanitizer:-not found}; driver libraries: ${driver_dirs#:}"

# The kit's libraries: its own xz first (many images have none), then the system's, then python's lzma.
mkdir -p "$work/lib"
unpack() {  # FILE.xz DEST
  "$loader" --library-path "$kit/tools" "$kit/tools/xz" -dc "$1" >"$2" 2>/dev/null && return 0
  command -v xz >/dev/null && xz -dc "$1" >"$2" && return 0
  [ -n "$python" ] && "$python" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"
}
count=0 pids=() packed=()
for f in "$kit"/lib/*.xz "$kit/data/tokens.bin.xz"; do  # all at once: a few seconds on one core, less on many
  dest=$work/lib/$(basename "${f%.xz}")
  [ "$f" = "$kit/data/tokens.bin.xz" ] && dest=$work/tokens.bin
  unpack "$f" "$dest" &
  pids+=($!)
  packed+=("$f")
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    record "kit libraries" FAILED "cannot decompress ${packed[$i]} (the kit's xz, xz and python3's lzma all failed): is the kit complete?"
    print_summary "FAILED (exit 1)"
    exit 1
  fi
  count=$((count + 1))
done
# Every ELF of the kit must resolve every library it needs, through the loader itself.
unresolved_by() {  # ELF...: what the loader cannot resolve for each, empty when all resolve
  local elf list_rc listing missing
  for elf in "$@"; do
    list_rc=0
    listing=$("$loader" --library-path "$kit_ld" --list "$elf" 2>&1) || list_rc=$?
    missing=$(printf '%s\n' "$listing" | awk '/not found/ {print $1}' | tr '\n' ' ')
    if [ -n "$missing" ]; then
      printf '%s needs %s; ' "$(basename "$elf")" "${missing% }"
    elif [ "$list_rc" != 0 ]; then
      printf '%s: %s; ' "$(basename "$elf")" "$(printf '%s\n' "$listing" | tail -n1)"
    fi
  done
}
elves=("$launch" "$check" "$work"/lib/*.so*)
unresolved=$(unresolved_by "${elves[@]}")
if [ -x "$llmc" ]; then  # a peer that cannot start costs its column, not the check
  llmc_problem=$(unresolved_by "$llmc")
  if [ -n "$llmc_problem" ]; then
    record "llm.c train_gpt2cu" FAILED "cannot start here: ${llmc_problem%; } (its column is left out)"
  fi
fi
if [ -n "$unresolved" ]; then
  record "kit libraries" FAILED "${unresolved%; }; give --cuda-libs DIR for CUDA's, or remake the kit"
  print_summary "FAILED (exit 1)"
  exit 1
fi
resolved=$("$loader" --library-path "$kit_ld" --list "$launch" | awk '$2 == "=>" {print $3}')
record "kit libraries" ok "$count files unpacked; every library of the ${#elves[@]} ELF files resolves (NCCL: $(echo "$resolved" | grep -m1 libnccl))"

# cuBLAS loads, and is there a CUDA device: train_cuda_check --device-only says both.
probe_rc=0
probe=$(timeout 60 "${with_kit[@]}" "$check" --device-only 2>&1) || probe_rc=$?
printf '\n===== train_cuda_check --device-only (exit %s)\n%s\n' "$probe_rc" "$probe" >>"$log"
cublas_line=$(printf '%s\n' "$probe" | sed -n 's/^train_cuda_check: cuBLAS //p')
if [ "$cublas_line" = loads ]; then
  record "cuBLAS" ok "libcublas.so.13 loads from ${cublas_dir}"
else
  record "cuBLAS" FAILED "${cublas_line:-train_cuda_check --device-only printed nothing about it (exit $probe_rc)}"
  gpu_stop="cuBLAS does not load: ${cublas_line:-see kit-run.log}"
fi
listed=0
if [ -n "$smi" ]; then
  listed=$("$smi" -L 2>/dev/null | grep -c '^GPU' || true)
  gpu_name=$("$smi" --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || true)
  driver=$("$smi" --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null || true)
fi
device_line=$(printf '%s\n' "$probe" | sed -n 's/^train_cuda_check: SKIPPED: //p')
if [ -n "$device_line" ]; then
  cause=${device_line#no CUDA device (}
  cause=${cause%)}
  [ -e /dev/nvidia0 ] || cause+="; no /dev/nvidia0"
  gpu_stop="no CUDA device ($cause; nvidia-smi: ${smi:-not found}, $listed GPU(s) listed${driver:+, driver $driver})"
  record "CUDA device" STOPPED "$gpu_stop"
elif [ "$probe_rc" -ne 0 ]; then
  gpu_stop="no usable CUDA device: train_cuda_check --device-only exit $probe_rc: $(printf '%s\n' "$probe" | tail -n1)"
  record "CUDA device" FAILED "$gpu_stop"
else
  record "CUDA device" ok "$(printf '%s\n' "$probe" | grep -v cuBLAS | sed -n 's/^train_cuda_check: //p' | head -n1); nvidia-smi lists $listed"
fi
[ -n "$gpu_name" ] || gpu_name=$(printf '%s\n' "$probe" | sed -n '/cuBLAS\|SKIPPED/!s/^train_cuda_check: \(.*\) \[.*/\1/p' | head -n1)

# ---------------------------------------------------------------- 2. the CPU reference (OpenBLAS)
cpu_ok() { [ "$step_rc" = 0 ] && grep -q 'gpudirect train: summary: 2 step' "$step_log" && ! grep -qiE 'summary:.*(nan|inf)' "$step_log"; }
cpu_cmd=("${with_kit[@]}" "$launch" train --backend libfabric --preset tiny --steps 2 --data mock --progress-seconds 0)
if run_step cpu "CPU reference (OpenBLAS): tiny, 2 steps" 15 90 0 -- "${cpu_cmd[@]}"; then
  show '^(step|gpudirect train: summary)'
  if cpu_ok; then
    record "CPU reference (OpenBLAS): tiny, 2 steps" PASSED "$(log_line 'summary:' | sed 's/^gpudirect train: summary: //; s/, exposed comm.*//')"
  else
    first="exit $step_rc: $(tail -n1 "$step_log")"
    if run_step cpu-haswell "CPU reference with OPENBLAS_CORETYPE=Haswell" 15 90 0 -- "${cpu_cmd[@]:0:2}" OPENBLAS_CORETYPE=Haswell "${cpu_cmd[@]:2}" && cpu_ok; then
      export OPENBLAS_CORETYPE=Haswell
      record "CPU reference (OpenBLAS): tiny, 2 steps" PASSED "only with OPENBLAS_CORETYPE=Haswell (kept for every step below; OpenBLAS's own choice: $first)"
    else
      record "CPU reference (OpenBLAS): tiny, 2 steps" FAILED "$first; with OPENBLAS_CORETYPE=Haswell: exit $step_rc: $(tail -n1 "$step_log") (the CPU reference is what the GPU is compared with: fix this first)"
    fi
  fi
fi
if run_step tokens "token file (llm.c .bin v1) read by ours" 10 60 0 -- \
  "${with_kit[@]}" "$launch" train --backend libfabric --preset tiny --vocab 50257 --steps 1 --data "$work/tokens.bin" --progress-seconds 0; then
  if [ "$step_rc" = 0 ]; then
    record "token file (llm.c .bin v1) read by ours" PASSED "$(log_line '; data ' | sed -n 's/.*; data \([^;]*\);.*/\1/p')"
  else
    record "token file (llm.c .bin v1) read by ours" FAILED "exit $step_rc: $(tail -n1 "$step_log")"
  fi
fi

# ---------------------------------------------------------------- 3. the CUDA model against the CPU reference
# Both attentions: the tensor-core one adds two train_cuda_check runs and a train run (estimate, not measured).
if run_step check "check_cuda_training (CPU vs GPU, ZeRO-1 forced vs replicated)" 120 280 1 -- \
  "${with_kit[@]}" GPUDIRECT_REQUIRE_GPU=1 GPUDIRECT_CHECK_WORK="$work/check" bash "$kit/tests/gpu/check_cuda_training.sh" "$kit/build"; then
  show '^(== |  ok|  FAIL|.*: (PASSED|FAILED)|CPU vs CUDA|1 GPU|  (parameters|first|second))' 60
  if grep -q '^check_cuda_training: PASSED' "$step_log"; then
    record "check_cuda_training (CPU vs GPU, ZeRO-1 forced vs replicated)" PASSED "$(grep -c '^  ok' "$step_log") checks ok, none failed"
  elif timed_out; then
    record "check_cuda_training (CPU vs GPU, ZeRO-1 forced vs replicated)" FAILED "stopped by its time limit after ${step_secs} s (see kit-run.log)"
  else
    record "check_cuda_training (CPU vs GPU, ZeRO-1 forced vs replicated)" FAILED "$(grep -m3 -E 'FAIL|differ|error' "$step_log" | tr '\n' ' ')"
  fi
fi

# ---------------------------------------------------------------- sanitizer steps
sanitize() {  # id name est max tool summary-regex also-regex [env...] -- command...
  local id=$1 name=$2 est=$3 max=$4 tool=$5 pass=$6 also=$7
  shift 7
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if [ -z "$gpu_stop" ] && [ -z "$sanitizer" ]; then
    record "$name" STOPPED "compute-sanitizer not found (PATH, /usr/local/cuda/bin, /usr/local/cuda-13*/bin)"
    return
  fi
  if run_step "$id" "$name" "$est" "$max" 1 -- "${with_kit[@]}" "${envs[@]}" "${sanitizer:-compute-sanitizer}" --tool "$tool" "$@"; then
    show 'SUMMARY|Device not supported|Error' 10
    if [ "$step_rc" = 0 ] && grep -qE "$pass" "$step_log" && { [ -z "$also" ] || grep -qE "$also" "$step_log"; }; then
      record "$name" PASSED "$(log_line 'SUMMARY' | sed 's/^=* *//')"
    elif [ "$step_rc" = 0 ] && grep -qE "$pass" "$step_log"; then
      record "$name" FAILED "clean, but its output lacks '$also'"
    elif timed_out; then
      record "$name" FAILED "stopped by its time limit after ${step_secs} s"
    else
      record "$name" FAILED "exit $step_rc: $(log_line 'SUMMARY|not supported|rror' | sed 's/^=* *//')"
    fi
  fi
}
# Whether this build has the tensor-core attention (train --attention, issue 34 item 2). Help is read
# whole first: with pipefail, grep -q quitting early would fail the pipe with SIGPIPE.
attention_switch=0
train_help=$("${with_kit[@]}" "$launch" train --help 2>/dev/null || true)
if grep -q -- '--attention' <<<"$train_help"; then attention_switch=1; fi
# The fast paths of issue 34 item 3 that change speed at one GPU (not --recompute, which trades time
# for memory, nor --nccl-high-priority, which needs 2+ ranks), those this build has.
fast_paths=()
for s in --pad-vocab --fused-classifier --gemm-epilogues --layernorm-all-sms --multi-tensor-adamw --vector-loads; do
  if grep -q -- "$s" <<<"$train_help"; then fast_paths+=("$s"); fi
done
# With --attention tensor-core the check runs both attentions' kernels (one layer each, and a
# forward/backward of the model with each) besides its steps with the tensor-core one.
memcheck_args=(--preset tiny --steps 2) memcheck_name="memcheck: train_cuda_check, tiny, 2 steps"
if [ "$attention_switch" = 1 ]; then memcheck_args+=(--attention tensor-core) memcheck_name+=", both attentions"; fi
sanitize memcheck "$memcheck_name" 75 180 memcheck 'ERROR SUMMARY: 0 errors' 'train_cuda_check: PASSED' -- "$check" "${memcheck_args[@]}"

# ---------------------------------------------------------------- 5. the speed table
n_params=124439808                        # gpt2-124m at V 50257: V*C + T*C + L*(12C^2 + 13C) + 2C
flops_per_token=$((6 * n_params + 6 * 12 * 768 * 1024))
if [ -z "$peak_tflops" ]; then            # dense bf16, as launcher/train/cuda/device_peak.cpp
  case $gpu_name in
    *H200*NVL* | *H100*NVL*) peak_tflops=835 ;;
    *H100*PCIe*) peak_tflops=756 ;;
    *H200* | *H100*) peak_tflops=989 ;;
    *A100*) peak_tflops=312 ;;
  esac
  if [ -n "$peak_tflops" ]; then peak_source="dense bf16 of $gpu_name"; fi
else
  peak_source="--peak-tflops"
fi
printf 'run\tmicro_batch\tsteps_timed\tmedian_ms\ttokens_per_s\tmfu\tplan_gib\tgetinfo_alloc_gib\tgetinfo_end_gib\tsmi_peak_gib\tnote\n' >>"$speed_tsv"
smi_pid=""
smi_start() {
  smi_file=$work/$1.smi
  : >"$smi_file"
  if [ -n "$smi" ] && [ -z "$gpu_stop" ] && [ "$dry_run" = 0 ]; then
    "$smi" --query-gpu=memory.used --format=csv,noheader,nounits -i 0 -lms 200 >"$smi_file" 2>/dev/null &
    smi_pid=$!
  fi
}
smi_stop() {
  if [ -n "$smi_pid" ]; then kill "$smi_pid" 2>/dev/null || true; wait "$smi_pid" 2>/dev/null || true; fi
  smi_pid=""
}
# Step times (ms) of every step after the first: the "| X ms |" field of ours, llm.c's and torch_speed's lines.
median_ms() {
  awk -F'|' '$0 ~ /^(torch )?step / { for (i = 2; i <= NF; i++) if ($i ~ /^ *[0-9.]+ ms *$/) { n++; if (n > 1) print $i + 0 } }' "$step_log" |
    sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) exit; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%d\n", NR }'
}
speed_row() {  # label B note [plan alloc end]
  local label=$1 b=$2 note=$3 plan=${4:--} alloc=${5:--} end=${6:--} m ms timed tps mfu peak
  m=$(median_ms)
  ms=$(echo "$m" | sed -n 1p)
  timed=$(echo "$m" | sed -n 2p)
  peak=$(awk 'max < $1 + 0 { max = $1 + 0 } END { if (NR) printf "%.2f", max / 1024 }' "$smi_file")
  if [ -n "$ms" ]; then
    tps=$(awk -v b="$b" -v ms="$ms" 'BEGIN { printf "%.0f", b * 1024 * 1000 / ms }')
    mfu=$( [ -n "$peak_tflops" ] && awk -v t="$tps" -v f="$flops_per_token" -v p="$peak_tflops" 'BEGIN { printf "%.1f", 100 * t * f / (p * 1e12) }' || echo -)
    ms=$(awk -v ms="$ms" 'BEGIN { printf "%.1f", ms }')
  else
    ms=- tps=- mfu=- timed=0
  fi
  speed_rows+=("$(printf '%-44s %3s %5s %9s %10s %6s %6s %11s %11s %6s  %s' "$label" "$b" "$timed" "$ms" "$tps" "$mfu" "$plan" "$alloc" "$end" "${peak:--}" "$note")")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$b" "$timed" "$ms" "$tps" "$mfu" "$plan" "$alloc" "$end" "${peak:--}" "$note" >>"$speed_tsv"
  row_brief="${ms} ms/step over $timed steps, ${tps} tokens/s, MFU ${mfu}%, nvidia-smi peak ${peak:--} GiB"
  say "speed: $label, B $b: $row_brief${note:+ ($note)}"
}
run_note() {  # what went wrong in a speed run, or nothing
  if timed_out; then echo "stopped by its time limit after ${step_secs} s"
  elif [ "$step_rc" != 0 ]; then echo "exit $step_rc: $(grep -m1 -iE 'the run needs|out of (GPU )?memory|error|refused|cannot|No module' "$step_log" || tail -n1 "$step_log")"
  fi
}
speed_ours() {  # B ATTENTION (reference, tensor-core: train --attention; fast: tensor-core and the fast paths)
  local b=$1 attention=$2 name="speed: ours, gpt2-124m B $1, $2 attention" label plan alloc end switch=()
  label="ours (warp-per-row attention)"
  if [ "$attention" = tensor-core ]; then label="ours (tensor-core attention)"; fi
  if [ "$attention_switch" = 1 ]; then switch=(--attention "$attention"); fi
  if [ "$attention" = fast ]; then
    label="ours (tensor-core + fast paths)" name="speed: ours, gpt2-124m B $1, tensor-core attention + fast paths"
    switch=(--attention tensor-core "${fast_paths[@]}")
  fi
  smi_start "ours-$attention-b$b"
  if run_step "ours-$attention-b$b" "$name" 30 90 1 -- "${with_kit[@]}" "$launch" train --backend nccl --preset gpt2-124m --micro-batch "$b" \
    ${switch[@]+"${switch[@]}"} --steps "$speed_steps" --data "$work/tokens.bin" --progress-seconds 0; then
    smi_stop
    show '^gpudirect train: (memory plan|GPU memory|summary)|the run needs' 6
    plan=$(sed -n 's/.*memory plan per GPU: .*; total \([0-9.]*\) GiB.*/\1/p' "$step_log" | head -n1)
    alloc=$(sed -n 's/.*GPU memory in use after allocation: \([0-9.]*\) GiB.*/\1/p' "$step_log" | head -n1)
    end=$(sed -n 's/.*GPU memory in use at the end: \([0-9.]*\) GiB.*/\1/p' "$step_log" | head -n1)
    speed_row "$label" "$b" "$(run_note)" "${plan:--}" "${alloc:--}" "${end:--}"
    if [ "$step_rc" = 0 ]; then
      record "$name" ran "$row_brief (ours: $(log_line 'summary:' | sed 's/^gpudirect train: summary: //; s/, exposed comm.*//'))"
    elif grep -q 'the run needs .* GiB per GPU' "$step_log"; then
      record "$name" REFUSED "by the memory plan: $(grep -m1 -o 'the run needs .*' "$step_log")"
    else
      record "$name" FAILED "$(run_note)"
    fi
  fi
  smi_stop
}
speed_llmc() {  # B
  local b=$1 name="speed: llm.c train_gpt2cu, d12 B $1"
  if [ -n "$llmc_problem" ]; then
    return 0
  fi
  if [ ! -x "$llmc" ]; then
    if [ "$b" = 16 ]; then
      speed_rows+=("$(printf '%-44s %3s  %s' "llm.c train_gpt2cu (no cuDNN)" "-" "not in this kit (make-kit.sh --llmc PATH/train_gpt2cu)")")
    fi
    return 0
  fi
  smi_start "llmc-b$b"
  if run_step "llmc-b$b" "$name" 30 75 1 -- "${with_kit[@]}" "$llmc" -e d12 -b "$b" -t 1024 -d $((b * 1024)) -x "$speed_steps" \
    -s 0 -n 0 -h 0 -v 1000000 -m 1 -i "$work/tokens.bin" -j "$work/tokens.bin"; then
    smi_stop
    speed_row "llm.c train_gpt2cu (no cuDNN)" "$b" "$(run_note)"
    if [ "$step_rc" = 0 ]; then record "$name" ran "$row_brief"; else record "$name" FAILED "$(run_note)"; fi
  fi
  smi_stop
}
speed_torch() {  # B
  local b=$1 name="speed: PyTorch eager bf16, B $1"
  if [ -z "$python" ]; then
    if [ "$b" = 16 ]; then
      speed_rows+=("$(printf '%-44s %3s  %s' "PyTorch eager (bf16 autocast)" "-" "no python3 here")")
    fi
    return 0
  fi
  smi_start "torch-b$b"
  if run_step "torch-b$b" "$name" 40 90 1 -- "$python" "$kit/perf/gpu-kit/torch_speed.py" --data "$work/tokens.bin" \
    --batch "$b" --steps "$speed_steps"; then
    smi_stop
    show '^torch: ' 3
    speed_row "PyTorch eager (bf16 autocast), same model" "$b" "$(run_note)$(sed -n 's/^torch: version \([^ ]*\).*peak memory allocated \([0-9.]*\) GiB, reserved \([0-9.]*\) GiB/torch \1, allocated \2 GiB, reserved \3 GiB/p' "$step_log")"
    if [ "$step_rc" = 0 ]; then record "$name" ran "$row_brief"; else record "$name" FAILED "$(run_note)"; fi
  fi
  smi_stop
}
# Ours with both attentions (train --attention, issue 34 item 2) where the kit's build has the switch.
attentions=(reference)
if [ "$attention_switch" = 1 ]; then
  attentions+=(tensor-core)
  if [ ${#fast_paths[@]} -gt 0 ]; then
    attentions+=(fast)
    say "speed: the fast paths timed together: ${fast_paths[*]}"
  fi
else
  speed_rows+=("$(printf '%-44s %3s  %s' "ours (tensor-core attention)" "-" "not in this build (issue 34 item 2): train has no --attention")")
fi
for b in 16 32; do
  for attention in "${attentions[@]}"; do speed_ours "$b" "$attention"; done
  speed_llmc "$b"
  speed_torch "$b"
done

# ---------------------------------------------------------------- 6-7. racecheck, ZeRO-1 under memcheck
sanitize racecheck "racecheck: train_cuda_check, tiny, 1 step" 60 150 racecheck 'RACECHECK SUMMARY: 0 hazards' 'train_cuda_check: PASSED' -- \
  "$check" --preset tiny --steps 1
sanitize zero1-memcheck "memcheck: train --zero1 forced at one GPU, tiny, 3 steps" 40 120 memcheck 'ERROR SUMMARY: 0 errors' \
  'ZeRO-1 \(sharded AdamW state\)' GPUDIRECT_TRAIN_ZERO1_AT_ONE_RANK=1 -- \
  "$launch" train --backend nccl --preset tiny --steps 3 --zero1 --data mock --progress-seconds 0

# ---------------------------------------------------------------- 8. the node check against the real NVML
# A bare GPU VM is no machine type of ours: its expectations are what nvidia-smi lists (count and
# model); the rules that need no expectation (ECC, row remapping, retired pages, NVLink errors,
# throttling, PCIe below its maximum, XIDs) all run. No Slurm there, so no gres comparison.
launch_help=$("${with_kit[@]}" "$launch" --help 2>/dev/null || true)  # whole, then grep: no SIGPIPE under pipefail
if ! grep -qE '^ *check-node\b' <<<"$launch_help"; then
  record "node check (real NVML)" "NOT BUILT" "this build has no check-node (issue 33)"
else
  expectations=$work/expectations
  mkdir -p "$expectations"
  {
    echo "# made by run.sh from nvidia-smi on $(uname -n)"
    if [ "$listed" -gt 0 ]; then echo "gpu_count=$listed"; fi
    model=$(grep -oE '\b(H100|H200|B200|B300|GB200|A100|L4)\b' <<<"$gpu_name" | head -n1 || true)
    if [ -n "$model" ]; then echo "gpu_model=$model"; fi
  } >"$expectations/gpu-kit-vm.conf"
  if run_step node-check "node check (real NVML)" 20 60 1 -- "${with_kit[@]}" "$launch" check-node --machine-type gpu-kit-vm \
    --expectations-dir "$expectations" --no-gres --json; then
    show '.' 30
    # 0 passes; 7 a failing check: a finding about this GPU, worth reading, not the kit's failure
    case $step_rc in
      0) record "node check (real NVML)" PASSED "check-node: no failing check (its JSON in kit-run.log)" ;;
      7) record "node check (real NVML)" FINDINGS "check-node exit 7: failing checks $(grep -oE '"check": ?"[^"]*"' "$step_log" | sed 's/.*"\([^"]*\)"$/\1/' | sort -u | tr '\n' ' ')(its JSON in kit-run.log)" ;;
      *) record "node check (real NVML)" FAILED "check-node exit $step_rc$(timed_out && echo ' (its time limit)'): $(tail -n1 "$step_log")" ;;
    esac
  fi
fi

# ---------------------------------------------------------------- extras, while time is left
extra=1
sanitize synccheck "synccheck: train_cuda_check, tiny, 1 step" 45 120 synccheck 'ERROR SUMMARY: 0 errors' 'train_cuda_check: PASSED' -- \
  "$check" --preset tiny --steps 1

# ---------------------------------------------------------------- the verdict
status=0
for s in "${step_states[@]}"; do
  case $s in FAILED) status=1 ;; esac
done
if [ "$status" = 0 ] && [ -n "$gpu_stop" ] && [ "$dry_run" = 0 ]; then status=2; fi
if [ "$status" = 0 ] && [ "$dry_run" = 0 ]; then
  for s in "${step_states[@]}"; do
    if [ "$s" = SKIPPED ]; then status=3; fi
  done
fi
case $status in
  0) verdict="$([ "$dry_run" = 1 ] && echo 'DRY RUN done: the kit can start here' || echo 'PASSED: every step ran and passed')" ;;
  1) verdict="FAILED: see the steps marked FAILED and kit-run.log" ;;
  2) verdict="STOPPED: $gpu_stop" ;;
  3) verdict="INCOMPLETE: every step that ran passed, but some were skipped for time (--budget)" ;;
esac
print_summary "$verdict (exit $status)"
exit "$status"
