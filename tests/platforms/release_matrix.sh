#!/bin/bash
# The compatibility matrix on real Slurm releases: for each Debian release, a clean root with that
# release's Slurm (tests/platforms/lib_root.sh), our build dependencies installed in it by
# scripts/install-deps.sh, the project built there with the release's own GCC and CMake (warnings as
# errors, as the ci preset), and the plugin's and launcher's integration tests run on a local
# cluster started inside the root. Prints a table (release, Slurm, GCC, CMake, each test's result,
# times) and writes it as Markdown.
#
# Not part of ctest: scripts/run-tests.sh (CI) runs it for Debian 11 beside the host's build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/platforms/lib_root.sh
source "$here/lib_root.sh"

# The integration tests the matrix runs: the ones whose outcome depends on the Slurm release (its
# SPANK behaviour, environment variables, cgroup and option handling) or on the release's
# toolchain, not on PyTorch, Prometheus or libfabric's providers:
#   test_plugin_binding       README's --gpus-per-task=1 line and --gpus-per-node: each task's GPU,
#                             NIC, CPU mask (sched_getaffinity) and environment; the doctor agrees
#   test_plugin_errors        bad values, a missing or broken NCCL plugin, RxDM waits, unknown
#                             plugstack arguments: one clear message and a failed step
#   test_plugin_sbatch        #SBATCH --gpu-direct reaching every step (SPANK's job environment)
#   test_plugin_gib           A3 Ultra / A4 interface names and the gib profile
#   test_exec_matches_plugin  gpudirect-launch exec binds what the plugin binds
#   test_slurm_gcp_nodes      slurm-gcp's node configuration: task/cgroup, proctrack/cgroup,
#                             ConstrainCores, ConstrainDevices; the doctor under it; the NVLink warning
#   test_install_node         install-node.sh's Slurm version and plugin dir checks against this Slurm
default_tests=test_plugin_binding,test_plugin_errors,test_plugin_sbatch,test_plugin_gib,test_exec_matches_plugin,test_slurm_gcp_nodes,test_install_node
default_releases=bullseye,bookworm,trixie,sid
# Tests that run nothing but gpudirect-launch: not run where the launcher does not build.
launcher_only_tests=" test_exec_matches_plugin "

usage() {
  cat <<EOF
Usage: tests/platforms/release_matrix.sh [options]

For each Debian release: a clean root with that release's Slurm (debootstrap, cached), the build
dependencies (scripts/install-deps.sh, cached with the root), the project built with the release's
GCC and CMake (-Werror), a local cluster in the root, and the integration tests. Prints the table
and writes it as Markdown.

Options:
  --releases LIST   comma-separated Debian codenames (default $default_releases;
                    unstable = sid). Debian 11 (bullseye) builds the plugin alone: its GCC 10
                    cannot build gpudirect-launch, and configure says so (shown in the table)
  --tests LIST      comma-separated tests of tests/integration (default
                    $default_tests)
  --jobs N          build jobs (default 2)
  --extra-packages LIST  comma-separated Debian packages installed in each release's root for this
                    run (with the network), beyond install-deps.sh's: e.g. apptainer,squashfs-tools,
                    busybox-static for test_apptainer (Apptainer is in Debian unstable only)
  --out FILE        the Markdown table (default WORK/matrix.md)
  --work DIR        roots' writable layers, build trees and logs (default: a new /var/tmp/gpudirect-matrix.XXXXXX)
  --keep            keep WORK afterwards (default: removed, logs and table kept)
  --prepare         only make the releases' cached roots with their dependencies, then stop
                    (e.g. ahead of a timed run: needs the network, builds nothing)
  -h, --help        this help

Needs root, debootstrap, unshare, pivot_root, overlayfs and cgroup v1 controllers (for
test_slurm_gcp_nodes); the Debian archive (GPUDIRECT_DEBIAN_MIRROR) the first time a release or
install-deps.sh changes. Cache: GPUDIRECT_ROOT_CACHE (default /var/cache/gpudirect-slurm).
EOF
}

releases=$default_releases
tests=$default_tests
jobs=2
out=""
work=""
keep=0
prepare=0
extra_packages=""
while [ $# -gt 0 ]; do
  case "$1" in
    --releases) releases=${2:?--releases needs a list}; shift 2 ;;
    --tests) tests=${2:?--tests needs a list}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --work) work=${2:?--work needs a directory}; shift 2 ;;
    --keep) keep=1; shift ;;
    --prepare) prepare=1; shift ;;
    --extra-packages) extra_packages=${2:?--extra-packages needs a list}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "release_matrix: error: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

