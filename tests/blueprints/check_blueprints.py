#!/usr/bin/env python3
"""Checks blueprints/*-blueprint.yaml without deploying them.

- each blueprint and deployment file parses as YAML and has Cluster Toolkit's shape;
- every module source is one the toolkit ships (tests/blueprints/toolkit-modules.txt);
- every $(vars.X) is defined (blueprint or deployment file), every $(id.output) names a module;
- every file a blueprint references exists: ghpc_stage() paths in this repo, embedded toolkit files,
  and the repo paths that node-side commands run;
- the image step installs exactly what scripts/install-node.sh installs (both run into temporary
  roots and compared file by file), including the gpudirect-rxdm that the controller's
  prolog/epilog run, with the rxdm_ready= path of the blueprint;
- TCPXO/TCPX blueprints: the controller uses the long-prolog slurm.conf and runs gpudirect-rxdm;
  gIB blueprints (A3 Ultra, A4, A4X, partition default gib): no rxdm_ready=, no /etc/profile.d
  hook, nccl-gib installed at the blueprint's held version, the RoCE network (8 subnets, A4X 4) and
  the second gVNIC attached to the GPU nodes; A3 Ultra / A4: no prolog/epilog; A4X: the IMEX
  prolog/epilog (slurm-gcp's, at the held release), SwitchType=switch/nvidia_imex, PrologFlags
  with Alloc, and the nodeset's accelerator_topology 1x72 with its reservation (slurm-gcp's
  18-VM blocks);
- the image starts from a public slurm-gcp image family (A4X, arm64: Google's public arm64
  accelerator image with Slurm from slurm-gcp's playbook at the held release), and no blueprint
  file carries a copyright header (every line is the project's own);
- the node prerequisites scripts: A3 Mega's slurmd wait (no aperture device: no wait; device with an
  empty /dev/aperture_devices: fails; populated: starts), A3 High's RxDM topology file (4 NICs,
  2 GPUs each, the path gpudirect-rxdm reads) and the gIB check (plugin missing: fails, naming it;
  present: passes; a profile.d hook: a warning).

Usage: check_blueprints.py SOURCE_DIR BUILD_DIR   (prints PASS/FAIL lines, exits 1 on a failure)
"""
import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

SRC, BUILD = sys.argv[1], sys.argv[2]
BLUEPRINTS = os.path.join(SRC, "blueprints")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS: {name}")
    else:
        failed += 1
        print(f"FAIL: {name}")
        if detail:
            print("    " + str(detail).replace("\n", "\n    ")[:2000])


