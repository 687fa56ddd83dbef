#!/usr/bin/env bash
# Makes the GPU kit: everything the GPU check needs on a GPU machine that has CUDA's libraries only
# in torch's wheels and none of our Debian build dependencies (docs/model.md, "First run on a GPU").
# Run it here, carry the directory there (it must stay under 64 MiB), run `bash KIT/run.sh` there.
#
# The kit holds:
#   build/launcher/gpudirect-launch, build/tests/train_cuda_check  our binaries (strip --strip-debug)
#   tests/gpu/check_cuda_training.sh, tests/train/{read_checkpoint,torch_gpt}.py,
#   perf/gpu-kit/torch_speed.py, run.sh                              the checks
#   lib/*.xz        every library the binaries need that is not the system's (libc, libm, libstdc++,
#                   libgcc_s, libpthread, librt, libdl, the loader) nor CUDA's NCCL, cuBLAS and
#                   cuBLASLt, which never travel: run.sh uses the GPU machine's own, from torch's wheels
#   tools/xz, tools/liblzma.so.5   Debian's xz, uncompressed, to unpack lib/ where no xz is installed
#   data/tokens.bin.xz   a mock token file in llm.c's .bin v1 format (for every column of the speed table)
#   peers/train_gpt2cu   only with --llmc: an llm.c binary YOU built (never built by this script)
#   MANIFEST.txt         what is in the kit, where it came from, the ABI floor (GLIBC, GLIBCXX)
#
# Usage: perf/gpu-kit/make-kit.sh [--build DIR] [--out DIR] [--llmc PATH/train_gpt2cu] [--tokens N] [--tar]
#   --build DIR   a release build with CUDA (default build/release:
#                 cmake --preset release && cmake --build --preset release --target gpudirect-launch train_cuda_check)
#   --out DIR     the kit directory (default build/gpu-kit; replaced if it holds a kit already)
#   --llmc FILE   a built llm.c train_gpt2cu (without cuDNN) to time beside ours
#   --tokens N    tokens in the mock token file (default 1048576: 32 steps of 32 x 1024)
#   --tar         also write DIR.tar (one file to copy)
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$src/build/release
kit=$src/build/gpu-kit
llmc=""
tokens=1048576
make_tar=0
limit=$((64 * 1024 * 1024))

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "make-kit: error: $*" >&2; exit 1; }
t0=$SECONDS
say() { printf '[%3ds] %s\n' "$((SECONDS - t0))" "$*"; }

while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?--build DIR}; shift 2 ;;
    --out) kit=${2:?--out DIR}; shift 2 ;;
    --llmc) llmc=${2:?--llmc PATH/train_gpt2cu}; shift 2 ;;
    --tokens) tokens=${2:?--tokens N}; shift 2 ;;
    --tar) make_tar=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "make-kit: unknown argument '$1'" >&2; usage >&2; exit 6 ;;
  esac
done

for tool in strip objdump ldd xz python3 sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is not installed (binutils, libc-bin, xz-utils, python3, coreutils)"
done

# --- the build: release, CUDA for sm_90, the NCCL backend and the CUDA check tool
launch=$build/launcher/gpudirect-launch
check=$build/tests/train_cuda_check
cache=$build/CMakeCache.txt
[ -f "$cache" ] || die "$build is not a configured build directory: cmake --preset release (or give --build DIR)"
[ -x "$launch" ] && [ -x "$check" ] ||
  die "$launch or $check is missing: cmake --build $build --target gpudirect-launch train_cuda_check (train_cuda_check exists only where CMake found nvcc, cuBLAS and NCCL)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$cache")
case $build_type in Release | RelWithDebInfo) ;; *) die "$build is a '$build_type' build: the kit is made from a release build (cmake --preset release)" ;; esac
case ";$archs;" in *";90;"* | *";90a;"* | *";90-real;"*) ;; *) die "$build builds CUDA for '$archs', not 90 (H100/H200): reconfigure with -DCMAKE_CUDA_ARCHITECTURES=90" ;; esac
grep -q 'NEEDED.*libnccl\.so' < <(objdump -p "$launch") || die "$launch does not link NCCL: the build has no NCCL backend (CMake found no NCCL)"

