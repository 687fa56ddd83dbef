#!/usr/bin/env bash
# A program nobody here wrote: PyTorch DistributedDataParallel (Debian's python3-torch, Gloo) under
# the real local Slurm, 2 namespace nodes x 2 tasks with --gpu-direct=tcpxo, started three ways:
#   1. srun --gpu-direct=tcpxo,torch python3 ...: the plugin alone gives env:// what it needs;
#   2. srun --gpu-direct=tcpxo gpudirect-launch exec -- python3 ...: exec gives it;
#   3. srun (one task per node) torchrun --no-python gpudirect-launch exec -- python3 ...: torchrun's
#      own variables win and exec binds each of its workers;
#   4. scripts/sbatch/pytorch-local.sbatch, the user guide's script.
# Every way: all ranks' parameters agree after 5 SGD steps and equal, with the loss of every step,
# a 1-process run on the whole batch; each process runs on the CPUs the plugin gave it, Gloo uses the
# task's own NIC (GLOO_SOCKET_IFNAME, and the local address of every Gloo connection is that NIC's).
source "$(dirname "$0")/lib.sh"
PYTHON=/usr/bin/python3
CLIENT=$SRC/tests/clients/torch_ddp.py
"$PYTHON" -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null \
  || { echo "test_pytorch_ddp: $PYTHON has no torch with Gloo (apt-get install python3-torch; scripts/install-deps.sh does)"; exit 1; }
cluster_up

# Debian 13's python3-torch (2.6) is built without libuv, which torch >= 2.4's TCPStore asks for by
# default: env:// then needs USE_LIBUV=0 (docs/users.md), and torchrun's static rendezvous asks for
# libuv whatever USE_LIBUV says (torch's bug, not ours); there torchrun meets through a c10d file
# store in the cluster's shared directory instead, and its agents share no TCPStore with the workers.
torch_without_libuv() {
  "$PYTHON" - <<'PY'
import sys
from torch.distributed import TCPStore
try:
    TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
except TypeError:      # torch < 2.4: no libuv option at all
    sys.exit(1)
except RuntimeError as e:
    sys.exit(0 if "libuv" in str(e) else 1)
sys.exit(1)
PY
}
torchrun_rendezvous="--master_addr=\$MASTER_ADDR --master_port=\$MASTER_PORT"
if torch_without_libuv; then
  export USE_LIBUV=0 TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1
  rm -f "$CLUSTER_DIR/torchrun-rendezvous"
  torchrun_rendezvous="--rdzv_backend=c10d --rdzv_endpoint=$CLUSTER_DIR/torchrun-rendezvous --rdzv_conf=store_type=file"
  echo "test_pytorch_ddp: $("$PYTHON" -c 'import torch; print(torch.__version__)') has no libuv: USE_LIBUV=0, torchrun through a c10d file store"
fi

"$PYTHON" "$CLIENT" --single >"$CLUSTER_DIR/reference.json" 2>&1 || { cat "$CLUSTER_DIR/reference.json"; exit 1; }

# check_run NAME OUTPUT_FILE EXPECTED_RANKS: every rank's JSON line against the reference.
check_run() {
  "$PYTHON" - "$CLUSTER_DIR/reference.json" "$2" "$3" <<'PY'
import json, sys

def cpus(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return sorted(out)

ref = json.load(open(sys.argv[1]))
import glob, os
runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(sys.argv[2], "rank*.json")))]
expected = int(sys.argv[3])
problems = []
ranks = sorted(r["rank"] for r in runs)
if ranks != list(range(expected)) or any(r["world"] != expected for r in runs):
    problems.append(f"ranks {ranks} of worlds {sorted(set(r['world'] for r in runs))}, expected 0..{expected - 1}")
if len({r["digest"] for r in runs}) != 1:
    problems.append("the ranks' parameters differ: " + ", ".join(f"rank {r['rank']} {r['digest'][:12]}" for r in runs))
for r in runs:
    who = f"rank {r['rank']} on {r['host']}"
    d = max(abs(a - b) for a, b in zip(r["params"], ref["params"]))
    if len(r["params"]) != len(ref["params"]) or d > 1e-12:
        problems.append(f"{who}: parameters differ from the 1-process run by {d:.3g}")
    dl = max(abs(a - b) for a, b in zip(r["losses"], ref["losses"]))
    if len(r["losses"]) != len(ref["losses"]) or dl > 1e-12:
        problems.append(f"{who}: losses {r['losses']} differ from the 1-process run's {ref['losses']}")
    env = r["env"]
    if not env["GPUDIRECT_CPUS"] or r["affinity"] != cpus(env["GPUDIRECT_CPUS"]):
        problems.append(f"{who}: runs on CPUs {r['affinity']}, the plugin gave {env['GPUDIRECT_CPUS']}")
    if not env["GPUDIRECT_NICS"] or env["GLOO_SOCKET_IFNAME"] != env["GPUDIRECT_NICS"]:
        problems.append(f"{who}: GLOO_SOCKET_IFNAME={env['GLOO_SOCKET_IFNAME']}, the task's NICs are {env['GPUDIRECT_NICS']}")
    # Gloo: each rank listens on its interface's address, a peer connects there (its own end takes
    # whatever source address routing gives). So every connection has a rank's NIC address at its
    # listening end, and each rank's NIC address is some connection's end.
    own, others = set(r["nic_addresses"]), {a for o in runs if o is not r for a in o["nic_addresses"]}
    if not own:
        problems.append(f"{who}: its GLOO_SOCKET_IFNAME {env['GLOO_SOCKET_IFNAME']} has no IPv4 address")
    stray = [c for c in r["gloo_connections"] if c[0] not in own and c[1] not in others]
    if stray or not r["gloo_connections"]:
        problems.append(f"{who}: Gloo connections {r['gloo_connections']} (NIC {env['GLOO_SOCKET_IFNAME']} has {sorted(own)}), "
                        f"on no rank's NIC: {stray}")
    if not any(own & {c[0] if o is r else c[1] for c in o["gloo_connections"]} for o in runs):
        problems.append(f"{who}: no Gloo connection reaches its NIC's address {sorted(own)}")