def toolkit_lists():
    modules, embedded = set(), set()
    with open(os.path.join(SRC, "tests/blueprints/toolkit-modules.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("embedded:"):
                embedded.add(line[len("embedded:"):])
            else:
                modules.add(line)
    return modules, embedded


def strings(node):
    """Every string in a YAML tree."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def module_path(source):
    # github.com/GoogleCloudPlatform/cluster-toolkit//modules/x/y?ref=v1.2&depth=1 -> modules/x/y
    if "//" in source:
        source = source.split("//", 1)[1]
    return source.split("?", 1)[0]


def tree(root):
    out = {}
    for base, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(base, d), root)] = "dir"
        for f in files:
            path = os.path.join(base, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = hashlib.sha256(fh.read()).hexdigest() + " " + oct(os.stat(path).st_mode & 0o777)
    return out


def substitute(text, variables):
    return re.sub(r"\$\(vars\.([A-Za-z0-9_]+)\)", lambda m: str(variables.get(m.group(1), m.group(0))), text)


def check_blueprint(path, modules, embedded):
    name = os.path.basename(path)
    deployment_path = path.replace("-blueprint.yaml", "-deployment.yaml")
    try:
        with open(path) as f:
            blueprint = yaml.safe_load(f)
        with open(deployment_path) as f:
            deployment = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        check(f"{name}: parses, with its deployment file", False, e)
        return
    check(f"{name}: parses, with its deployment file {os.path.basename(deployment_path)}", True)

    shape = (isinstance(blueprint.get("blueprint_name"), str) and isinstance(blueprint.get("vars"), dict)
             and isinstance(blueprint.get("deployment_groups"), list)
             and all("group" in g and isinstance(g.get("modules"), list) for g in blueprint["deployment_groups"])
             and all("id" in m and "source" in m for g in blueprint["deployment_groups"] for m in g["modules"]))
    check(f"{name}: blueprint_name, vars, deployment_groups of groups of modules with id and source", shape)
    check(f"{name}: the deployment file has a GCS backend and vars",
          deployment.get("terraform_backend_defaults", {}).get("type") == "gcs" and isinstance(deployment.get("vars"), dict))
    if not shape:
        return
    all_modules = [m for g in blueprint["deployment_groups"] for m in g["modules"]]
    ids = [m["id"] for m in all_modules]
    check(f"{name}: module ids are unique", len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1))

    unknown = sorted({m["source"] for m in all_modules if module_path(m["source"]) not in modules})
    check(f"{name}: every module source is one Cluster Toolkit ships", not unknown, unknown)

    variables = dict(blueprint["vars"])
    variables.update({k: v for k, v in deployment["vars"].items()})
    texts = list(strings(blueprint))
    used_vars = {v for t in texts for v in re.findall(r"\$\(vars\.([A-Za-z0-9_]+)", t)}
    check(f"{name}: every $(vars.X) is defined in the blueprint or its deployment file",
          used_vars <= set(variables), sorted(used_vars - set(variables)))
    refs = {r for t in texts for r in re.findall(r"\$\(([A-Za-z0-9_-]+)\.[A-Za-z0-9_]+\)", t) if r != "vars"}
    check(f"{name}: every $(module.output) names a module", refs <= set(ids), sorted(refs - set(ids)))
    for m in all_modules:
        missing_use = [u for u in m.get("use", []) if u not in ids]
        if missing_use:
            check(f"{name}: module {m['id']} uses existing modules", False, missing_use)

    staged = {p for t in texts for p in re.findall(r'ghpc_stage\("([^"]+)"\)', t)}
    missing = sorted(p for p in staged if not os.path.exists(os.path.join(BLUEPRINTS, p)))
    check(f"{name}: every ghpc_stage() file exists in the repo ({', '.join(sorted(staged))})", staged and not missing, missing)
    embedded_refs = {p for t in texts for p in re.findall(r"\.\./_modules/embedded/(\S+)", t)}
    check(f"{name}: every embedded toolkit file it names exists ({len(embedded_refs)})",
          embedded_refs <= embedded, sorted(embedded_refs - embedded))
    repo_paths = {p for t in texts for p in re.findall(r"/opt/gpudirect-slurm/src/((?:scripts|blueprints)/[A-Za-z0-9_./-]+)", t)}
    check(f"{name}: repo files that node commands run exist ({', '.join(sorted(repo_paths))})",
          all(os.path.exists(os.path.join(SRC, p)) for p in repo_paths))

    # The partition's boot-time plugstack line says which mode the GPU nodes run.
    partition = [r for m in all_modules for r in m.get("settings", {}).get("runners", []) or []
                 if "install-node.sh" in str(r.get("content", ""))]
    partition_words = shlex.split(substitute(partition[0]["content"].split("install-node.sh", 1)[1].replace("\\\n", " "),
                                             variables)) if partition else []
    default = partition_words[partition_words.index("--default") + 1] if "--default" in partition_words[:-1] else ""
    gib = default == "gib"
    imex = any(str(m.get("settings", {}).get("machine_type", "")) == "a4x-highgpu-4g" for m in all_modules)

    controller = [m for m in all_modules if module_path(m["source"]).endswith("schedmd-slurm-gcp-v6-controller")]
    check(f"{name}: one Slurm controller", len(controller) == 1)
    if not controller:
        return
    settings = controller[0].get("settings", {})
    prolog = " ".join(s.get("content", "") for s in settings.get("prolog_scripts", []))
    epilog = " ".join(s.get("content", "") for s in settings.get("epilog_scripts", []))
    rxdm = "/usr/libexec/gpudirect-slurm/gpudirect-rxdm"
    if gib and imex:
        check_imex_controller(name, blueprint, settings, prolog, epilog, variables)
        check_gib_blueprint(name, blueprint, all_modules, variables)
    elif gib:
        check(f"{name}: gIB needs no per-job daemon: the controller has no prolog or epilog",
              not settings.get("prolog_scripts") and not settings.get("epilog_scripts") and "rxdm" not in text_of(blueprint))
        check_gib_blueprint(name, blueprint, all_modules, variables)
    else:
        check(f"{name}: the controller uses the long-prolog slurm.conf (PrologEpilogTimeout=600)",
              str(settings.get("slurm_conf_tpl", "")).endswith("schedmd-slurm-gcp-v6-controller/etc/long-prolog-slurm.conf.tpl"))
        check(f"{name}: the controller's prolog and epilog run the installed gpudirect-rxdm",
              f"exec {rxdm} prolog" in prolog and f"exec {rxdm} epilog" in epilog, (prolog, epilog))

    image = [m for m in all_modules if module_path(m["source"]) == "modules/packer/custom-image"]
    family = substitute(str(image[0].get("settings", {}).get("source_image_family", "")), variables) if image else ""
    if imex:
        # No slurm-gcp image is published for arm64: Google's arm64 accelerator image, Slurm from
        # slurm-gcp's playbook at the held release.
        runners = [r for m in all_modules for r in m.get("settings", {}).get("runners", []) or []]
        slurm = [r for r in runners if "ansible-pull" in str(r.get("content", ""))]
        ref = str(variables.get("slurm_gcp_ref", ""))
        check(f"{name}: the arm64 image starts from Google's public arm64 accelerator image ({family}) and gets Slurm from "
              f"slurm-gcp's playbook at the held release slurm_gcp_ref ({ref})",
              "arm64" in family and variables.get("base_image_project") == "ubuntu-os-accelerator-images" and len(slurm) == 1
              and "GoogleCloudPlatform/slurm-gcp -C $(vars.slurm_gcp_ref)" in slurm[0]["content"]
              and re.fullmatch(r"\d+\.\d+\.\d+", ref), slurm)
        check(f"{name}: the image build, login and controller machines are arm64 (c4a), to build and boot the arm64 image",
              all(str(m.get("settings", {}).get("machine_type", "")).startswith("c4a-") for m in all_modules
                  if module_path(m["source"]) in ("modules/packer/custom-image",
                                                  "community/modules/scheduler/schedmd-slurm-gcp-v6-login",
                                                  "community/modules/scheduler/schedmd-slurm-gcp-v6-controller")))
    else:
        check(f"{name}: the image starts from a public slurm-gcp image family ({family})",
              family.startswith("slurm-gcp-") and variables.get("slurm_image_project") == "schedmd-slurm-public")
    with open(path) as f:
        text = f.read()
    check(f"{name}: no copyright header or copied-text marker", not re.search(r"(?i)copyright|verbatim", text))

    # The image step, run for real into a temporary root, against install-node.sh run directly.
    image_runners = [r for m in all_modules for r in m.get("settings", {}).get("runners", []) or []
                     if 'ghpc_stage("files/install-gpudirect-slurm.sh")' in str(r.get("source", ""))]
    check(f"{name}: one image runner installs gpudirect-slurm", len(image_runners) == 1)
    if len(image_runners) != 1:
        return
    args = shlex.split(substitute(image_runners[0].get("args", ""), variables))
    node_args = args[args.index("--") + 1:] if "--" in args else []
    with tempfile.TemporaryDirectory() as image_root, tempfile.TemporaryDirectory() as script_root:
        image = subprocess.run([os.path.join(BLUEPRINTS, "files/install-gpudirect-slurm.sh"), "--source", SRC,
                                "--build-dir", BUILD, "--no-deps", "--no-build", "--", *node_args,
                                "--destdir", image_root], capture_output=True, text=True)
        direct = subprocess.run([os.path.join(SRC, "scripts/install-node.sh"), "--build-dir", BUILD, *node_args,
                                 "--destdir", script_root], capture_output=True, text=True)
        check(f"{name}: the image step runs (into a temporary root)", image.returncode == 0, image.stdout + image.stderr)
        check(f"{name}: install-node.sh with the same arguments runs", direct.returncode == 0, direct.stdout + direct.stderr)
        image_tree, script_tree = tree(image_root), tree(script_root)
        check(f"{name}: the image step installs exactly what install-node.sh installs ({len(image_tree)} entries)",
              image_tree == script_tree and image_tree,
              sorted(set(image_tree.items()) ^ set(script_tree.items())))
        conf = os.path.join(image_root, "etc/slurm/plugstack.conf.d/gpudirect.conf")
        line = open(conf).read() if os.path.exists(conf) else ""
        if gib:
            check(f"{name}: the image's plugstack line has default=off, the gIB lib dir and no rxdm_ready=",
                  "default=off" in line and "lib_dir=/usr/local/gib/lib64" in line and "rxdm_ready" not in line, line)
        else:
            check(f"{name}: ... including the gpudirect-rxdm the prolog/epilog run",
                  rxdm.lstrip("/") in image_tree)
            check(f"{name}: the image's plugstack line has rxdm_ready={variables.get('gpudirect_rxdm_ready')} (what gpudirect-rxdm creates)",
                  f"rxdm_ready={variables.get('gpudirect_rxdm_ready')} " in line + " " and "default=off" in line, line)

    # The partition's boot-time line: the same install, another default.
    check(f"{name}: the partition's nodes get the plugstack line at boot", len(partition) == 1)
    if partition:
        words = partition_words
        strip = lambda a: [w for i, w in enumerate(a) if w != "--default" and (i == 0 or a[i - 1] != "--default")]
        check(f"{name}: ... with the image's arguments but its own default ({default})",
              strip(words[2:]) == strip(node_args) and "--default" in words, (words, node_args))


def text_of(node):
    return "\n".join(strings(node))


def check_imex_controller(name, blueprint, settings, prolog, epilog, variables):
    """A4X: IMEX for every job, from Slurm (the channel) and slurm-gcp's prolog/epilog (the service)."""
    imex_dir = "/usr/libexec/gpudirect-slurm/imex"
    prep = open(os.path.join(BLUEPRINTS, "files", "a4x-imex-node-prep.sh")).read()
    prep_dir = re.search(r"^IMEX_DIR=\$\{IMEX_DIR:-(\S+)\}", prep, re.M)
    check(f"{name}: the controller's prolog and epilog run the IMEX scripts where a4x-imex-node-prep.sh installs them",
          f"exec {imex_dir}/imex_prolog" in prolog and f"exec {imex_dir}/imex_epilog" in epilog
          and prep_dir is not None and prep_dir.group(1) == imex_dir and "rxdm" not in text_of(blueprint), (prolog, epilog))
    cloud = settings.get("cloud_parameters", {}) or {}
    check(f"{name}: SwitchType=switch/nvidia_imex (a channel per job) and PrologFlags with Alloc (the prolog on every node)",
          cloud.get("switch_type") == "switch/nvidia_imex" and "Alloc" in str(cloud.get("prolog_flags", "")).split(","), cloud)
    runners = [r for g in blueprint["deployment_groups"] for m in g["modules"] for r in m.get("settings", {}).get("runners", []) or []]
    imex_prep = [r for r in runners if 'ghpc_stage("files/a4x-imex-node-prep.sh")' in str(r.get("source", ""))]
    check(f"{name}: the image installs the IMEX prolog/epilog at the held slurm-gcp release",
          len(imex_prep) == 1 and substitute(str(imex_prep[0].get("args", "")), variables).split() == ["install", str(variables.get("slurm_gcp_ref"))],
          imex_prep)


def check_gib_blueprint(name, blueprint, all_modules, variables):
    """A3 Ultra / A4 / A4X: what gIB needs from the deployment, and what the plugin replaces."""
    text = text_of(blueprint)
    check(f"{name}: no /etc/profile.d hook (the plugin gives gIB's environment per job)", "profile.d" not in text)
    runners = [r for m in all_modules for r in m.get("settings", {}).get("runners", []) or []]
    prep = [r for r in runners if 'ghpc_stage("files/gib-node-prep.sh")' in str(r.get("source", ""))]
    version = str(variables.get("nccl_gib_version", ""))
    check(f"{name}: the image installs nccl-gib at the held version nccl_gib_version ({version})",
          len(prep) == 1 and substitute(str(prep[0].get("args", "")), variables).split() == ["install", version]
          and re.fullmatch(r"v\d+\.\d+\.\d+", version), prep)
    nodesets = [m for m in all_modules if module_path(m["source"]).endswith("schedmd-slurm-gcp-v6-nodeset")
                and str(m.get("settings", {}).get("machine_type", "")) in ("a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g")]
    check(f"{name}: one A3 Ultra, A4 or A4X nodeset", len(nodesets) == 1)
    if len(nodesets) != 1:
        return
    nodeset = nodesets[0]["settings"]
    a4x = nodeset.get("machine_type") == "a4x-highgpu-4g"
    gpu_nics = 4 if a4x else 8
    rdma = [m for m in all_modules if module_path(m["source"]) == "modules/network/gpu-rdma-vpc"]
    rdma_settings = rdma[0].get("settings", {}) if rdma else {}
    check(f"{name}: one RoCE network of {gpu_nics} subnets (one per GPU NIC) with the zone's vpc-roce profile",
          len(rdma) == 1 and rdma_settings.get("subnetworks_template", {}).get("count") == gpu_nics
          and str(rdma_settings.get("network_profile", "")).endswith("$(vars.zone)-vpc-roce"))
    networks = str(nodeset.get("additional_networks", ""))
    check(f"{name}: the GPU nodes get the second gVNIC and the RoCE NICs",
          bool(rdma) and f"{rdma[0]['id']}.subnetwork_interfaces" in networks and 'nic_type="GVNIC"' in networks, networks)
    conf = nodeset.get("node_conf", {})
    if a4x:
        check(f"{name}: node_conf: 2 Grace sockets x 70 cores x 1 thread (140 vCPUs)",
              (conf.get("SocketsPerBoard"), conf.get("CoresPerSocket"), conf.get("ThreadsPerCore")) == (2, 70, 1), conf)
        # slurm-gcp writes topology/block (18-VM blocks) for a nodeset with accelerator_topology 1x72
        # and a reservation, on Slurm >= 25.05.
        check(f"{name}: the nodeset has accelerator_topology 1x72 and a reservation (slurm-gcp's 18-VM blocks)",
              nodeset.get("accelerator_topology") == "1x72" and "$(vars." in str(nodeset.get("reservation_name", "")), nodeset)
    else:
        check(f"{name}: node_conf: 2 sockets x 56 cores x 2 threads (224 vCPUs)",
              (conf.get("SocketsPerBoard"), conf.get("CoresPerSocket"), conf.get("ThreadsPerCore")) == (2, 56, 2), conf)


def run(cmd, env_extra, timeout=30):
    env = dict(os.environ, **env_extra)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def check_node_prep():
    files = os.path.join(BLUEPRINTS, "files")
    for script in sorted(f for f in os.listdir(files) if f.endswith(".sh")):
        out = subprocess.run(["bash", "-n", os.path.join(files, script)], capture_output=True, text=True)
        check(f"files/{script}: bash -n", out.returncode == 0, out.stderr)
        text = open(os.path.join(files, script)).read()
        check(f"files/{script}: no copyright header", "copyright" not in text.lower())

    prep = os.path.join(files, "a3mega-tcpxo-node-prep.sh")
    with tempfile.TemporaryDirectory() as root:
        pci, aperture = os.path.join(root, "pci"), os.path.join(root, "aperture_devices")
        dev = os.path.join(pci, "0000:00:04.0")
        os.makedirs(dev)
        os.makedirs(aperture)
        for field, value in (("vendor", "0x8086"), ("device", "0x1234")):
            open(os.path.join(dev, field), "w").write(value + "\n")
        env = {"PCI_ROOT": pci, "APERTURE_DIR": aperture, "WAIT_SECONDS": "2"}
        out = run([prep, "wait"], env)
        check("a3mega-tcpxo-node-prep.sh wait: no PCI 1ae0:0084 device (controller, login): slurmd starts at once",
              out.returncode == 0, out.stderr)
        for field, value in (("vendor", "0x1ae0"), ("device", "0x0084")):
            open(os.path.join(dev, field), "w").write(value + "\n")
        out = run([prep, "wait"], env)
        check("a3mega-tcpxo-node-prep.sh wait: aperture device but empty /dev/aperture_devices: fails, saying so",
              out.returncode == 1 and "still empty" in out.stderr, out.stderr)
        os.makedirs(os.path.join(aperture, "0000:00:04.0"))
        out = run([prep, "wait"], env)
        check("a3mega-tcpxo-node-prep.sh wait: populated /dev/aperture_devices: slurmd starts", out.returncode == 0, out.stderr)

    rxdm = open(os.path.join(SRC, "scripts/rxdm/gpudirect-rxdm")).read()
    rxdm_topology = re.search(r"^RXDM_TCPX_TOPOLOGY=(\S+)", rxdm, re.M)
    prep = os.path.join(files, "a3high-tcpx-node-prep.sh")
    prep_topology = re.search(r"^TOPOLOGY=\$\{TOPOLOGY:-(\S+)\}", open(prep).read(), re.M)
    check("a3high-tcpx-node-prep.sh writes the topology where gpudirect-rxdm reads it",
          rxdm_topology and prep_topology and rxdm_topology.group(1) == prep_topology.group(1),
          (rxdm_topology and rxdm_topology.group(1), prep_topology and prep_topology.group(1)))
    with tempfile.TemporaryDirectory() as root:
        topology = os.path.join(root, "gpu_rxq_configuration.textproto")
        out = run([prep, "--topology-only"], {"TOPOLOGY": topology})
        text = open(topology).read() if os.path.exists(topology) else ""
        gpus = re.findall(r'gpu_pci_addr: "([0-9a-f:.]+)"', text)
        nics = re.findall(r'ifname: "(\w+)"', text)
        queues = re.findall(r"queue_ids: (\d+)", text)
        check("a3high-tcpx-node-prep.sh --topology-only: 4 NICs, 8 distinct GPUs, queues 8-15 per NIC, balanced braces",
              out.returncode == 0 and len(nics) == 4 and len(set(gpus)) == 8 and len(queues) == 32
              and sorted(set(map(int, queues))) == list(range(8, 16)) and text.count("{") == text.count("}"),
              out.stderr + text)


def check_gib_prep():
    prep = os.path.join(BLUEPRINTS, "files", "gib-node-prep.sh")
    with tempfile.TemporaryDirectory() as root:
        gib, hook = os.path.join(root, "gib"), os.path.join(root, "nccl-gib.sh")
        env = {"GIB_ROOT": gib, "PROFILE_HOOK": hook}
        out = run([prep, "check"], env)
        check("gib-node-prep.sh check: no gIB plugin: fails, naming the file",
              out.returncode == 1 and f"{gib}/lib64/libnccl-net.so is missing" in out.stderr, out.stderr)
        os.makedirs(os.path.join(gib, "lib64"))
        open(os.path.join(gib, "lib64", "libnccl-net.so"), "w").close()
        out = run([prep, "check"], env)
        check("gib-node-prep.sh check: plugin present: passes, quietly", out.returncode == 0 and not out.stderr, out.stderr)
        open(hook, "w").close()
        out = run([prep, "check"], env)
        check("gib-node-prep.sh check: a profile.d hook: a warning naming it",
              out.returncode == 0 and f"warning: {hook} exists" in out.stderr, out.stderr)


def check_imex_prep():
    prep = os.path.join(BLUEPRINTS, "files", "a4x-imex-node-prep.sh")
    with tempfile.TemporaryDirectory() as root:
        imex = os.path.join(root, "imex")
        env = {"IMEX_DIR": imex}
        out = run([prep, "check"], env)
        check("a4x-imex-node-prep.sh check: no IMEX prolog: fails, naming the file",
              out.returncode == 1 and f"{imex}/imex_prolog is missing" in out.stderr, out.stderr)
        os.makedirs(imex)
        for script in ("imex_prolog", "imex_epilog"):
            with open(os.path.join(imex, script), "w") as f:
                f.write("#!/bin/bash\n")
            os.chmod(os.path.join(imex, script), 0o755)
        out = run([prep, "check"], env)
        check("a4x-imex-node-prep.sh check: prolog and epilog present: passes", out.returncode == 0 and not out.stderr, out.stderr)
        os.chmod(os.path.join(imex, "imex_epilog"), 0o644)
        out = run([prep, "check"], env)
        check("a4x-imex-node-prep.sh check: an epilog that cannot run: fails, naming it",
              out.returncode == 1 and "imex_epilog is missing or not executable" in out.stderr, out.stderr)


def main():
    modules, embedded = toolkit_lists()
    found = sorted(f for f in os.listdir(BLUEPRINTS) if f.endswith("-blueprint.yaml"))
    wanted = ["a3mega", "a3high", "a3ultra", "a4high", "a4x"]
    check("blueprints/: A3 Mega, A3 High, A3 Ultra, A4 and A4X blueprints",
          all(f"{w}-slurm-blueprint.yaml" in found for w in wanted), found)
    for f in found:
        check_blueprint(os.path.join(BLUEPRINTS, f), modules, embedded)
    check_node_prep()
    check_gib_prep()
    check_imex_prep()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