say() { printf '[%s] release_matrix: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { printf 'release_matrix: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, namespaces, mounts, cgroups)"
for tool in unshare pivot_root tar sha256sum; do command -v "$tool" >/dev/null || die "needs $tool"; done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || die "needs overlayfs (the roots are overlays of the cached ones)"
for t in ${tests//,/ }; do
  [ -f "$repo/tests/integration/$t.sh" ] || die "no test tests/integration/$t.sh (--tests takes names like test_plugin_binding)"
done
case "$jobs" in [1-9]|[1-9][0-9]) ;; *) die "--jobs must be a number" ;; esac

if [ -z "$work" ]; then work=$(mktemp -d /var/tmp/gpudirect-matrix.XXXXXX); else mkdir -p "$work"; fi
work=$(cd "$work" && pwd)
logs=$work/logs
mkdir -p "$logs"
[ -n "$out" ] || out=$work/matrix.md
run_id=gpudirect-matrix-$$

# Every root_run ends its namespaces (and every process and mount in them) when it returns; a root_run
# still running when this script is stopped is killed here, as a process group (its unshare takes
# the namespace with it). Left behind otherwise: the writable layers and cgroups.
child=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$child" ]; then kill -KILL -- "-$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  root_cgroups_remove "$run_id"
  if [ "$keep" = 1 ]; then
    say "kept $work"
  else
    # The build trees and roots' layers go; the logs and the table stay.
    find "$work" -mindepth 1 -maxdepth 1 ! -name logs ! -name "$(basename "$out")" -exec rm -rf --one-file-system {} +
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in_release [root_run OPTIONS] ROOT -- COMMAND: root_run in the release's overlay root, as its own process group in the
# background so that cleanup can kill it.
in_release() {
  set -m
  root_run --overlay "$lower:$upper" "$@" &
  child=$!
  set +m
  local status=0
  wait "$child" || status=$?
  child=""
  return "$status"
}

# The packages a release gets: Debian 11 has no libcli11-dev and its GCC 10 does not build
# gpudirect-launch (configure says so; checked below), so there the plugin alone.
deps_set() { case "$1" in bullseye) echo plugin ;; *) echo launcher ;; esac; }

# deps_root SUITE: the release's root with our dependencies (and ccache, for rebuilds), made once
# per content of install-deps.sh and kept as a directory, the lower layer of every run's overlay.
deps_root() {
  local suite=$1 set tarball key dir staging
  set=$(deps_set "$suite")
  tarball=$(root_make_tarball "$suite" "$logs/$suite-debootstrap.log") || return 1
  key=$(cat "$repo/scripts/install-deps.sh" "$tarball" | sha256sum | cut -c1-12)
  dir=$ROOT_CACHE_DIR/matrix/$suite-$set-$key
  if [ ! -d "$dir" ]; then
    say "$suite: installing scripts/install-deps.sh --set $set in a copy of $tarball (log $logs/$suite-deps.log; cached as $dir)" >&2
    rm -rf --one-file-system "$ROOT_CACHE_DIR/matrix/$suite-$set-"*  # an older install-deps.sh's
    staging=$dir.staging
    mkdir -p "$staging"
    tar -xzf "$tarball" -C "$staging"
    chmod 755 "$staging"  # the root's / (a tarball made from a mktemp directory says 0700)
    cp /etc/resolv.conf "$staging/etc/resolv.conf"
    cp "$repo/scripts/install-deps.sh" "$staging/tmp/install-deps.sh"
    if ! root_run "$staging" -- bash -c "bash /tmp/install-deps.sh --set $set && apt-get install -y -q --no-install-recommends ccache && apt-get clean" \
      >"$logs/$suite-deps.log" 2>&1; then
      tail -n 15 "$logs/$suite-deps.log" >&2
      rm -rf --one-file-system "$staging"
      echo "install-deps.sh --set $set failed in the $suite root (log: $logs/$suite-deps.log)" >&2
      return 1
    fi
    rm -f "$staging/tmp/install-deps.sh"
    mv "$staging" "$dir"
  fi
  echo "$dir"
}

# The build, run inside the root (no network). $1: ON or OFF (gpudirect-launch), $2: jobs.
# Everything as the ci preset (RelWithDebInfo, -Werror) without the preset file, which needs CMake 3.25.
# shellcheck disable=SC2016
build_script='
set -euo pipefail
launcher=$1 jobs=$2
src=/opt/gpudirect-slurm/src build=/opt/gpudirect-slurm/build
export CCACHE_DIR=/root/.ccache
cmake -S $src -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUDIRECT_WERROR=ON \
  -DGPUDIRECT_WITH_CUDA=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DGPUDIRECT_BUILD_LAUNCHER=$launcher -DGPUDIRECT_BUILD_TESTS=$launcher
