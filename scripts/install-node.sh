#!/usr/bin/env bash
# Installs a built gpudirect-slurm onto this node: spank_gpudirect.so into Slurm's plugin dir,
# gpudirect-launch, the network profiles and the RxDM prolog/epilog script under the prefix, the
# enroot hook into enroot's hooks dir, and the plugin's plugstack line (plugstack.conf.d/gpudirect.conf). Idempotent; a manifest records
# every file and line it wrote, so --uninstall removes exactly those.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

BUILD_DIR=$repo/build/release
DESTDIR=""
PREFIX=""
PLUGIN_DIR=""
SLURM_CONF_DIR=""
PLUGSTACK_DIR=""
RUNNING_SLURM=""
FORCE=0
UNINSTALL=0
LIST=0
PLUGSTACK_ARGS=()
DEFAULT_MODE=off
ENROOT_HOOKS_DIR=/etc/enroot/hooks.d

usage() {
  cat <<'EOF'
Usage: scripts/install-node.sh [options]          install (as root; run it again to update)
       scripts/install-node.sh --uninstall        remove exactly what the last install wrote

Installs what `cmake --build --preset release` built:
  spank_gpudirect.so   into Slurm's plugin dir (asked from Slurm, see --plugin-dir)
  gpudirect-launch     into PREFIX/bin
  network profiles     into PREFIX/share/gpudirect-slurm/profiles
  expectations         (check-node's machine types) into PREFIX/share/gpudirect-slurm/expectations
  gpudirect-rxdm       (RxDM prolog/epilog) into PREFIX/libexec/gpudirect-slurm
  50-gpudirect.sh      the enroot hook (containers get the mode's mounts), into enroot's hooks dir
  gpudirect.conf       the plugstack line, into <slurm conf dir>/plugstack.conf.d
and records them in DESTDIR/var/lib/gpudirect-slurm/install-manifest.
Refuses a plugin built for another Slurm major.minor than this node's slurmd.

Plugstack line (docs/admin.md "The plugstack line" explains each argument):
  --default MODE         default= (off|auto|tcpxo|tcpx|gib|rdma; default off: nothing changes
                         until a user asks for --gpu-direct)
  --lib-dir PATH         lib_dir=
  --rxdm-ready PATH      rxdm_ready= (the file gpudirect-rxdm creates when RxDM is ready)
  --rxdm-timeout S       rxdm_timeout=
  --arg KEY=VALUE        any other plugstack argument (profile.tcpxo=, topology=, cpu_bind=,
                         verbose=, profile_dir=); repeatable

Where:
  --build-dir DIR        the build to install (default: <repo>/build/release)
  --prefix DIR           for gpudirect-launch, profiles, gpudirect-rxdm (default: the prefix the
                         plugin was built for; another one adds profile_dir= to the line)
  --plugin-dir DIR       Slurm's plugin dir (default: PluginDir from slurm.conf, else the dir of
                         Debian's slurm-wlm-basic-plugins, else <slurmd's prefix>/lib/slurm,
                         else PluginDir from `scontrol show config`)
  --slurm-conf-dir DIR   Slurm's config dir (default: dir of $SLURM_CONF, /etc/slurm,
                         /usr/local/etc/slurm); the line goes to DIR/plugstack.conf.d/
  --enroot-hooks-dir DIR enroot's system hooks dir (default /etc/enroot/hooks.d: enroot's
                         ENROOT_SYSCONF_PATH/hooks.d)
  --slurm-version X.Y    the Slurm this node runs (default: from `slurmd -V`)
  --destdir DIR          install under DIR instead of / (image staging, tests)
  --force                overwrite files that exist but that this script did not install
  --list                 print what would be installed, install nothing
  -h, --help             this help
EOF
}

say() { printf 'install-node: %s\n' "$*"; }
die() { printf 'install-node: error: %s\n' "$*" >&2; exit 1; }

