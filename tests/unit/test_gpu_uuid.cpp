// GPU-/MIG- UUIDs to the parent GPU's index: through the real dlopen path against a stand-in
// libnvidia-ml (tests/nvml_standin), and through plan_task with an injected resolver.
#include <catch2/catch.hpp>

#include "fixture_path.hpp"
#include "gpudirect/gpu_uuid.hpp"
#include "gpudirect/task_setup.hpp"
#include "gpudirect/topology_sources.hpp"

#include <map>

using namespace gpudirect;

namespace {

std::string fixture(const std::string& name) { return gpudirect::testing::fixture_path(name); }

const std::string kGpu0 = "GPU-11111111-2222-3333-4444-555555555555";  // 0000:04:00.0 in the stand-in
const std::string kGpu1 = "GPU-66666666-7777-8888-9999-000000000000";  // 0000:05:00.0
const std::string kMigA = "MIG-aaaaaaaa-0000-0000-0000-000000000001";  // slices of GPU 0000:04:00.0
const std::string kMigB = "MIG-aaaaaaaa-0000-0000-0000-000000000002";

class TableResolver final : public GpuUuidResolver {
 public:
  std::map<std::string, std::string> table;
  int calls = 0;
  PciAddress parent_bus_id(const std::string& uuid) override {
    ++calls;
    const auto it = table.find(uuid);
    if (it == table.end()) throw GpuUuidError("unknown " + uuid);
    return PciAddress::parse(it->second);
  }
};

}  // namespace

TEST_CASE("NVML through dlopen: GPU UUIDs to bus ids, MIG slices to their parent's", "[gpu_uuid]") {
  const auto nvml = make_nvml_resolver(GPUDIRECT_NVML_STANDIN);
  CHECK(nvml->parent_bus_id(kGpu1).to_string() == "0000:05:00.0");
  CHECK(nvml->parent_bus_id(kMigA).to_string() == "0000:04:00.0");
  CHECK(nvml->parent_bus_id(kMigB).to_string() == "0000:04:00.0");
  CHECK_THROWS_WITH(nvml->parent_bus_id("GPU-00000000-dead-beef-0000-000000000000"),
                    Catch::Contains("Not Found") && Catch::Contains("nvidia-smi -L"));

  const Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));                        // GPUs 0 and 1 at 04:00.0, 05:00.0
  CHECK(gpu_uuids_to_indices(kMigA + "," + kMigB, "CUDA_VISIBLE_DEVICES", t, *nvml) == "0");  // two slices, one GPU
  CHECK(gpu_uuids_to_indices(kGpu1 + "," + kMigA, "CUDA_VISIBLE_DEVICES", t, *nvml) == "1,0");
  CHECK(gpu_uuids_to_indices("MIG-" + kGpu1 + "/1/0", "CUDA_VISIBLE_DEVICES", t, *nvml) == "1");  // pre-R470 form
  CHECK(gpu_uuids_to_indices("2,3", "CUDA_VISIBLE_DEVICES", t, *nvml) == "2,3");
}

TEST_CASE("without NVML a UUID is an error that names the library and the fix", "[gpu_uuid]") {
  const auto missing = make_nvml_resolver("libnvidia-ml-not-here.so.1");
  const Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  CHECK(gpu_uuids_to_indices("0,1", "CUDA_VISIBLE_DEVICES", t, *missing) == "0,1");  // no UUID: NVML not needed
  CHECK_THROWS_WITH(gpu_uuids_to_indices(kGpu0, "CUDA_VISIBLE_DEVICES", t, *missing),
                    Catch::Contains("CUDA_VISIBLE_DEVICES=" + kGpu0) && Catch::Contains("libnvidia-ml-not-here.so.1") &&
                        Catch::Contains("install the NVIDIA driver's NVML library") &&
                        Catch::Contains("set CUDA_VISIBLE_DEVICES by index"));
}

TEST_CASE("a UUID whose GPU the topology does not list says so", "[gpu_uuid]") {
  TableResolver resolver;
  resolver.table[kGpu0] = "0000:99:00.0";
  const Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  CHECK_THROWS_WITH(gpu_uuids_to_indices(kGpu0, "SLURM_STEP_GPUS", t, resolver),
                    Catch::Contains("SLURM_STEP_GPUS") && Catch::Contains("0000:99:00.0") && Catch::Contains("does not list"));
}

TEST_CASE("plan_task: MIG slices get their parent GPU's NIC and CPUs, two slices of one GPU share them", "[gpu_uuid]") {
  const Topology t = load_topology_file(fixture("a3-megagpu-8g.xml"));
  const NodePlan plan = plan_node(t);
  TableResolver resolver;
  resolver.table[kMigA] = "0000:8b:00.0";  // GPU 6
  resolver.table[kMigB] = "0000:8b:00.0";
  resolver.table[kGpu1] = "0000:05:00.0";  // GPU 1
  TaskSetupInput in;
  in.config.profile_dir = GPUDIRECT_PROFILE_DIR;
  in.request.mode = Mode::tcpxo;
  in.facts.tcpxo_plugin = true;
  in.uuid_resolver = &resolver;
  // Slurm with MIG: SLURM_STEP_GPUS counts slices (here 13), CUDA_VISIBLE_DEVICES holds the UniqueId.
  in.env = {{"SLURM_LOCALID", "0"}, {"SLURM_LOCAL_TASKS", "2"}, {"SLURM_STEP_GPUS", "13"}, {"CUDA_VISIBLE_DEVICES", kMigA}};
  const TaskSetup a = plan_task(t, plan, in);
  in.env["SLURM_LOCALID"] = "1";
  in.env["CUDA_VISIBLE_DEVICES"] = kMigB;
  const TaskSetup b = plan_task(t, plan, in);
  CHECK(a.binding.gpus == std::vector<int>{6});
  CHECK(b.binding.gpus == a.binding.gpus);
  CHECK(b.binding.nics == a.binding.nics);
  CHECK(apply_env(a.env, {}).at("GPUDIRECT_NICS") == "enp141s0");
  CHECK(a.binding.cpus.to_list() == "52-103,156-207");

  in.env["CUDA_VISIBLE_DEVICES"] = kGpu1 + "," + kMigA;
  in.env["SLURM_LOCAL_TASKS"] = "1";
  in.env["SLURM_LOCALID"] = "0";
  CHECK(plan_task(t, plan, in).binding.gpus == std::vector<int>{1, 6});

  in.env["CUDA_VISIBLE_DEVICES"] = "MIG-unknown";
  CHECK_THROWS_WITH(plan_task(t, plan, in), Catch::Contains("CUDA_VISIBLE_DEVICES=MIG-unknown"));

  const int calls = resolver.calls;
  in.env["CUDA_VISIBLE_DEVICES"] = "3";
  in.env["SLURM_STEP_GPUS"] = "3";
  CHECK(plan_task(t, plan, in).binding.gpus == std::vector<int>{3});
  CHECK(resolver.calls == calls);  // indices never touch NVML
}
