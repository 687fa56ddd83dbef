#!/usr/bin/env bash
# Proves a GPU kit (perf/gpu-kit/make-kit.sh) here, without a GPU, in a root stricter than the GPU
# machine's image: it holds only the loader, libc, libm, libstdc++, libgcc_s, libpthread, librt,
# libdl, bash (with its libtinfo), a static busybox for the few tools run.sh uses (no xz, no
# python3), and this machine's cuBLAS, cuBLASLt, cudart and NCCL bind-mounted where torch's wheels put
# them (/opt/torch/.venv/lib/python3.12/site-packages/nvidia/{cu13,nccl}/lib). The kit is mounted
# read-only. In it (unshare: its own mount and PID namespaces, then chroot):
#   1. bash /kit/run.sh --dry-run   exits 0 within seconds: every library of the kit resolves (and
#      only to the kit's own, the base set or the wheels), cuBLAS loads
#   2. bash /kit/run.sh             the CPU model trains two steps and reads the token file; every GPU
#      step stops naming the missing CUDA device; exit 2; exactly 3 files written
#   3. the same dry run without the wheels' NCCL fails naming libnccl.so.2 and --cuda-libs
# Prints what each printed, the kit's size and the times, then "check-kit-in-bare-root: PASSED" (exit 0)
# or the failed expectations (exit 1). Needs root, unshare (util-linux) and busybox-static.
# The root is made under TMPDIR and removed; its results stay in OUT_DIR.
# Usage: perf/gpu-kit/check-kit-in-bare-root.sh [KIT_DIR] [OUT_DIR]   (default build/gpu-kit build/gpu-kit-bare-root)
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kit=$(cd "${1:-$src/build/gpu-kit}" && pwd)
results=${2:-$src/build/gpu-kit-bare-root}
die() { echo "check-kit-in-bare-root: error: $*" >&2; exit 1; }
case ${1:-} in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

[ "$(id -u)" = 0 ] || die "needs root (unshare, mount, chroot)"
[ -f "$kit/run.sh" ] && [ -f "$kit/MANIFEST.txt" ] || die "$kit is not a kit: perf/gpu-kit/make-kit.sh first"
command -v unshare >/dev/null && command -v chroot >/dev/null || die "unshare and chroot are needed (util-linux, coreutils)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && ! grep -q NEEDED < <(objdump -p "$busybox" 2>/dev/null) || die "a static busybox is needed: apt-get install busybox-static"
cuda=/usr/local/cuda/lib64
for f in libcublas.so.13 libcublasLt.so.13 libcudart.so.13 libnccl.so.2; do
  [ -e "$cuda/$f" ] || die "$cuda/$f is missing: this check places this machine's CUDA libraries where the wheels put them"
done