parse_options() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --default) DEFAULT_MODE=${2:?--default needs a mode}; shift 2 ;;
      --lib-dir) PLUGSTACK_ARGS+=("lib_dir=${2:?--lib-dir needs a path}"); shift 2 ;;
      --rxdm-ready) PLUGSTACK_ARGS+=("rxdm_ready=${2:?--rxdm-ready needs a path}"); shift 2 ;;
      --rxdm-timeout) PLUGSTACK_ARGS+=("rxdm_timeout=${2:?--rxdm-timeout needs seconds}"); shift 2 ;;
      --arg) case "${2-}" in *=?*) PLUGSTACK_ARGS+=("$2") ;; *) die "--arg needs KEY=VALUE, got '${2-}'" ;; esac; shift 2 ;;
      --build-dir) BUILD_DIR=${2:?--build-dir needs a directory}; shift 2 ;;
      --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
      --plugin-dir) PLUGIN_DIR=${2:?--plugin-dir needs a directory}; shift 2 ;;
      --slurm-conf-dir) SLURM_CONF_DIR=${2:?--slurm-conf-dir needs a directory}; shift 2 ;;
      --enroot-hooks-dir) ENROOT_HOOKS_DIR=${2:?--enroot-hooks-dir needs a directory}; shift 2 ;;
      --slurm-version) RUNNING_SLURM=${2:?--slurm-version needs X.Y}; shift 2 ;;
      --destdir) DESTDIR=${2:?--destdir needs a directory}; shift 2 ;;
      --force) FORCE=1; shift ;;
      --list) LIST=1; shift ;;
      --uninstall) UNINSTALL=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option '$1' (try --help)" ;;
    esac
  done
  case "$DEFAULT_MODE" in off|auto|tcpxo|tcpx|gib|rdma) ;; *) die "--default must be off, auto, tcpxo, tcpx, gib or rdma, not '$DEFAULT_MODE'" ;; esac
  [ -z "$DESTDIR" ] || { mkdir -p "$DESTDIR"; DESTDIR=$(cd "$DESTDIR" && pwd); }
  [ "$DESTDIR" = / ] && DESTDIR=""
  MANIFEST_PATH=/var/lib/gpudirect-slurm/install-manifest
  MANIFEST=$DESTDIR$MANIFEST_PATH
}

# --- what the build holds ------------------------------------------------------------------------

read_build() {
  PLUGIN_SO=$BUILD_DIR/plugin/spank_gpudirect.so
  LAUNCH_BIN=$BUILD_DIR/launcher/gpudirect-launch
  # A plugin-only build (-DGPUDIRECT_BUILD_LAUNCHER=OFF) installs no gpudirect-launch and no enroot hook.
  if grep -qx 'GPUDIRECT_BUILD_LAUNCHER:BOOL=OFF' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
    LAUNCH_BIN=""
    [ -f "$PLUGIN_SO" ] ||
      die "no plugin in $BUILD_DIR (need plugin/spank_gpudirect.so): build first with cmake --build $BUILD_DIR --target spank_gpudirect, or pass --build-dir"
  else
    [ -f "$PLUGIN_SO" ] && [ -f "$LAUNCH_BIN" ] ||
      die "no build in $BUILD_DIR (need plugin/spank_gpudirect.so and launcher/gpudirect-launch): build first with cmake --preset release && cmake --build --preset release, or pass --build-dir"
  fi
  local info
  info=$(grep -a -o 'gpudirect-build-info: [^;]*' "$PLUGIN_SO" | head -1) ||
    die "$PLUGIN_SO has no build information (built before install-node.sh existed?): rebuild it"
  BUILT_SLURM=$(sed -n 's/.* slurm=\([^ ]*\).*/\1/p' <<<"$info")
  BUILT_PREFIX=$(sed -n 's/.* prefix=\([^ ]*\).*/\1/p' <<<"$info")
  BUILT_PROFILE_DIR=$(sed -n 's/.* profile_dir=\([^ ]*\).*/\1/p' <<<"$info")
  [ -n "$BUILT_SLURM" ] && [ -n "$BUILT_PREFIX" ] || die "cannot read the build information of $PLUGIN_SO ('$info'): rebuild it"
}