if [ -e "$kit" ]; then
  [ -f "$kit/MANIFEST.txt" ] && [ -f "$kit/run.sh" ] || die "$kit exists and is not a kit: give another --out"
  rm -rf "$kit"
fi
mkdir -p "$kit"/{build/launcher,build/tests,tests/gpu,tests/train,perf/gpu-kit,lib,tools,data}
say "making the kit in $kit from $build ($build_type, CUDA architectures $archs)"

# --- our binaries and scripts
strip --strip-debug -o "$kit/build/launcher/gpudirect-launch" "$launch"
strip --strip-debug -o "$kit/build/tests/train_cuda_check" "$check"
cp "$src/perf/gpu-kit/run.sh" "$kit/run.sh"
cp "$src/perf/gpu-kit/torch_speed.py" "$kit/perf/gpu-kit/"
cp "$src/tests/gpu/check_cuda_training.sh" "$kit/tests/gpu/"
cp "$src/tests/train/read_checkpoint.py" "$src/tests/train/torch_gpt.py" "$kit/tests/train/"
chmod +x "$kit/run.sh" "$kit/tests/gpu/check_cuda_training.sh"
elves=("$kit/build/launcher/gpudirect-launch" "$kit/build/tests/train_cuda_check")
if [ -n "$llmc" ]; then
  [ -x "$llmc" ] && grep -q 'ELF' < <(head -c 4 "$llmc") || die "--llmc $llmc is not an executable ELF file (give the train_gpt2cu you built)"
  mkdir -p "$kit/peers"
  strip --strip-debug -o "$kit/peers/train_gpt2cu" "$llmc"
  elves+=("$kit/peers/train_gpt2cu")
  if grep -q libcudnn < <(ldd "$llmc"); then
    echo "make-kit: warning: $llmc links cuDNN: the speed table wants llm.c WITHOUT cuDNN (build it with USE_CUDNN=0)" >&2
  fi
fi
say "binaries: $(du -ch "${elves[@]}" | tail -1 | cut -f1) after strip --strip-debug"

# --- their libraries: what the loader resolves here, less what never travels
# Never travel: the system's C and C++ runtime (every GPU image has them; the ABI floor below says
# which versions), and CUDA's NCCL, cuBLAS, cuBLASLt, driver and NVML (the GPU machine's own).
stays='^(ld-linux-x86-64\.so|linux-vdso\.so|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libpthread\.so|librt\.so|libdl\.so|libnccl\.so|libcublas\.so|libcublasLt\.so|libcuda\.so|libnvidia-ml\.so)'
declare -A travel=()
for elf in "${elves[@]}"; do
  missing=$(ldd "$elf" | awk '/not found/ {print $1}')
  [ -z "$missing" ] || die "$elf needs $(echo $missing) which this machine does not have: install it, then make the kit again"
  while read -r name path; do
    [[ $name =~ $stays ]] && continue
    travel[$name]=$path
  done < <(ldd "$elf" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done
# Libraries our binaries open with dlopen (names in their strings): each must be known here.
for elf in "${elves[@]}"; do
  for name in $(strings -a "$elf" | grep -oE 'lib[A-Za-z0-9_+-]+\.so(\.[0-9]+)*' | sort -u); do
    base=${name%%.so*}
    case $base in
      libcublas | libcublasLt | libnccl | libcuda | libnvidia-ml | libc | libm | libstdc++ | libgcc_s | libpthread | librt | libdl) continue ;;
      libnccl-net) continue ;;  # a node's NCCL network plugin: the node's own, none on one GPU
    esac
    found=0
    for known in "${!travel[@]}"; do [ "${known%%.so*}" = "$base" ] && found=1; done
    [ "$found" = 1 ] || [ "$(basename "$elf")" = train_gpt2cu ] ||
      die "$(basename "$elf") names $name (a dlopen?) that is neither among its libraries nor known to stay behind: decide whether it travels (perf/gpu-kit/make-kit.sh)"
  done