root=$(mktemp -d "${TMPDIR:-/tmp}/gpukit-bare-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$results"
t0=$SECONDS

# --- the root: the base libraries, bash, busybox's applets, empty mount points
mkdir -p "$root"/{lib64,lib/x86_64-linux-gnu,bin,usr/bin,proc,sys,dev,tmp,kit,out,etc}
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
for lib in libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 libpthread.so.0 librt.so.1 libdl.so.2 libtinfo.so.6; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$root/lib/x86_64-linux-gnu/"
done
cp -L /bin/bash "$root/bin/bash"
cp -L "$busybox" "$root/bin/busybox"
# The tools run.sh and check_cuda_training.sh use (run.sh's header lists them); nothing else.
for tool in sh mkdir mktemp cat head tail sort wc cut tr timeout uname nproc grep sed awk env ls dirname basename sleep tee id; do
  ln -s busybox "$root/bin/$tool"
done
ln -s ../../bin/env "$root/usr/bin/env"
echo "root:x:0:0:root:/:/bin/bash" >"$root/etc/passwd"
wheels=$root/opt/torch/.venv/lib/python3.12/site-packages/nvidia
mkdir -p "$wheels/cu13/lib" "$wheels/nccl/lib"
for f in libcublas.so.13 libcublasLt.so.13 libcudart.so.13; do : >"$wheels/cu13/lib/$f"; done
: >"$wheels/nccl/lib/libnccl.so.2"
for d in null zero urandom random; do : >"$root/dev/$d"; done
mkdir -p "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"  # as on every Linux system (bash's process substitution uses it)
for i in 0 1 2; do ln -s "/proc/self/fd/$i" "$root/dev/$(echo "stdin stdout stderr" | cut -d' ' -f$((i + 1)))"; done

# --- inside: the mounts (private to this namespace), then the three runs in the chroot
inner=$(cat <<'INNER'
set -euo pipefail
root=$1 kit=$2 cuda=$3
wheels=$root/opt/torch/.venv/lib/python3.12/site-packages/nvidia
mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys" && mount -o remount,bind,ro "$root/sys"
for d in null zero urandom random; do mount --bind "/dev/$d" "$root/dev/$d"; done
mount -t tmpfs tmpfs "$root/dev/shm"
mount -t tmpfs tmpfs "$root/tmp"
mount --bind "$kit" "$root/kit" && mount -o remount,bind,ro "$root/kit"
for f in libcublas.so.13 libcublasLt.so.13 libcudart.so.13; do
  mount --bind "$(readlink -f "$cuda/$f")" "$wheels/cu13/lib/$f"
done
mount --bind "$(readlink -f "$cuda/libnccl.so.2")" "$wheels/nccl/lib/libnccl.so.2"
in_root() { chroot "$root" /usr/bin/env -i PATH=/bin:/usr/bin HOME=/ TMPDIR=/tmp /bin/bash -c "$1"; }
timed() {  # name command: runs it in the root, prints its output, its exit and its time
  local name=$1 rc=0 start=${EPOCHREALTIME/./}
  in_root "$2" >"$root/out/$name.stdout" 2>&1 || rc=$?
  local us=$((${EPOCHREALTIME/./} - start))
  echo "$rc $((us / 1000))" >"$root/out/$name.result"
}
timed dry 'bash /kit/run.sh --dry-run --out /out/dry'
timed full 'bash /kit/run.sh --out /out/full'
# What every ELF of the kit resolves to, in the root (the loader itself, as run.sh does).
in_root 'export LD_LIBRARY_PATH=$(echo /tmp/gpudirect-kit.*/lib | cut -d" " -f1):/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib
  for elf in /kit/build/*/* $(ls /kit/peers/* 2>/dev/null) $(echo /tmp/gpudirect-kit.*/lib | cut -d" " -f1)/*.so*; do
    /lib64/ld-linux-x86-64.so.2 --list "$elf" | sed "s|^|$elf: |"
  done' >"$root/out/resolved.txt" 2>&1 || true
# cuBLAS from the wheel folder, loaded by our binary itself
in_root 'LD_LIBRARY_PATH=$(echo /tmp/gpudirect-kit.*/lib | cut -d" " -f1):/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib /kit/build/tests/train_cuda_check --device-only' \
  >"$root/out/device-only.txt" 2>&1 || true
umount "$wheels/nccl/lib/libnccl.so.2" && rm "$wheels/nccl/lib/libnccl.so.2"
timed no-nccl 'bash /kit/run.sh --dry-run --out /out/no-nccl'
INNER
)
echo "check-kit-in-bare-root: kit $kit ($(du -sb "$kit" | cut -f1) bytes), root $root"
unshare --mount --pid --fork --propagation private bash -c "$inner" inner "$root" "$kit" "$cuda"
rm -rf "${results:?}/out"
cp -r "$root/out" "$results/out"
out=$results/out

# --- what each run must have printed
failed=0
expect() {  # description file regex
  if grep -qE -- "$3" "$2"; then
    echo "  ok: $1"
  else
    echo "  FAIL: $1 (no /$3/ in $2)"
    failed=1
  fi
}
result() { cut -d' ' -f"$2" "$out/$1.result"; }
echo
echo "== 1. dry run: exit $(result dry 1) after $(result dry 2) ms"
grep -E 'kit libraries|cuBLAS|CUDA device|run.sh:' "$out/dry.stdout" | sed 's/^/   | /' || true
[ "$(result dry 1)" = 0 ] && echo "  ok: exit 0" || { echo "  FAIL: exit $(result dry 1)"; failed=1; }
[ "$(result dry 2)" -lt 20000 ] && echo "  ok: finished within seconds" || { echo "  FAIL: took $(result dry 2) ms"; failed=1; }
expect "every library of the kit resolves" "$out/dry.stdout" 'kit libraries: ok: .*every library of the [0-9]+ ELF files resolves'
expect "cuBLAS loads from the wheel folder" "$out/dry.stdout" 'cuBLAS: ok: libcublas.so.13 loads from /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib'
expect "NCCL from the wheel folder" "$out/dry.stdout" "NCCL: /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib \(torch's wheel\)"
expect "the dry run names the missing device" "$out/dry.stdout" 'CUDA device: STOPPED: no CUDA device'