# The binaries as `cmake --install` makes them, not as they lie in the build tree: the install step
# applies the install rules (CMake rewrites a build-tree RPATH to INSTALL_RPATH; a build from before
# cmake/InstalledBinaries.cmake had one ending in an empty entry, the current directory).
stage_binaries() {
  command -v cmake >/dev/null 2>&1 || die "cmake not found: it stages the build's binaries (cmake --install $BUILD_DIR)"
  STAGE=$(mktemp -d "${TMPDIR:-/tmp}/gpudirect-install.XXXXXX")
  trap 'rm -rf "$STAGE"' EXIT
  local out
  out=$(DESTDIR=$STAGE cmake --install "$BUILD_DIR" --component Unspecified 2>&1) ||
    die "cmake --install $BUILD_DIR --component Unspecified failed (build first: cmake --build $BUILD_DIR): $out"
  PLUGIN_SO=$(find "$STAGE" -type f -name spank_gpudirect.so | head -1)
  [ -n "$PLUGIN_SO" ] || die "cmake --install $BUILD_DIR installed no spank_gpudirect.so"
  if [ -n "$LAUNCH_BIN" ]; then
    LAUNCH_BIN=$(find "$STAGE" -type f -name gpudirect-launch | head -1)
    [ -n "$LAUNCH_BIN" ] || die "cmake --install $BUILD_DIR installed no gpudirect-launch"
  fi
  local binary
  for binary in "$PLUGIN_SO" ${LAUNCH_BIN:+"$LAUNCH_BIN"}; do check_search_path "$binary"; done
}

# Root runs what this script installs, often in a directory others can write: refuse a RUNPATH or
# RPATH with an entry the loader resolves against the current directory (empty, or relative without
# $ORIGIN), or a directory that someone other than root can write to (or rename: its parents too).
check_search_path() {
  local file=$1 name=${1##*/} paths path entry dir owner mode
  command -v readelf >/dev/null 2>&1 || die "readelf (binutils) not found: it checks the library search path of $name"
  paths=$(LC_ALL=C readelf -d "$file") || die "readelf -d $name failed: not an ELF file?"
  paths=$(sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]$/[\2]/p' <<<"$paths")  # [entries], one line each
  [ -n "$paths" ] || return 0
  while IFS= read -r path; do
    path=${path#[}; path=${path%]}
    case ":$path:" in
      ::|*::*) die "$name has the library search path '$path' with an empty entry (the current directory): rebuild with this tree's CMake files (cmake/InstalledBinaries.cmake)" ;;
    esac
    local entries
    IFS=: read -r -a entries <<<"$path"
    for entry in "${entries[@]}"; do
      # shellcheck disable=SC2016  # the loader's $ORIGIN, literally
      case "$entry" in
        '$ORIGIN'|'$ORIGIN/'*|'${ORIGIN}'|'${ORIGIN}/'*) continue ;;
        /*) ;;
        *) die "$name has the relative library search path entry '$entry' (resolved against the current directory): rebuild without it" ;;
      esac
      dir=$entry
      while [ ! -e "$dir" ]; do dir=$(dirname "$dir"); done
      while :; do  # the directory and every one above it: root's alone
        read -r owner mode < <(stat -L -c '%u %A' "$dir")
        if [ "$owner" != 0 ] || [ "${mode:5:1}" = w ] || [ "${mode:8:1}" = w ]; then
          die "$name searches $entry for libraries, and $dir is writable by others than root ($mode, uid $owner): rebuild without it"
        fi
        [ "$dir" != / ] || break
        dir=$(dirname "$dir")
      done
    done
  done <<<"$paths"
}

# --- what this node runs -------------------------------------------------------------------------

major_minor() { grep -o -E '[0-9]+\.[0-9]+' <<<"$1" | head -1; }

detect_running_slurm() {
  if [ -z "$RUNNING_SLURM" ]; then
    local tool
    for tool in slurmd srun sinfo; do
      if command -v "$tool" >/dev/null 2>&1; then
        RUNNING_SLURM=$("$tool" -V 2>/dev/null | grep -o -E '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1 || true)
        [ -n "$RUNNING_SLURM" ] && break
      fi
    done
  fi
  [ -n "$RUNNING_SLURM" ] || die "no Slurm found on this node (slurmd -V): install Slurm first, or say which one with --slurm-version X.Y"
  if [ "$(major_minor "$RUNNING_SLURM")" != "$(major_minor "$BUILT_SLURM")" ]; then
    die "$PLUGIN_SO was built for Slurm $BUILT_SLURM but this node runs Slurm $RUNNING_SLURM; Slurm loads only plugins of its own major.minor. Rebuild against this node's Slurm headers (slurm/spank.h of $RUNNING_SLURM: Debian's libslurm-dev, or the include dir of a source install, e.g. cmake --preset release -DSLURM_INCLUDE_DIR=/usr/local/include), then run this script again"
  fi
}

find_slurm_conf_dir() {
  [ -n "$SLURM_CONF_DIR" ] && return
  local candidate
  for candidate in "${SLURM_CONF:+$(dirname "${SLURM_CONF}")}" /etc/slurm /usr/local/etc/slurm; do
    [ -n "$candidate" ] && [ -f "$candidate/slurm.conf" ] && { SLURM_CONF_DIR=$candidate; return; }
  done
  SLURM_CONF_DIR=/etc/slurm  # an image without slurm.conf yet: Slurm's default config dir
}

find_plugin_dir() {
  [ -n "$PLUGIN_DIR" ] && return
  local conf=$SLURM_CONF_DIR/slurm.conf
  if [ -f "$conf" ]; then
    PLUGIN_DIR=$(sed -n 's/^[[:space:]]*[Pp]lugin[Dd]ir[[:space:]]*=[[:space:]]*\([^[:space:]:#]*\).*/\1/p' "$conf" | tail -1)
    [ -n "$PLUGIN_DIR" ] && return
  fi
  if command -v dpkg >/dev/null 2>&1; then
    PLUGIN_DIR=$(dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep -E '/slurm-wlm$' | head -1 || true)
    [ -n "$PLUGIN_DIR" ] && return
  fi
  local slurmd
  if slurmd=$(command -v slurmd 2>/dev/null); then
    local dir
    dir=$(cd "$(dirname "$slurmd")/.." && pwd)/lib/slurm
    if ls "$dir"/*.so >/dev/null 2>&1; then PLUGIN_DIR=$dir; return; fi
  fi
  if command -v scontrol >/dev/null 2>&1; then
    PLUGIN_DIR=$(timeout 5 scontrol show config 2>/dev/null | sed -n 's/^PluginDir *= *\([^:]*\).*/\1/p' || true)
    [ -n "$PLUGIN_DIR" ] && return
  fi
  die "cannot find Slurm's plugin dir (no PluginDir in $conf, no answer from scontrol, no slurm-wlm-basic-plugins package, no lib/slurm next to slurmd): pass --plugin-dir DIR"
}