done
for name in "${!travel[@]}"; do printf '%s %s\n' "$name" "${travel[$name]}"; done | sort | xargs -P "$(nproc)" -L1 bash -c 'xz -9 -c "$2" >"$0/lib/$1.xz"' "$kit"
raw=0
for name in "${!travel[@]}"; do raw=$((raw + $(stat -L -c %s "${travel[$name]}"))); done
say "libraries: ${#travel[@]}, $((raw / 1048576)) MiB, $(($(du -cb "$kit"/lib/*.xz | tail -1 | cut -f1) / 1048576)) MiB with xz -9"

# --- the unpacker: Debian's xz and its liblzma, uncompressed (no xz on many GPU images)
xz_bin=$(command -v xz)
lzma_lib=$(ldd "$xz_bin" | awk '$1 ~ /^liblzma\.so/ {print $3}')
cp -L "$xz_bin" "$kit/tools/xz"
cp -L "$lzma_lib" "$kit/tools/$(basename "$lzma_lib")"

# --- the mock token file: llm.c's .bin v1, tokens of the GPT-2 vocabulary, a repeating random
# sequence (period 4099, seed 1337) so that a model can learn it and the loss falls
python3 - "$kit/data/tokens.bin" "$tokens" <<'PY'
import random, struct, sys
path, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(1337)
period = [rng.randrange(50257) for _ in range(4099)]
tokens = (period * (count // len(period) + 1))[:count]
with open(path, "wb") as f:
    f.write(struct.pack("<256i", 20240520, 1, count, *([0] * 253)))
    f.write(struct.pack(f"<{count}H", *tokens))
PY
[ "$(stat -c %s "$kit/data/tokens.bin")" -eq $((1024 + 2 * tokens)) ] || die "the token file has the wrong size"
xz -9 "$kit/data/tokens.bin"

# --- the manifest: provenance and the ABI floor of everything that runs there
{
  echo "gpudirect-slurm GPU kit"
  echo "made: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n)"
  echo "source: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "build: $build ($build_type, CUDA architectures $archs, $(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$cache"))"
  echo "cuda-build-version: $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "llm.c: ${llmc:-not given}"
  echo "tokens: data/tokens.bin ($tokens tokens, llm.c .bin v1, period 4099, seed 1337)"
  echo
  echo "# libraries (lib/NAME.xz: unpacked by run.sh), from this machine:"
  for name in $(printf '%s\n' "${!travel[@]}" | sort); do echo "lib $name ${travel[$name]}"; done
  echo
  echo "# never travel (the GPU machine's own): libc, libm, libstdc++, libgcc_s, libpthread, librt, libdl,"
  echo "# the loader, libnccl.so.2, libcublas.so.13, libcublasLt.so.13 (torch's wheels), libcuda, libnvidia-ml (driver)"
  echo
  echo "# sha256 of the binaries"
  (cd "$kit" && sha256sum build/launcher/gpudirect-launch build/tests/train_cuda_check ${llmc:+peers/train_gpt2cu})
} >"$kit/MANIFEST.txt"
floor() {  # prefix: the highest versioned symbol any ELF of the kit needs
  for elf in "${elves[@]}" "${travel[@]}" "$kit/tools/xz"; do objdump -T "$elf"; done |
    grep -oE "\b$1[0-9.]+" | sort -uV | tail -1
}
glibc=$(floor GLIBC_)
glibcxx=$(floor GLIBCXX_)
echo "abi-floor: $glibc $glibcxx (the GPU machine's libc and libstdc++ must provide these)" >>"$kit/MANIFEST.txt"
say "ABI floor: $glibc, $glibcxx"

size=$(du -sb "$kit" | cut -f1)
[ "$size" -lt "$limit" ] || die "the kit is $((size / 1048576)) MiB, over the 64 MiB that may travel"
if [ "$make_tar" = 1 ]; then
  tar -C "$(dirname "$kit")" -cf "$kit.tar" "$(basename "$kit")"
  say "tarball: $kit.tar, $(($(stat -c %s "$kit.tar") / 1048576)) MiB"
fi
say "kit: $kit, $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB of the 64 MiB that may travel)"
say "there: bash $(basename "$kit")/run.sh [--out DIR]   (bash $(basename "$kit")/run.sh --help; --dry-run first)"
