#!/usr/bin/env bash
# The Debian package on this machine: CPack builds it from this build, lintian finds no error or warning,
# dpkg -i installs it, the local cluster loads the plugin from the installed path with the
# installed profiles and a --gpu-direct job gets its binding, dpkg -r leaves none of its files.
source "$(dirname "$0")/lib.sh"

PACKAGE=gpudirect-slurm
if dpkg -s "$PACKAGE" >/dev/null 2>&1; then
  echo "$PACKAGE is already installed on this machine: dpkg -P $PACKAGE first (this test installs and removes it)"
  exit 1
fi
trap 'dpkg -P "$PACKAGE" >/dev/null 2>&1; finish' EXIT

deb_dir=$CLUSTER_DIR/deb
out=$(cd "$BUILD" && cpack -G DEB -B "$deb_dir" 2>&1)
deb=$(ls "$deb_dir"/*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then fail "cpack builds the .deb" "$out"; summary; exit 1; fi
pass "cpack builds $(basename "$deb")"

slurm=$(dpkg-query -W -f='${Version}' libslurm-dev | sed 's/-.*//')
series=$(cut -d. -f1,2 <<<"$slurm")
next_minor=$(printf '%02d' $((10#$(cut -d. -f2 <<<"$slurm") + 1)))
depends=$(dpkg-deb -f "$deb" Depends)
expect_contains "Depends: the Slurm series it was built for ($series)" \
  "slurm-wlm-basic-plugins (>= $slurm), slurm-wlm-basic-plugins (<< $(cut -d. -f1 <<<"$slurm").$next_minor~)" "$depends"
expect_contains "Depends: hwloc" "libhwloc" "$depends"
expect_contains "Depends: hwloc's PCI component (live discovery)" "libhwloc-plugins" "$depends"
expect_contains "Depends: libfabric" "libfabric" "$depends"

if command -v lintian >/dev/null 2>&1; then
  # Strict: any error or warning fails (cmake/packaging/lintian-overrides holds the one tag that does
  # not apply to a package built outside Debian, with the reason). Every tag seen is listed.
  out=$(lintian --display-info --fail-on error,warning "$deb" 2>&1)
  rc=$?
  echo "lintian's tags: $(grep -c -E '^[EWIPX]: ' <<<"$out")"
  grep -E '^[EWIPX]: ' <<<"$out" | sed 's/^/    /'
  expect_eq "lintian: no error and no warning (exit 0 with --fail-on error,warning)" "0 " "$rc $(grep -E '^[EW]: ' <<<"$out")"
else
  fail "lintian: installed" "lintian is missing: scripts/install-deps.sh installs it"
fi

out=$(dpkg -i "$deb" 2>&1)
expect_eq "dpkg -i installs it" "ii" "$(dpkg-query -W -f='${db:Status-Abbrev}' "$PACKAGE" 2>/dev/null | cut -c1-2)"
conffile=/etc/slurm/plugstack.conf.d/gpudirect.conf
expect_contains "the plugstack line is a conffile" "$conffile" "$(dpkg-query -W -f='${Conffiles}' "$PACKAGE")"
hook=/etc/enroot/hooks.d/50-gpudirect.sh
expect_contains "the enroot hook is a conffile" "$hook" "$(dpkg-query -W -f='${Conffiles}' "$PACKAGE")"
expect_eq "the enroot hook is executable and runs the installed gpudirect-launch" "yes launch=/usr/bin/gpudirect-launch" \
  "$([ -x "$hook" ] && echo yes) $(grep '^launch=' "$hook")"
line=$(grep -E '^required ' "$conffile" 2>/dev/null)
plugin=$(awk '{print $2}' <<<"$line")
expect_eq "the shipped line: the installed plugin, default=off" "required /usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm/spank_gpudirect.so default=off" "$line"
[ -f "$plugin" ] && pass "plugin installed at $plugin" || fail "plugin installed at $plugin"

# The installed line, plus what this machine needs instead of an A3 Mega: no profile_dir=, so the
# plugin reads the installed profiles.
args="$(cut -d' ' -f3- <<<"$line") topology=$TOPOLOGY lib_dir=$LIB_DIR"
cluster up --plugin "$plugin" --plugin-args "$args" >/dev/null || { fail "local cluster starts with the installed plugin"; summary; exit 1; }
expect_eq "the local cluster's plugstack names the installed plugin" "required $plugin $args" "$(cat "$CLUSTER_DIR/etc/plugstack.conf")"

out=$(srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo bash -c \
  'echo "$SLURM_PROCID $(hostname) $GPUDIRECT_GPUS $GPUDIRECT_NICS $(awk "/Cpus_allowed_list/ {print \$2}" /proc/self/status) ${NCCL_FASTRAK_CTRL_DEV-}"' 2>&1 | sort -n)
expect_eq "a --gpu-direct=tcpxo job gets its binding from the installed plugin and profiles" "0 node1 0 enp6s0 0 enp0s12
1 node1 1 enp7s0 0 enp0s12
2 node2 0 enp6s0 0 enp0s12
3 node2 1 enp7s0 0 enp0s12" "$out"
out=$(srun -N1 -n1 --gpus-per-task=1 bash -c 'echo ${GPUDIRECT_MODE-unset}' 2>&1)
expect_eq "default=off: a job without --gpu-direct is untouched" "unset" "$out"
out=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo /usr/bin/gpudirect-launch doctor 2>&1)
expect_contains "the installed gpudirect-launch doctor agrees inside the task" ": OK (mode tcpxo" "$out"
# The installed hook as enroot runs it for a tcpxo task: the installed doctor, the installed
# profiles' mount lines, the cluster's lib_dir=.
container=$CLUSTER_DIR/container
mkdir -p "$container" && : >"$container.fstab" && : >"$container.environ"
out=$(GPUDIRECT_MODE=tcpxo ENROOT_ROOTFS=$container ENROOT_MOUNTS=$container.fstab ENROOT_ENVIRON=$container.environ "$hook" 2>&1)
expect_eq "the installed enroot hook mounts the lib dir into a tcpxo container" \
  "0 $LIB_DIR $LIB_DIR none x-create=auto,rbind,ro" "$? $(head -1 "$container.fstab")"
cluster down >/dev/null 2>&1

files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {sub(/^\./, "", $6); print $6}')
out=$(dpkg -r "$PACKAGE" 2>&1) || fail "dpkg -r succeeds" "$out"
left=$(for f in $files; do [ -e "$f" ] && echo "$f"; done)
expect_eq "dpkg -r leaves none of the package's files (conffile included)" "" "$left"
expect_eq "... and leaves Slurm's own plugstack.conf.d" "yes" "$([ -d /etc/slurm/plugstack.conf.d ] && echo yes)"
dpkg -P "$PACKAGE" >/dev/null 2>&1
expect_eq "dpkg -P forgets the package" "" "$(dpkg-query -W -f='${Status}' "$PACKAGE" 2>/dev/null)"

summary