# --- the plan: every file, its source and mode ---------------------------------------------------

plan() {
  [ -n "$PREFIX" ] || PREFIX=$BUILT_PREFIX
  PROFILE_DIR=$PREFIX/share/gpudirect-slurm/profiles
  local args=("default=$DEFAULT_MODE")
  # The plugin looks for profiles where it was built to; another prefix needs profile_dir=.
  if [ "$PROFILE_DIR" != "$BUILT_PROFILE_DIR" ] && ! grep -q '^profile_dir=' <<<"$(printf '%s\n' "${PLUGSTACK_ARGS[@]+"${PLUGSTACK_ARGS[@]}"}")"; then
    args+=("profile_dir=$PROFILE_DIR")
  fi
  PLUGSTACK_LINE="required $PLUGIN_DIR/spank_gpudirect.so ${args[*]} ${PLUGSTACK_ARGS[*]+"${PLUGSTACK_ARGS[*]}"}"
  PLUGSTACK_LINE=${PLUGSTACK_LINE% }
  PLUGSTACK_FILE=$SLURM_CONF_DIR/plugstack.conf.d/gpudirect.conf
  FILES=()  # "mode target source"
  FILES+=("0644 $PLUGIN_DIR/spank_gpudirect.so $PLUGIN_SO")
  [ -z "$LAUNCH_BIN" ] || FILES+=("0755 $PREFIX/bin/gpudirect-launch $LAUNCH_BIN")
  local profile
  for profile in "$repo"/profiles/*.conf; do
    FILES+=("0644 $PROFILE_DIR/$(basename "$profile") $profile")
  done
  # check-node's machine types, read by gpudirect-launch (from the build's prefix; another prefix
  # needs --expectations-dir).
  local expectation
  if [ -n "$LAUNCH_BIN" ]; then
    for expectation in "$repo"/expectations/*.conf; do
      FILES+=("0644 $PREFIX/share/gpudirect-slurm/expectations/$(basename "$expectation") $expectation")
    done
  fi
  FILES+=("0755 $PREFIX/libexec/gpudirect-slurm/gpudirect-rxdm $repo/scripts/rxdm/gpudirect-rxdm")
  [ -z "$LAUNCH_BIN" ] || FILES+=("0755 $ENROOT_HOOKS_DIR/50-gpudirect.sh @enroot-hook")
  FILES+=("0644 $PLUGSTACK_FILE -")
}

# --- the manifest ---------------------------------------------------------------------------------
# Lines: "file PATH", "dir PATH" (created by us), "line FILE<TAB>TEXT" (appended by us). Paths are
# the node's paths, without DESTDIR.

manifest_has() { [ -f "$MANIFEST" ] && grep -qxF -- "$1" "$MANIFEST"; }

owned_by_package() {
  command -v dpkg >/dev/null 2>&1 && [ -z "$DESTDIR" ] && dpkg -S "$1" >/dev/null 2>&1
}

new_manifest=()
record() { new_manifest+=("$1"); }
# No `printf | grep -q` here: under pipefail grep's early exit can fail printf with SIGPIPE, and a
# re-run then removed files it had just installed (seen: gpudirect-rxdm, now and then).
in_new_manifest() {
  local entry
  for entry in "${new_manifest[@]}"; do [ "$entry" = "$1" ] && return 0; done
  return 1
}

make_dirs() {  # records every directory it had to create, outermost first
  local dir=$1 missing=()
  while [ ! -d "$DESTDIR$dir" ]; do missing=("$dir" "${missing[@]+"${missing[@]}"}"); dir=$(dirname "$dir"); done
  for dir in "${missing[@]+"${missing[@]}"}"; do
    mkdir -m 0755 "$DESTDIR$dir"
    record "dir $dir"
  done
}

check_target() {
  local target=$1
  [ -e "$DESTDIR$target" ] || return 0
  manifest_has "file $target" && return 0
  if owned_by_package "$target"; then
    die "$target belongs to a Debian package ($(dpkg -S "$target" 2>/dev/null | cut -d: -f1)): remove the package first (dpkg -r gpudirect-slurm), or keep using it"
  fi
  [ "$FORCE" = 1 ] || die "$DESTDIR$target exists and was not installed by this script: move it away, or pass --force to overwrite it"
}

install_files() {
  local entry mode target source
  for entry in "${FILES[@]}"; do
    read -r mode target source <<<"$entry"
    check_target "$target"
  done
  for entry in "${FILES[@]}"; do
    read -r mode target source <<<"$entry"
    make_dirs "$(dirname "$target")"
    if [ "$source" = - ]; then
      printf '# Written by gpudirect-slurm scripts/install-node.sh; --uninstall removes it.\n%s\n' "$PLUGSTACK_LINE" >"$DESTDIR$target.tmp"
      chmod "$mode" "$DESTDIR$target.tmp"
      mv -f "$DESTDIR$target.tmp" "$DESTDIR$target"
    elif [ "$source" = @enroot-hook ]; then
      # The hook runs the gpudirect-launch installed here.
      sed "s|^launch=/usr/bin/gpudirect-launch\$|launch=$PREFIX/bin/gpudirect-launch|" \
        "$repo/scripts/enroot/hooks.d/50-gpudirect.sh" >"$DESTDIR$target.tmp"
      grep -qxF "launch=$PREFIX/bin/gpudirect-launch" "$DESTDIR$target.tmp" ||
        die "scripts/enroot/hooks.d/50-gpudirect.sh has no 'launch=/usr/bin/gpudirect-launch' line to point at $PREFIX/bin"
      chmod "$mode" "$DESTDIR$target.tmp"
      mv -f "$DESTDIR$target.tmp" "$DESTDIR$target"
    else
      install -m "$mode" "$source" "$DESTDIR$target"
    fi
    record "file $target"
  done
  include_plugstack_dir
  make_dirs "$(dirname "$MANIFEST_PATH")"
  if [ -f "$MANIFEST" ]; then
    local kind path
    while read -r kind path; do
      case "$kind" in
        # files of an earlier install that this one no longer has (another plugin dir, say) go
        file) in_new_manifest "file $path" || { rm -f "$DESTDIR$path"; say "removed $path (no longer installed)"; } ;;
        dir) record "dir $path" ;;  # created by an earlier run: still ours to remove
      esac
    done <"$MANIFEST"
  fi
  printf '%s\n' "${new_manifest[@]}" | sort -u >"$MANIFEST.tmp"
  mv -f "$MANIFEST.tmp" "$MANIFEST"
}

# Debian's plugstack.conf includes plugstack.conf.d/*.conf; a source-built Slurm's may not.
include_plugstack_dir() {
  local main=$SLURM_CONF_DIR/plugstack.conf
  local include="include $SLURM_CONF_DIR/plugstack.conf.d/*.conf"
  if manifest_has "line $main	$include"; then  # ours, from an earlier run
    manifest_has "file $main" && record "file $main"
    grep -qxF -- "$include" "$DESTDIR$main" 2>/dev/null || printf '%s\n' "$include" >>"$DESTDIR$main"
    record "line $main	$include"
    return
  fi
  if [ -f "$DESTDIR$main" ] && grep -qE "^[[:space:]]*include[[:space:]]+$SLURM_CONF_DIR/plugstack.conf.d/" "$DESTDIR$main"; then
    return
  fi
  [ -f "$DESTDIR$main" ] || record "file $main"
  printf '%s\n' "$include" >>"$DESTDIR$main"
  record "line $main	$include"
  say "added to $main: $include"
}

uninstall() {
  [ -f "$MANIFEST" ] || die "nothing to uninstall: no manifest at $MANIFEST (was this node installed with install-node.sh${DESTDIR:+ --destdir $DESTDIR}?)"
  local entries entry kind rest file text
  mapfile -t entries <"$MANIFEST"
  for entry in "${entries[@]}"; do
    kind=${entry%% *}; rest=${entry#* }
    case "$kind" in
      file) rm -f "$DESTDIR$rest" ;;
      line)
        file=${rest%%	*}; text=${rest#*	}
        if [ -f "$DESTDIR$file" ]; then
          grep -vxF -- "$text" "$DESTDIR$file" >"$DESTDIR$file.tmp" || true
          cat "$DESTDIR$file.tmp" >"$DESTDIR$file"
          rm -f "$DESTDIR$file.tmp"
        fi ;;
    esac
  done
  rm -f "$MANIFEST"
  # directories we created, deepest first, where empty
  printf '%s\n' "${entries[@]}" | sed -n 's/^dir //p' | awk '{print length($0) "\t" $0}' | sort -rn | cut -f2- |
    while IFS= read -r dir; do rmdir "$DESTDIR$dir" 2>/dev/null || true; done
  say "uninstalled: removed the ${#entries[@]} files, lines and directories of the manifest"
}

main() {
  parse_options "$@"
  if [ -z "$DESTDIR" ] && [ "$LIST" = 0 ] && [ "$(id -u)" -ne 0 ]; then
    die "run as root (it writes to Slurm's plugin and config dirs), or stage into a directory with --destdir"
  fi
  if [ "$UNINSTALL" = 1 ]; then
    uninstall
    return
  fi
  read_build
  [ "$LIST" = 1 ] || stage_binaries
  detect_running_slurm
  find_slurm_conf_dir
  find_plugin_dir
  plan
  if [ "$LIST" = 1 ]; then
    local entry
    for entry in "${FILES[@]}"; do printf '%s\n' "$(cut -d' ' -f2 <<<"$entry")"; done
    printf 'plugstack line: %s\n' "$PLUGSTACK_LINE"
    return
  fi
  install_files
  say "installed for Slurm $RUNNING_SLURM (plugin built for $BUILT_SLURM) under ${DESTDIR:-/}:"
  local entry
  for entry in "${FILES[@]}"; do say "  $(cut -d' ' -f2 <<<"$entry")"; done
  say "plugstack line ($PLUGSTACK_FILE): $PLUGSTACK_LINE"
  say "manifest: $MANIFEST (scripts/install-node.sh --uninstall${DESTDIR:+ --destdir $DESTDIR} removes all of it)"
}

main "$@"
