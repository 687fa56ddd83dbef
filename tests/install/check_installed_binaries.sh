#!/usr/bin/env bash
# What each way of installing puts on a node searches no library in the caller's directory: root
# runs gpudirect-launch (check-node, health: srun starts it in the caller's, often shared, directory)
# and slurmstepd loads spank_gpudirect.so. For `cmake --install`, scripts/install-node.sh and the
# .deb (cpack), each into a temporary root:
#   - every installed ELF's RUNPATH/RPATH has no empty or relative entry, and no directory others
#     than root can write to (check_search_paths.py --installed);
#   - the attack: a directory holding a libhwloc.so.15 (a NEEDED library of gpudirect-launch) whose
#     constructor writes a marker file; the installed gpudirect-launch --version, run from there,
#     must not load it. The build tree's gpudirect-launch too.
# And install-node.sh refuses a binary whose search path has an empty, a relative or a writable entry.
#
# Usage: check_installed_binaries.sh BUILD_DIR SOURCE_DIR C_COMPILER CPACK
set -uo pipefail

build=$(cd "${1:?build dir}" && pwd)
src=$(cd "${2:?source dir}" && pwd)
cc=${3:?C compiler}
cpack=${4:?cpack}
check=$src/tests/install/check_search_paths.py
install_node=$src/scripts/install-node.sh
work=$(mktemp -d /tmp/gpudirect-installed.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
failed=0
passed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /' | head -30; }

launcher=1
grep -qx 'GPUDIRECT_BUILD_LAUNCHER:BOOL=OFF' "$build/CMakeCache.txt" && launcher=0
expect=(--expect spank_gpudirect.so)
[ "$launcher" = 0 ] || expect+=(--expect gpudirect-launch)

# check_root NAME DIR: every ELF under DIR, as root would run it.
check_root() {
  local out
  if out=$(python3 "$check" --installed "${expect[@]}" "$2" 2>&1); then
    pass "$1: no installed ELF searches the current directory, a relative or a writable directory"
  else
    fail "$1: no installed ELF searches the current directory, a relative or a writable directory" "$out"
  fi
  printf '%s\n' "$out" | grep -v -E '^([0-9]+ ELF files|FAIL: )' | sed "s|$2||; s|^|    |"
}

# The hostile directory: libhwloc.so.15 whose constructor leaves a marker in the current directory.
# It defines every hwloc function gpudirect-launch imports (empty ones), as a real attacker's would:
# the binary is linked -z now, so a library that lacks one fails the start before any constructor
# runs, and the probe below could not see a load.
hostile=$work/hostile
mkdir -p "$hostile"
cat >"$work/fake_hwloc.c" <<'EOF'
#include <stdio.h>
__attribute__((constructor)) static void loaded_from_the_current_directory(void) {
  FILE* marker = fopen("loaded-fake-libhwloc", "w");
  if (marker) fclose(marker);
}
EOF
if [ "$launcher" = 1 ]; then
  nm -D --undefined-only "$build/launcher/gpudirect-launch" | awk '$2 ~ /^hwloc_/ {sub(/@.*/, "", $2); print "void " $2 "(void) {}"}' \
    >>"$work/fake_hwloc.c"
fi
"$cc" -shared -fPIC -Wl,-soname,libhwloc.so.15 -o "$hostile/libhwloc.so.15" "$work/fake_hwloc.c" ||
  { echo "cannot build the fake libhwloc.so.15 with $cc"; exit 1; }
# attack NAME BINARY: gpudirect-launch --version from the hostile directory must run, and not load it.
attack() {
  local out rc
  rm -f "$hostile/loaded-fake-libhwloc"
  # shellcheck disable=SC2086  # the emulator's command line (cross builds), split at spaces
  out=$(cd "$hostile" && ${GPUDIRECT_TEST_EMULATOR:-} "$2" --version 2>&1)
  rc=$?
  if [ -e "$hostile/loaded-fake-libhwloc" ]; then
    fail "$1: gpudirect-launch --version, run in a directory holding a libhwloc.so.15, does not load it" \
      "the fake library's constructor ran (rc $rc: $out): the loader searched the current directory"
  elif [ $rc -ne 0 ]; then
    fail "$1: gpudirect-launch --version runs in a directory holding a libhwloc.so.15" "rc $rc: $out"
  else
    pass "$1: gpudirect-launch --version, run in a directory holding a libhwloc.so.15, does not load it"
  fi
}

if [ "$launcher" = 1 ]; then
  attack "build tree" "$build/launcher/gpudirect-launch"
  # The probe works: with the current directory on the loader's path it does load the fake.
  rm -f "$hostile/loaded-fake-libhwloc"
  # shellcheck disable=SC2086
  (cd "$hostile" && LD_LIBRARY_PATH=. ${GPUDIRECT_TEST_EMULATOR:-} "$build/launcher/gpudirect-launch" --version >/dev/null 2>&1)
  if [ -e "$hostile/loaded-fake-libhwloc" ]; then
    pass "the probe: with LD_LIBRARY_PATH=. the fake's constructor runs"
  else
    fail "the probe: with LD_LIBRARY_PATH=. the fake's constructor runs" "no marker: the attack test cannot see a load"
  fi
fi

# --- cmake --install ----------------------------------------------------------------------------
root=$work/cmake-install
out=$(DESTDIR=$root cmake --install "$build" 2>&1) || fail "cmake --install into a temporary root" "$out"
check_root "cmake --install" "$root"
[ "$launcher" = 0 ] || attack "cmake --install" "$(find "$root" -type f -name gpudirect-launch)"

# --- scripts/install-node.sh --------------------------------------------------------------------
root=$work/install-node
slurm=$(grep -a -o 'gpudirect-build-info: [^;]*' "$build/plugin/spank_gpudirect.so" | sed -n 's/.* slurm=\([^ ]*\).*/\1/p' | head -1)
out=$("$install_node" --build-dir "$build" --destdir "$root" --slurm-version "$slurm" \
  --plugin-dir /usr/lib/slurm-plugins --slurm-conf-dir /etc/slurm 2>&1) || fail "install-node.sh into a temporary root" "$out"
check_root "install-node.sh" "$root"
[ "$launcher" = 0 ] || attack "install-node.sh" "$(find "$root" -type f -name gpudirect-launch)"

# --- the .deb ------------------------------------------------------------------------------------
out=$(cd "$build" && "$cpack" -G DEB -B "$work/deb" 2>&1)
deb=$(find "$work/deb" -maxdepth 1 -name '*.deb' 2>/dev/null | head -1)
if [ -n "$deb" ]; then
  root=$work/deb-root
  dpkg-deb -x "$deb" "$root"
  check_root "the .deb" "$root"
  [ "$launcher" = 0 ] || attack "the .deb" "$root/usr/bin/gpudirect-launch"
else
  fail "cpack builds the .deb" "$out"
fi

# --- install-node.sh refuses a binary with a bad search path -------------------------------------
# A build dir of one plugin (carrying the build information install-node.sh reads) whose
# cmake_install.cmake installs it as it is: what a build with such an INSTALL_RPATH would install.
# refuse RPATH EXPECTED: install-node.sh exits non-zero saying EXPECTED, and installs nothing.
refuse() {
  local fake out rc
  fake=$(mktemp -d "$work/fake-build.XXXXXX")
  mkdir -p "$fake/plugin"
  printf 'const char info[] = "gpudirect-build-info: slurm=%s prefix=/usr profile_dir=/usr/share/gpudirect-slurm/profiles;";\n' "$slurm" >"$fake/info.c"
  "$cc" -shared -fPIC -Wl,--enable-new-dtags,-rpath,"$1" -o "$fake/plugin/spank_gpudirect.so" "$fake/info.c"
  printf 'GPUDIRECT_BUILD_LAUNCHER:BOOL=OFF\n' >"$fake/CMakeCache.txt"
  # shellcheck disable=SC2016  # ${CMAKE_INSTALL_PREFIX} is CMake's, in the script written
  printf 'file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/slurm-wlm" TYPE MODULE FILES "%s")\n' \
    "$fake/plugin/spank_gpudirect.so" >"$fake/cmake_install.cmake"
  out=$("$install_node" --build-dir "$fake" --destdir "$work/refused" --slurm-version "$slurm" \
    --plugin-dir /usr/lib/slurm-plugins --slurm-conf-dir /etc/slurm 2>&1)
  rc=$?
  local name="install-node.sh refuses a plugin with RUNPATH [$1] ($2), installing nothing"
  if [ $rc -ne 0 ] && grep -qF "$2" <<<"$out" && [ -z "$(find "$work/refused" -type f 2>/dev/null)" ]; then
    pass "$name"
  else
    fail "$name" "rc $rc, installed: $(find "$work/refused" -type f 2>/dev/null | tr '\n' ' ')
$out"
  fi
  rm -rf "$work/refused"
}
mkdir -p "$work/writable" && chmod 1777 "$work/writable"
refuse "/usr/lib:" "empty entry"
refuse "/usr/lib:lib" "relative library search path entry"
refuse "$work/writable" "writable by others than root"
mkdir -p "$work/private/lib" && chmod 755 "$work/private" "$work/private/lib"  # root's own, but under /tmp
refuse "$work/private/lib" "/tmp is writable by others than root"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
