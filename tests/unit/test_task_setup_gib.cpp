// --gpu-direct=gib on Google A3 Ultra (H200) and A4 (B200): the whole environment of a task,
// variable by variable, from both forms of each fixture (tests/fixtures/make_fixtures.py).
#include <catch2/catch.hpp>

#include "gpudirect/gib_machine.hpp"
#include "gpudirect/network_profile.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"
#include "planned_fixture.hpp"

#include <map>
#include <string>

using namespace gpudirect;

namespace {

using Node = testing::PlannedNode;

TaskSetupInput task(std::optional<Mode> mode, int gpu) {
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = mode;
  in.hostname = "a3u-7";
  in.facts.gib_plugin = true;
  const std::string g = std::to_string(gpu);
  in.env = {{"SLURM_LOCALID", g},        {"SLURM_PROCID", g},         {"SLURM_LOCAL_TASKS", "8"}, {"SLURM_STEP_GPUS", g},
            {"CUDA_VISIBLE_DEVICES", g}, {"SLURM_GPUS_ON_NODE", "8"}, {"SLURM_JOB_ID", "77"}};
  in.allowed_cpus = CpuSet::range(0, 223);
  return in;
}

// Everything a gib task's environment holds when it started with only LD_LIBRARY_PATH=/usr/lib.
std::map<std::string, std::string> expected(const std::string& hca, const std::string& machine, int gpu, const std::string& cpus) {
  return {{"LD_LIBRARY_PATH", "/usr/local/gib/lib64:/usr/lib"},
          {"NCCL_NET", "gIB"},
          {"NCCL_IB_HCA", "=" + hca},
          {"NCCL_SOCKET_IFNAME", "enp0s19,enp192s20"},
          {"NCCL_CROSS_NIC", "0"},
          {"NCCL_NET_GDR_LEVEL", "PIX"},
          {"NCCL_P2P_NET_CHUNKSIZE", "131072"},
          {"NCCL_NVLS_CHUNKSIZE", "524288"},
          {"NCCL_IB_ADAPTIVE_ROUTING", "1"},
          {"NCCL_IB_QPS_PER_CONNECTION", "4"},
          {"NCCL_IB_TC", "52"},
          {"NCCL_IB_FIFO_TC", "84"},
          {"NCCL_TUNER_CONFIG_PATH", "/usr/local/gib/configs/tuner_config_" + machine + ".txtpb"},
          {"GPUDIRECT_GIB_MACHINE", machine},
          {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
          {"GPUDIRECT_MODE", "gib"},
          {"GPUDIRECT_GPUS", std::to_string(gpu)},
          {"GPUDIRECT_NICS", hca},
          {"GPUDIRECT_CPUS", cpus}};
}

void check_env(const std::map<std::string, std::string>& got, const std::map<std::string, std::string>& want) {
  for (const auto& [name, value] : want) {
    INFO(name);
    REQUIRE(got.count(name));
    CHECK(got.at(name) == value);
  }
  for (const auto& [name, value] : got) {
    INFO("unexpected " << name << "=" << value);
    CHECK(want.count(name));
  }
}

}  // namespace

TEST_CASE("gib on A3 Ultra and A4: GPU 0 and GPU 5 get their own RoCE NIC, both gVNICs, the machine's tuner", "[task_setup][gib]") {
  struct Case {
    const char* machine_type;
    const char* tuner;
  };
  for (const Case& c : {Case{"a3-ultragpu-8g", "a3u"}, Case{"a4-highgpu-8g", "a4"}})
    for (const char* form : {".xml", ".nccl.xml"}) {
      const std::string file = std::string(c.machine_type) + form;
      INFO(file);
      const Node node(file);
      CHECK(gib_machine(node.topology).name == c.tuner);

      const TaskSetup first = plan_task(node.topology, node.plan, task(Mode::gib, 0));
      CHECK(first.mode == Mode::gib);
      CHECK(first.set_affinity);
      check_env(apply_env(first.env, {{"LD_LIBRARY_PATH", "/usr/lib"}}), expected("rocep145s0", c.tuner, 0, "0-55,112-167"));

      // GPU 5 (0000:c5:00.0) shares its switch with rocep198s0 and rocep199s0; the second GPU there
      // gets the second NIC, on NUMA node 1.
      const TaskSetup fifth = plan_task(node.topology, node.plan, task(Mode::gib, 5));
      check_env(apply_env(fifth.env, {{"LD_LIBRARY_PATH", "/usr/lib"}}), expected("rocep199s0", c.tuner, 5, "56-111,168-223"));
      CHECK_THAT(fifth.summary, Catch::Contains("a3u-7 task 5 (local 5): mode gib gpus 5 [0000:c5:00.0] nics rocep199s0"));
    }
}

TEST_CASE("gib: the user's own variables lose to the profile's, as in the other modes", "[task_setup][gib]") {
  const Node node("a3-ultragpu-8g.xml");
  const auto env = apply_env(plan_task(node.topology, node.plan, task(Mode::gib, 3)).env,
                             {{"NCCL_NET", "Socket"}, {"NCCL_IB_HCA", "mlx5_0"}, {"NCCL_DEBUG", "INFO"}});
  CHECK(env.at("NCCL_NET") == "gIB");
  CHECK(env.at("NCCL_IB_HCA") == "=rocep153s0");
  CHECK(env.at("NCCL_DEBUG") == "INFO");  // not the profile's business
}

TEST_CASE("the host NICs of a gIB machine are its two gVNICs, A3 Mega's is its control NIC only", "[binding][gib]") {
  const Node ultra("a3-ultragpu-8g.xml"), mega("a3-megagpu-8g.xml");
  std::vector<std::string> names;
  for (int n : ultra.plan.host_nics) names.push_back(ultra.topology.nics[static_cast<std::size_t>(n)].interface_name);
  CHECK(names == std::vector<std::string>{"enp0s19", "enp192s20"});
  REQUIRE(ultra.plan.control_nic);
  CHECK(ultra.topology.nics[static_cast<std::size_t>(*ultra.plan.control_nic)].interface_name == "enp0s19");
  CHECK(ultra.plan.data_nics.size() == 8);
  REQUIRE(mega.plan.host_nics.size() == 1);
  CHECK(mega.topology.nics[static_cast<std::size_t>(mega.plan.host_nics.front())].interface_name == "enp0s12");
}

TEST_CASE("auto picks gib where gIB is installed and the node has RDMA NICs, ahead of plain rdma", "[mode][gib]") {
  const Node ultra("a4-highgpu-8g.xml"), mega("a3-megagpu-8g.xml");
  const auto [mode, why] = detect_mode(ultra.topology, NodeFacts{false, false, true});
  CHECK(mode == Mode::gib);
  CHECK(why == "8 GPUs, gIB NCCL plugin present, RDMA NIC gpu0rdma0/rocep145s0");
  CHECK(detect_mode(ultra.topology, NodeFacts{false, false, false}).first == Mode::rdma);
  // One lib_dir= for both: the TCPXO plugin's directory makes every probe succeed on A3 Mega, which
  // has no RDMA NIC, so it stays tcpxo.
  CHECK(detect_mode(mega.topology, NodeFacts{true, false, true}).first == Mode::tcpxo);
  CHECK(detect_mode(mega.topology, NodeFacts{false, false, true}).first == Mode::off);

  auto in = task(Mode::auto_detect, 2);
  const TaskSetup setup = plan_task(ultra.topology, ultra.plan, in);
  CHECK(setup.mode == Mode::gib);
  CHECK_THAT(setup.summary, Catch::Contains("[auto: gib (8 GPUs, gIB NCCL plugin present"));
  CHECK(apply_env(setup.env, {}).at("NCCL_IB_HCA") == "=rocep152s0");
  CHECK_FALSE(resolve_mode(in.request, in.config, ultra.topology, in.facts).wait_for_rxdm);
}

TEST_CASE("gib on a machine whose GPUs name no tuner config: a clear error, or gib_machine=", "[task_setup][gib]") {
  // ND H100 v5-like: RoCE-capable HCAs next to each GPU, but H100s (10de:2330).
  const Node nd("nd-h100-v5-like.xml");
  CHECK(gib_machine(nd.topology).name.empty());
  auto in = task(Mode::gib, 2);
  in.hostname = "nd-3";
  CHECK_THROWS_WITH(plan_task(nd.topology, nd.plan, in),
                    Catch::Contains("on nd-3") && Catch::Contains("${GIB_MACHINE} is empty") &&
                        Catch::Contains("the GPUs are 10de:2330, neither H200 (10de:2335, A3 Ultra), B200 (10de:2901, A4) nor GB200") &&
                        Catch::Contains("gib_machine=a4"));
  in.config.gib_machine = "a4";
  const auto env = apply_env(plan_task(nd.topology, nd.plan, in).env, {});
  CHECK(env.at("NCCL_TUNER_CONFIG_PATH") == "/usr/local/gib/configs/tuner_config_a4.txtpb");
  CHECK(env.at("NCCL_IB_HCA") == "=mlx5_2");
  CHECK(env.at("NCCL_SOCKET_IFNAME") == "eth0");

  // The plugstack line wins over the GPUs.
  const Node ultra("a3-ultragpu-8g.xml");
  auto forced = task(Mode::gib, 0);
  forced.config.gib_machine = "a4";
  CHECK(apply_env(plan_task(ultra.topology, ultra.plan, forced).env, {}).at("NCCL_TUNER_CONFIG_PATH") ==
        "/usr/local/gib/configs/tuner_config_a4.txtpb");
}

TEST_CASE("gib's node-side failures name node, cause and fix", "[task_setup][gib]") {
  const Node ultra("a3-ultragpu-8g.xml"), mega("a3-megagpu-8g.xml");
  auto missing = task(Mode::gib, 0);
  missing.facts.gib_plugin = false;
  CHECK_THROWS_WITH(plan_task(ultra.topology, ultra.plan, missing), Catch::Contains("on a3u-7") &&
                                                                        Catch::Contains("no libnccl-net.so in /usr/local/gib/lib64") &&
                                                                        Catch::Contains("nccl-gib") && Catch::Contains("lib_dir="));
  auto elsewhere = task(Mode::gib, 0);
  elsewhere.facts.gib_plugin = false;
  elsewhere.config.lib_dir = "/opt/gib/lib64";
  CHECK_THROWS_WITH(plan_task(ultra.topology, ultra.plan, elsewhere), Catch::Contains("no libnccl-net.so in /opt/gib/lib64"));
  elsewhere.facts.gib_plugin = true;
  CHECK(apply_env(plan_task(ultra.topology, ultra.plan, elsewhere).env, {}).at("LD_LIBRARY_PATH") == "/opt/gib/lib64");
  // A3 Mega's NICs are gVNICs without RDMA.
  CHECK_THROWS_WITH(plan_task(mega.topology, mega.plan, task(Mode::gib, 0)),
                    Catch::Contains("--gpu-direct=gib needs the RoCE NICs") && Catch::Contains("ibv_devices"));
}

TEST_CASE("gib_machine from the GPUs' PCI device id", "[gib]") {
  Topology t;
  t.source = "test";
  CHECK(gib_machine(t).why == "the topology has no GPUs");
  Gpu h200;
  h200.device_id = 0x2335;
  Gpu b200;
  b200.device_id = 0x2901;
  t.gpus = {h200, h200};
  CHECK(gib_machine(t).name == "a3u");
  t.gpus = {b200};
  CHECK(gib_machine(t).name == "a4");
  t.gpus = {h200, b200};
  CHECK(gib_machine(t).name.empty());
  CHECK_THAT(gib_machine(t).why, Catch::Contains("more than one kind (10de:2335, 10de:2901)"));
  Gpu unknown;
  t.gpus = {unknown};
  CHECK_THAT(gib_machine(t).why, Catch::Contains("does not give the GPUs' PCI device id"));
  Gpu gb200;
  gb200.device_id = 0x2941;
  t.gpus = {gb200, gb200, gb200, gb200};
  CHECK(gib_machine(t).name == "a4x");
  Gpu amd;
  amd.vendor = GpuVendor::amd;
  amd.device_id = 0x2335;  // the same number from another vendor is no H200
  t.gpus = {amd};
  CHECK(gib_machine(t).name.empty());
}

TEST_CASE("gib on A4X (GB200): the public values only, no x86 image values or tuner config", "[task_setup][gib]") {
  // A4X's tuner config and NCCL_IB_* values are in no public source: the profile leaves them to gIB.
  CHECK(gib_image_machine({"a4x", ""}).empty());
  CHECK(gib_image_machine({"a4", ""}) == "a4");
  CHECK(gib_image_machine({"", "unknown GPUs"}).empty());
  const ProfileInputs node{{"LIB_DIR", "/usr/local/gib/lib64"}, {"HOST_NICS", "enp0s3,enp192s2"}, {"TASK_IB_HCAS", "mlx5_0"}};
  const NetworkProfile gib = load_profile("gib", {GPUDIRECT_PROFILE_DIR});
  ProfileInputs a4x = node;
  a4x["GIB_MACHINE"] = "a4x";
  a4x["GIB_IMAGE"] = gib_image_machine({"a4x", ""});
  const auto env = apply_env(render(gib, a4x), {});
  CHECK(env == std::map<std::string, std::string>{{"LD_LIBRARY_PATH", "/usr/local/gib/lib64"},
                                                  {"NCCL_NET", "gIB"},
                                                  {"NCCL_IB_HCA", "=mlx5_0"},
                                                  {"NCCL_SOCKET_IFNAME", "enp0s3,enp192s2"},
                                                  {"GPUDIRECT_GIB_MACHINE", "a4x"}});
  ProfileInputs a4 = node;
  a4["GIB_MACHINE"] = "a4";
  a4["GIB_IMAGE"] = "a4";
  CHECK(apply_env(render(gib, a4), {}).at("NCCL_IB_TC") == "52");
}

TEST_CASE("gib on the constructed A4X fixture: GPU 2 gets its own RoCE NIC, the second Grace, the host gVNICs", "[task_setup][gib]") {
  for (const char* file : {"a4x-highgpu-4g.xml", "a4x-highgpu-4g.nccl.xml"}) {
    INFO(file);
    const Node node(file);
    REQUIRE(node.topology.gpus.size() == 4);
    CHECK(gib_machine(node.topology).name == "a4x");
    TaskSetupInput in = task(Mode::gib, 2);
    in.hostname = "a4x-0";
    in.env["SLURM_LOCAL_TASKS"] = "4";
    in.env["SLURM_GPUS_ON_NODE"] = "4";
    in.allowed_cpus = CpuSet::range(0, 139);
    const TaskSetup setup = plan_task(node.topology, node.plan, in);
    const auto env = apply_env(setup.env, {{"LD_LIBRARY_PATH", "/usr/lib"}});
    CHECK(env == std::map<std::string, std::string>{{"LD_LIBRARY_PATH", "/usr/local/gib/lib64:/usr/lib"},
                                                    {"NCCL_NET", "gIB"},
                                                    {"NCCL_IB_HCA", "=rocep148s0"},
                                                    {"NCCL_SOCKET_IFNAME", "enp0s3,enp192s2"},
                                                    {"GPUDIRECT_GIB_MACHINE", "a4x"},
                                                    {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                    {"GPUDIRECT_MODE", "gib"},
                                                    {"GPUDIRECT_GPUS", "2"},
                                                    {"GPUDIRECT_NICS", "rocep148s0"},
                                                    {"GPUDIRECT_CPUS", "70-139"}});
  }
}