echo
echo "== resolution: every ELF of the kit, resolved in the root"
outside=$(grep '=>' "$out/resolved.txt" | awk '{print $4}' | grep -vE '^(/tmp/gpudirect-kit\.[^/]+/lib/|/opt/torch/.venv/lib/python3\.12/site-packages/nvidia/(cu13|nccl)/lib/|/lib/x86_64-linux-gnu/lib(c|m|stdc\+\+|gcc_s|pthread|rt|dl)\.so)' | sort -u || true)
echo "   | $(grep -c '=>' "$out/resolved.txt") resolutions over $(cut -d: -f1 "$out/resolved.txt" | sort -u | wc -l) ELF files; not found: $(grep -c 'not found' "$out/resolved.txt" || true)"
if [ -z "$outside" ] && ! grep -q 'not found' "$out/resolved.txt" && grep -q 'libnccl.so.2 => /opt/torch' "$out/resolved.txt"; then
  echo "  ok: each resolves to the kit's own, the base set or the wheel folders"
else
  echo "  FAIL: resolved elsewhere or not found: $outside $(grep 'not found' "$out/resolved.txt" | head -3)"
  failed=1
fi
expect "train_cuda_check --device-only: cuBLAS loads" "$out/device-only.txt" '^train_cuda_check: cuBLAS loads'

echo
echo "== 2. full run: exit $(result full 1) after $(result full 2) ms"
grep -E '(PASSED|STOPPED|FAILED|SKIPPED|NOT BUILT|not in this)' "$out/full.stdout" | grep -v '^\[' | sed 's/^/   | /' || true
[ "$(result full 1)" = 2 ] && echo "  ok: exit 2 (no usable CUDA device)" || { echo "  FAIL: exit $(result full 1), not 2"; failed=1; }
expect "the CPU model trains two steps" "$out/full.stdout" '^CPU reference \(OpenBLAS\): tiny, 2 steps +PASSED +2 step\(s\), loss'
expect "the token file reads" "$out/full.stdout" '^token file \(llm.c .bin v1\) read by ours +PASSED'
for step in "check_cuda_training" "memcheck: train_cuda_check" "speed: ours, gpt2-124m B 16, reference attention" \
  "speed: ours, gpt2-124m B 16, tensor-core attention" "speed: ours, gpt2-124m B 32, reference attention" \
  "speed: ours, gpt2-124m B 32, tensor-core attention" "racecheck: train_cuda_check" "memcheck: train --zero1"; do
  expect "$step stops naming the missing device" "$out/full.stdout" "^${step}.* STOPPED +no CUDA device"
done
files=$(ls "$out/full" | tr '\n' ' ')
[ "$(ls "$out/full" | wc -l)" -le 3 ] && echo "  ok: $(ls "$out/full" | wc -l) files written: $files" || { echo "  FAIL: more than 3 files: $files"; failed=1; }

echo
echo "== 3. dry run without the wheels' NCCL: exit $(result no-nccl 1)"
grep -E 'FAILED' "$out/no-nccl.stdout" | head -n2 | sed 's/^/   | /' || true
[ "$(result no-nccl 1)" = 1 ] && echo "  ok: exit 1" || { echo "  FAIL: exit $(result no-nccl 1), not 1"; failed=1; }
expect "names libnccl.so.2 and --cuda-libs" "$out/no-nccl.stdout" 'libnccl.so.2 not found .*--cuda-libs'

echo
echo "kit: $kit, $(du -sb "$kit" | cut -f1) bytes; dry run $(result dry 2) ms, full run (no GPU) $(result full 2) ms; this check $((SECONDS - t0)) s; outputs in $out"
[ "$failed" = 0 ] && echo "check-kit-in-bare-root: PASSED" || echo "check-kit-in-bare-root: FAILED"
exit "$failed"