if [ "$launcher" = ON ]; then
  cmake --build $build -j $jobs --target spank_gpudirect gpudirect-launch net_plugin_loads net_plugin_broken net_plugin_not_a_plugin \
    net_plugin_user
else
  cmake --build $build -j $jobs --target spank_gpudirect
  # The integration tests take their stand-ins for an NCCL network plugin from the test build
  # (tests/CMakeLists.txt, which needs the launcher): the same source, compiled as it does.
  kind=1
  for name in loads broken not_a_plugin; do
    mkdir -p $build/tests/net_plugin/$name
    cc -O2 -shared -fPIC -DNCCL_STANDIN_KIND=$kind -o $build/tests/net_plugin/$name/libnccl-net.so \
      $src/tests/net_plugin_standin/net_plugin_standin.c
    kind=$((kind + 1))
  done
fi
'

# The source as the working tree has it (tracked and untracked, not ignored: no build trees).
copy_source() {
  mkdir -p "$1"
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    (cd "$repo" && xargs -0 tar -cf - --no-recursion --ignore-failed-read) | tar -xf - -C "$1"
}

table_rows=()
overall=0
total_started=$SECONDS
say "releases: ${releases//,/ }; tests: ${tests//,/ }; work: $work"
for release in ${releases//,/ }; do
  suite=$(root_suite "$release")
  started=$SECONDS
  say "$suite: root"
  lower=$(deps_root "$suite") || { table_rows+=("| $suite | - | - | - | root failed: see $logs/$suite-deps.log |"); overall=1; continue; }
  if [ "$prepare" = 1 ]; then say "$suite: root with dependencies ready in $((SECONDS - started)) s: $lower"; continue; fi
  upper=$work/$suite/upper
  merged=$work/$suite/root
  rm -rf --one-file-system "${work:?}/${suite:?}"
  mkdir -p "$upper/etc" "$merged"
  ccache_dir=$ROOT_CACHE_DIR/matrix/ccache-$suite
  mkdir -p "$ccache_dir"
  copy_source "$upper/opt/gpudirect-slurm/src"
  # No DNS in the root: a resolver that cannot be reached stalls every lookup ~20 s, and Slurm's
  # credentials then expire ("Job credential expired"). Every name the cluster uses is in /etc/hosts.
  : >"$upper/etc/resolv.conf"
  # debootstrap writes no /etc/hosts; the cluster adds its nodes' names to a copy of this one.
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n127.0.1.1 matrix-%s\n' "$suite" >"$upper/etc/hosts"
  # Packages a test needs beyond install-deps.sh's (Apptainer: Debian unstable only), into this run's
  # writable layer, with the network and a resolver for apt alone.
  if [ -n "$extra_packages" ]; then
    say "$suite: installing ${extra_packages//,/ } (log $logs/$suite-extra-packages.log)"
    cp /etc/resolv.conf "$upper/etc/resolv.conf"
    if ! in_release "$merged" -- bash -c "export DEBIAN_FRONTEND=noninteractive; apt-get update -q &&
      apt-get install -y -q --no-install-recommends ${extra_packages//,/ } && apt-get clean" >"$logs/$suite-extra-packages.log" 2>&1; then
      tail -n 10 "$logs/$suite-extra-packages.log" | sed 's/^/    /'
      table_rows+=("| $suite | - | - | - | --extra-packages failed: see $logs/$suite-extra-packages.log |")
      overall=1
      continue
    fi
    : >"$upper/etc/resolv.conf"
  fi
  root_secs=$((SECONDS - started))

  versions=$(in_release "$merged" -- sh -c 'echo "$(slurmd -V | cut -d" " -f2) $(gcc -dumpfullversion) $(cmake --version | sed -n "1s/.* //p")"')
  read -r slurm gcc cmake_version <<<"$versions"
  say "$suite: Slurm $slurm, GCC $gcc, CMake $cmake_version (root ready in $root_secs s)"

  # Where the plugin alone is installed, configure with the launcher must refuse, naming why: the
  # table says what it named.
  launcher=ON
  launcher_note=yes
  if [ "$(deps_set "$suite")" = plugin ]; then
    launcher=OFF
    if in_release --net private "$merged" -- cmake -S /opt/gpudirect-slurm/src -B /tmp/launcher-probe \
      >"$logs/$suite-launcher-probe.log" 2>&1; then
      launcher_note="NO, though configure accepted it (log $logs/$suite-launcher-probe.log)"
      overall=1
    else
      # CMake's message, joined, cut to the toolchain it names (the packages it also names are
      # simply not installed in a plugin-only root).
      why=$(awk '/^CMake Error/ {f = 1; next} /^Call Stack/ {f = 0} f' "$logs/$suite-launcher-probe.log" | tr -s ' \n' ' ' |
        sed -n 's/.*gpudirect-launch needs \(.*\): install them.*/\1/p' | grep -o '^.*GCC >= [0-9]* (this is [0-9.]*' || true)
      if [ -n "$why" ]; then
        launcher_note="no: configure says it needs $why)"
      else
        launcher_note="NO, and configure did not say why (log $logs/$suite-launcher-probe.log)"
        overall=1
      fi
    fi
    say "$suite: gpudirect-launch: $launcher_note"
  fi

  build_started=$SECONDS
  say "$suite: build ($([ "$launcher" = ON ] && echo "plugin and gpudirect-launch" || echo "the plugin alone"), -j$jobs, log $logs/$suite-build.log)"
  if ! in_release --net private --bind "$ccache_dir:/root/.ccache" "$merged" -- bash -c "$build_script" build "$launcher" "$jobs" \
    >"$logs/$suite-build.log" 2>&1; then
    tail -n 20 "$logs/$suite-build.log" | sed 's/^/    /'
    say "$suite: BUILD FAILED after $((SECONDS - build_started)) s"
    table_rows+=("| $suite | $slurm | $gcc | $cmake_version | build failed ($logs/$suite-build.log) |")
    overall=1
    continue
  fi
  build_secs=$((SECONDS - build_started))
  say "$suite: built in $build_secs s"

  results=()
  tests_started=$SECONDS
  for t in ${tests//,/ }; do
    if [ "$launcher" = OFF ] && [[ "$launcher_only_tests" == *" $t "* ]]; then
      results+=("n/a (no launcher)")
      say "$suite: $t: not run (it runs only gpudirect-launch)"
      continue
    fi
    t_started=$SECONDS
    log=$logs/$suite-$t.log
    env_args=(GPUDIRECT_SOURCE_DIR=/opt/gpudirect-slurm/src GPUDIRECT_BUILD_DIR=/opt/gpudirect-slurm/build)
    [ "$launcher" = ON ] || env_args+=(GPUDIRECT_NO_LAUNCHER=1)
    status=0
    in_release --net private --cgroups "$run_id" --hostname "matrix-$suite" "$merged" -- \
      env "${env_args[@]}" timeout 900 bash "/opt/gpudirect-slurm/src/tests/integration/$t.sh" >"$log" 2>&1 || status=$?
    root_cgroups_remove "$run_id"
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 || true)
    p=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' <<<"$counts")
    f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$counts")
    s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$counts")
    if [ "$status" = 0 ] && [ -n "$counts" ] && [ "$f" = 0 ]; then
      result="pass $p/$((p + f))${s:+, $s skipped}"
    else
      overall=1
      if [ -n "$counts" ]; then result="FAIL $p/$((p + f))${s:+, $s skipped}"; else result="FAIL (exit $status)"; fi
      grep -E '^(FAIL|    )' "$log" | head -n 12 | sed 's/^/    /' || tail -n 8 "$log" | sed 's/^/    /'
    fi
    results+=("$result")
    say "$suite: $t: $result ($((SECONDS - t_started)) s, log $log)"
  done
  tests_secs=$((SECONDS - tests_started))
  total_secs=$((SECONDS - started))
  row="| $suite | $slurm | GCC $gcc | $cmake_version | $launcher_note |"
  for r in "${results[@]}"; do row+=" $r |"; done
  row+=" ${root_secs} s / ${build_secs} s / ${tests_secs} s / **${total_secs} s** |"
  table_rows+=("$row")
  say "$suite: done in $total_secs s (root $root_secs s, build $build_secs s, tests $tests_secs s)"
  # The release's build tree and writable layer are not needed any more (its logs are).
  [ "$keep" = 1 ] || rm -rf --one-file-system "${work:?}/${suite:?}"
done

[ "$prepare" = 0 ] || exit "$overall"
{
  header="| release | Slurm | compiler | CMake | gpudirect-launch |"
  sep="|---|---|---|---|---|"
  for t in ${tests//,/ }; do header+=" ${t#test_} |"; sep+="---|"; done
  echo "$header time: root / build / tests / **total** |"
  echo "$sep---|"
  printf '%s\n' "${table_rows[@]}"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs with -j$jobs (release_matrix.sh; logs in $logs)."
} >"$out"
echo
cat "$out"
say "all done in $((SECONDS - total_started)) s; table in $out"
exit "$overall"