by_node = {}
for r in runs:
    by_node.setdefault(r["host"], []).append(r)
for host, rs in by_node.items():
    if len({r["env"]["GPUDIRECT_GPUS"] for r in rs}) != len(rs) or len({r["env"]["GPUDIRECT_NICS"] for r in rs}) != len(rs):
        problems.append(f"{host}: two ranks share a GPU or NIC: " +
                        ", ".join(f"{r['env']['GPUDIRECT_GPUS']}/{r['env']['GPUDIRECT_NICS']}" for r in rs))
print("; ".join(problems) if problems else
      f"{len(runs)} ranks on {len(by_node)} nodes, losses {ref['losses'][0]:.6f}->{ref['losses'][-1]:.6f}, NICs " +
      " ".join(sorted(f"{r['rank']}:{r['env']['GPUDIRECT_NICS']}" for r in runs)))
sys.exit(1 if problems else 0)
PY
}

REPORTS=$CLUSTER_DIR/reports
run_case() {  # NAME EXPECTED_RANKS SRUN_ARGS_AND_COMMAND...  (the command writes into $REPORTS)
  local name=$1 ranks=$2
  shift 2
  rm -rf "$REPORTS" && mkdir -m 777 "$REPORTS"
  local rc
  timeout 120 srun -N2 --kill-on-bad-exit=1 "$@" >"$CLUSTER_DIR/run.log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$name: exit $rc" "$(tail -15 "$CLUSTER_DIR/run.log")"
    return
  fi
  local result
  if result=$(check_run "$name" "$REPORTS" "$ranks"); then pass "$name: $result"; else fail "$name" "$result"; fi
}

run_case "srun --gpu-direct=tcpxo,torch: the plugin alone gives DDP its rendezvous, CPUs and NIC" 4 \
  --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo,torch "$PYTHON" "$CLIENT" --report-dir "$REPORTS"

run_case "srun --gpu-direct=tcpxo gpudirect-launch exec: exec gives it" 4 \
  --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo "$LAUNCH" exec -- "$PYTHON" "$CLIENT" --report-dir "$REPORTS"

# One torchrun per node (its agent is the Slurm task), two workers each; the rendezvous from ',torch'.
# Underscored flags: torch 1.13 (Debian 12) knows no others; later releases accept both. --redirects
# and --tee other than 0: torch 1.13's default (0) fails on Python 3.11 ("'NoneType' object has no
# attribute 'get'": 3.11's enum.Flag no longer iterates its zero member).
run_case "srun torchrun --nproc-per-node=2, exec inside: torchrun's ranks, exec's binding per worker" 4 \
  --ntasks-per-node=1 --gpus-per-node=2 --gpu-direct=tcpxo,torch bash -c \
  "exec $PYTHON -m torch.distributed.run --nnodes=2 --nproc_per_node=2 --node_rank=\$SLURM_NODEID \
   $torchrun_rendezvous --redirects=2 --tee=2 --no_python $LAUNCH exec -- $PYTHON $CLIENT --report-dir $REPORTS"

# The user guide's sbatch script, as written.
rm -rf "$REPORTS" && mkdir -m 777 "$REPORTS"
if timeout 150 sbatch --wait -o "$CLUSTER_DIR/sbatch.log" "$SRC/scripts/sbatch/pytorch-local.sbatch" "$CLIENT" --report-dir "$REPORTS" >/dev/null; then
  if result=$(check_run sbatch "$REPORTS" 4); then pass "scripts/sbatch/pytorch-local.sbatch: $result"; else fail "pytorch-local.sbatch" "$result"; fi
else
  fail "scripts/sbatch/pytorch-local.sbatch failed" "$(tail -15 "$CLUSTER_DIR/sbatch.log")"
fi

# The doctor in such a task finds what the plugin set, torch's variables included.
out=$(srun -N2 --ntasks-per-node=2 --gpus-per-task=1 --gpu-direct=tcpxo,torch "$LAUNCH" doctor 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c ': OK (')" -eq 4 ] && pass "doctor in a ',torch' task: OK on every task" \
  || fail "doctor in a ',torch' task: exit $rc" "$out"

# Without ',torch' the plugin adds none of torch's variables (they are opt-in).
out=$(srun -N1 -n1 --gpus-per-task=1 --gpu-direct=tcpxo bash -c 'echo "${RANK-unset} ${MASTER_ADDR-unset} ${GLOO_SOCKET_IFNAME-unset}"' 2>"$CLUSTER_DIR/err.log")
expect_eq "--gpu-direct=tcpxo without ,torch sets no torch variables" "unset unset unset" "$out"
# A user's own values win.
out=$(MASTER_PORT=29999 srun -N2 --ntasks-per-node=1 --gpus-per-task=1 --gpu-direct=tcpxo,torch bash -c 'echo "$RANK/$WORLD_SIZE $MASTER_PORT"' 2>"$CLUSTER_DIR/err.log" | sort)
expect_eq "--gpu-direct=tcpxo,torch keeps the user's MASTER_PORT" "0/2 29999
1/2 29999" "$out"

summary
