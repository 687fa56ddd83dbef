#!/usr/bin/env bash
# scripts/install-node.sh into temporary roots: what it installs, an idempotent re-run, --uninstall
# leaving nothing, its refusals (another Slurm major.minor, a file it did not install), and the
# installed plugin, doctor and enroot hook working on the local cluster from where the script put them.
source "$(dirname "$0")/lib.sh"

INSTALL=$SRC/scripts/install-node.sh
root=$CLUSTER_DIR/root
mkdir -p "$root"
args=(--build-dir "$BUILD" --default off --lib-dir /var/lib/tcpxo/lib64 --rxdm-ready /run/gpudirect/rxdm.ready --rxdm-timeout 90)
tree() { (cd "$1" && find . -mindepth 1 | sort); }
sums() { (cd "$1" && find . -type f -exec md5sum {} + | sort -k2); }

out=$("$INSTALL" "${args[@]}" --destdir "$root" 2>&1)
[ $? -eq 0 ] && pass "install into a temporary root" || fail "install into a temporary root" "$out"
prefix=$(grep -a -o 'gpudirect-build-info: [^;]*' "$PLUGIN" | sed -n 's/.* prefix=\([^ ]*\).*/\1/p')
plugin_dir=$(sed -n 's/^file \(.*\)\/spank_gpudirect.so$/\1/p' "$root/var/lib/gpudirect-slurm/install-manifest")
# A plugin-only build installs no gpudirect-launch, nor what only it reads or runs: check-node's
# machine types and the enroot hook.
expected="$plugin_dir/spank_gpudirect.so
$(for p in "$SRC"/profiles/*.conf; do echo "$prefix/share/gpudirect-slurm/profiles/$(basename "$p")"; done)
$prefix/libexec/gpudirect-slurm/gpudirect-rxdm
/etc/slurm/plugstack.conf.d/gpudirect.conf
/etc/slurm/plugstack.conf"
with_launcher && expected+="
$(for e in "$SRC"/expectations/*.conf; do echo "$prefix/share/gpudirect-slurm/expectations/$(basename "$e")"; done)
$prefix/bin/gpudirect-launch
/etc/enroot/hooks.d/50-gpudirect.sh"
expect_eq "the manifest lists every installed file" "$(sort <<<"$expected")" \
  "$(sed -n 's/^file //p' "$root/var/lib/gpudirect-slurm/install-manifest" | sort)"
expect_eq "the plugin's Slurm dir is the running Slurm's" "/usr/lib/x86_64-linux-gnu/slurm-wlm" "$plugin_dir"
cmp -s "$PLUGIN" "$root$plugin_dir/spank_gpudirect.so" && pass "the plugin is the build's" || fail "the plugin is the build's"
expect_eq "plugstack.conf.d/gpudirect.conf: the arguments given" \
  "required $plugin_dir/spank_gpudirect.so default=off lib_dir=/var/lib/tcpxo/lib64 rxdm_ready=/run/gpudirect/rxdm.ready rxdm_timeout=90" \
  "$(grep '^required' "$root/etc/slurm/plugstack.conf.d/gpudirect.conf")"
expect_eq "a plugstack.conf without one gets the include of plugstack.conf.d" \
  "include /etc/slurm/plugstack.conf.d/*.conf" "$(cat "$root/etc/slurm/plugstack.conf")"
hook=$root/etc/enroot/hooks.d/50-gpudirect.sh
if with_launcher; then
  expect_eq "the enroot hook: in enroot's hooks dir, executable, running the installed gpudirect-launch" \
    "yes launch=$prefix/bin/gpudirect-launch" "$([ -x "$hook" ] && echo yes) $(grep '^launch=' "$hook")"
  expect_eq "... and otherwise the script's own" "" \
    "$(diff <(grep -v '^launch=' "$hook") <(grep -v '^launch=' "$SRC/scripts/enroot/hooks.d/50-gpudirect.sh"))"
else
  skip "the enroot hook installed, running the installed gpudirect-launch"
fi

before_tree=$(tree "$root"); before_sums=$(sums "$root")
out=$("$INSTALL" "${args[@]}" --destdir "$root" 2>&1)
[ $? -eq 0 ] && pass "a re-run succeeds" || fail "a re-run succeeds" "$out"
# The difference, not both listings: fail shows 20 lines, and the two listings share their first 20.
changed=$(diff <(printf '%s\n%s\n' "$before_tree" "$before_sums") <(tree "$root"; sums "$root"))
[ -z "$changed" ] && pass "a re-run changes nothing (same files, same contents)" ||
  fail "a re-run changes nothing (same files, same contents)" "$changed"

# An admin's plugstack.conf keeps its lines; ours is added once and removed again.
root2=$CLUSTER_DIR/root2
mkdir -p "$root2/etc/slurm"
printf 'optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_other.so\n' >"$root2/etc/slurm/plugstack.conf"
"$INSTALL" "${args[@]}" --destdir "$root2" >/dev/null 2>&1
"$INSTALL" "${args[@]}" --destdir "$root2" >/dev/null 2>&1
expect_eq "an existing plugstack.conf: our include appended once" "optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_other.so
include /etc/slurm/plugstack.conf.d/*.conf" "$(cat "$root2/etc/slurm/plugstack.conf")"
"$INSTALL" --destdir "$root2" --uninstall >/dev/null 2>&1
expect_eq "--uninstall keeps the admin's plugstack.conf, minus our line" \
  "./etc
./etc/slurm
./etc/slurm/plugstack.conf
optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_other.so" "$(tree "$root2")
$(cat "$root2/etc/slurm/plugstack.conf")"

out=$("$INSTALL" --destdir "$root" --uninstall 2>&1)
[ $? -eq 0 ] && pass "--uninstall succeeds" || fail "--uninstall succeeds" "$out"
expect_eq "--uninstall leaves the temporary root empty" "" "$(tree "$root")"
out=$("$INSTALL" --destdir "$root" --uninstall 2>&1)
[ $? -ne 0 ] && expect_contains "--uninstall with nothing installed says so" "nothing to uninstall" "$out" || fail "--uninstall with nothing installed fails"

out=$("$INSTALL" "${args[@]}" --destdir "$root" --slurm-version 23.02.7 2>&1)
rc=$?
expect_eq "refuses another Slurm major.minor: exit 1, nothing written" "1 " "$rc $(tree "$root")"
expect_contains "... naming both versions" "built for Slurm $(grep -a -o 'slurm=[0-9.]*' "$PLUGIN" | cut -d= -f2) but this node runs Slurm 23.02.7" "$out"
expect_contains "... and how to rebuild" "Rebuild against this node's Slurm headers" "$out"
built_slurm=$(grep -a -o 'slurm=[0-9.]*' "$PLUGIN" | cut -d= -f2)
patch=${built_slurm##*.}
other_patch="${built_slurm%.*}.$((patch == 0 ? 1 : patch - 1))"  # the build's major.minor, another patch release
"$INSTALL" "${args[@]}" --destdir "$root" --slurm-version "$other_patch" >/dev/null 2>&1 &&
  pass "accepts another patch release of the same major.minor" || fail "accepts another patch release of the same major.minor"
"$INSTALL" --destdir "$root" --uninstall >/dev/null 2>&1

mkdir -p "$root$plugin_dir" && echo foreign >"$root$plugin_dir/spank_gpudirect.so"
out=$("$INSTALL" "${args[@]}" --destdir "$root" 2>&1)
[ $? -ne 0 ] && expect_contains "refuses to overwrite a file it did not install" "was not installed by this script" "$out" ||
  fail "refuses to overwrite a file it did not install"
expect_eq "... and leaves it alone" "foreign" "$(cat "$root$plugin_dir/spank_gpudirect.so")"
rm -rf "$root" && mkdir -p "$root"

# Installed for real (no --destdir) under a private prefix, plugin dir and config dir: the line it
# writes is what the local cluster uses, and the job gets its binding from the installed files.
private=$CLUSTER_DIR/node
out=$("$INSTALL" --build-dir "$BUILD" --prefix "$private/usr" --plugin-dir "$private/slurm-plugins" \
  --slurm-conf-dir "$private/etc/slurm" --enroot-hooks-dir "$private/etc/enroot/hooks.d" --lib-dir "$LIB_DIR" \
  --arg topology="$TOPOLOGY" 2>&1)
[ $? -eq 0 ] && pass "install with --prefix, --plugin-dir, --slurm-conf-dir" || fail "install with --prefix, --plugin-dir, --slurm-conf-dir" "$out"
line=$(grep '^required' "$private/etc/slurm/plugstack.conf.d/gpudirect.conf")
expect_contains "another prefix than the build's adds profile_dir=" "profile_dir=$private/usr/share/gpudirect-slurm/profiles" "$line"
cluster up --plugin "$(awk '{print $2}' <<<"$line")" --plugin-args "$(cut -d' ' -f3- <<<"$line")" >/dev/null ||
  { fail "local cluster starts with the script's plugstack line"; summary; exit 1; }
out=$(srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo "$(hostname) $GPUDIRECT_NICS ${NCCL_FASTRAK_CTRL_DEV-}"' 2>&1 | sort)
expect_eq "a job gets its binding from the installed plugin and profiles" "node1 enp6s0 enp0s12
node2 enp6s0 enp0s12" "$out"
if with_launcher; then
  out=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo "$private/usr/bin/gpudirect-launch" doctor 2>&1)
  expect_contains "the installed gpudirect-launch doctor agrees inside the task" ": OK (mode tcpxo" "$out"
  # The installed enroot hook, as enroot runs it for a tcpxo task: it asks the installed doctor, which
  # reads the cluster's plugstack line (lib_dir=) and the installed profiles.
  container=$CLUSTER_DIR/container
  mkdir -p "$container" && : >"$container.fstab" && : >"$container.environ"
  out=$(GPUDIRECT_MODE=tcpxo ENROOT_ROOTFS=$container ENROOT_MOUNTS=$container.fstab ENROOT_ENVIRON=$container.environ \
    "$private/etc/enroot/hooks.d/50-gpudirect.sh" 2>&1)
  expect_eq "the installed enroot hook mounts the lib dir of the installed line into a tcpxo container" \
    "0 $LIB_DIR $LIB_DIR none x-create=auto,rbind,ro" "$? $(head -1 "$container.fstab")"
else
  skip "the installed doctor and enroot hook inside a task"
fi
"$INSTALL" --uninstall >/dev/null 2>&1
expect_eq "--uninstall (no --destdir) removes every file it installed" "" "$(find "$private" -type f 2>/dev/null)"

summary
