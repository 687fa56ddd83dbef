#include <catch2/catch.hpp>

#include "check_node/dcgm_diag.hpp"
#include "check_node/gres_gpus.hpp"
#include "check_node/kernel_xids.hpp"
#include "check_node/stack_check.hpp"
#include "check_node/transport_leaks.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gpudirect::launcher::check_node;
namespace fs = std::filesystem;

TEST_CASE("another transport's variables are leaks, the node's own are not", "[check_node]") {
  const std::vector<EnvSource> sources{
      {"the environment", {{"NCCL_NET", "gIB"}, {"NCCL_SOCKET_IFNAME", "enp0s12"}, {"NCCL_FASTRAK_IFNAME", "enp6s0"}}},
      {"/etc/profile.d/nccl-gib.sh", {{"LD_LIBRARY_PATH", "/usr/local/gib/lib64:/usr/lib"}}}};
  const auto on_tcpxo = judge_leaks(sources, "tcpxo");
  REQUIRE(on_tcpxo.size() == 2);
  CHECK(on_tcpxo[0].subject == "NCCL_NET in the environment");
  CHECK(on_tcpxo[0].measured == "'gIB' (a gib setting)");
  CHECK(on_tcpxo[0].expected == "unset on a tcpxo node");
  CHECK(on_tcpxo[1].subject == "LD_LIBRARY_PATH in /etc/profile.d/nccl-gib.sh");
  const auto on_gib = judge_leaks(sources, "gib");
  REQUIRE(on_gib.size() == 1);
  CHECK(on_gib[0].subject == "NCCL_FASTRAK_IFNAME in the environment");
  CHECK(transport_of("NCCL_NET", "GPUDirectTCPX_v7") == "tcpx");
  CHECK(transport_of("NCCL_GPUDIRECTTCPX_CTRL_DEV", "enp0s12") == "tcpx");
  CHECK(transport_of("NCCL_NET", "IB") == "");
  CHECK(transport_of("LD_LIBRARY_PATH", "/var/lib/tcpxo/lib64") == "tcpxo");
}

TEST_CASE("profile.d lines give their assignments", "[check_node]") {
  const auto vars = shell_assignments("# set NCCL_NET=x\nexport NCCL_NET=gIB\nFOO=\"a b\"\nif [ -x y ]; then\n  export BAR='c'\nfi\n");
  CHECK(vars == std::map<std::string, std::string>{{"BAR", "c"}, {"FOO", "a b"}, {"NCCL_NET", "gIB"}});
}

TEST_CASE("hardware XIDs in the kernel log are findings, a program's XIDs are not", "[check_node]") {
  const std::string log =
      "6,1234,5678,-;NVRM: Xid (PCI:0000:04:00): 79, pid=1234, GPU has fallen off the bus.\n"
      "[  10.0] NVRM: Xid (PCI:0000:05:00): 13, pid=99, Graphics Exception\n"
      "NVRM: Xid (PCI:0000:04:00): 79, pid=1235, GPU has fallen off the bus.\n"
      "NVRM: Xid (PCI:0000:06:00): 94, pid=1, Contained ECC error\n"
      "nothing here\n";
  const auto events = parse_xids(log);
  REQUIRE(events.size() == 4);
  CHECK(events[1].code == 13);
  const auto findings = judge_xids(events);
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].subject == "GPU at PCI 0000:04:00");
  CHECK(findings[0].what == "XID 79 in the kernel log");
  CHECK(findings[0].measured == "2x");
  CHECK(findings[1].what == "XID 94 in the kernel log");
  CHECK(findings[0].fault == Fault::gpu_hardware);
  CHECK_FALSE(hardware_xid(13));
}

TEST_CASE("the kernel log is read from a file, and an unreadable one says why", "[check_node]") {
  const fs::path path = fs::temp_directory_path() / ("gpudirect-kmsg-" + std::to_string(::getpid()));
  std::ofstream(path) << "NVRM: Xid (PCI:0000:04:00): 48, DBE\n";
  std::string error;
  CHECK(parse_xids(read_kernel_log(path.string(), error)).size() == 1);
  CHECK(error.empty());
  fs::remove(path);
  CHECK(read_kernel_log(path.string(), error).empty());
  CHECK_THAT(error, Catch::Contains("No such file"));
}

TEST_CASE("Slurm's gres gives the node's GPU count", "[check_node]") {
  CHECK(gres_gpu_count("NodeName=node1 Arch=x86_64 Gres=gpu:8 GresUsed=gpu:0 NodeAddr=x") == 8);
  CHECK(gres_gpu_count("NodeName=a Gres=gpu:h100:8(S:0-1) GresDrain=N/A") == 8);
  CHECK(gres_gpu_count("NodeName=a Gres=gpu:a:4,gpu:b:4,nic:2 x") == 8);
  CHECK_FALSE(gres_gpu_count("NodeName=a Gres=(null) GresUsed=gpu:2").has_value());
  CHECK_FALSE(gres_gpu_count("NodeName=a").has_value());
}

TEST_CASE("NCCL version codes as text", "[check_node]") {
  CHECK(nccl_version_text(22304) == "2.23.4");
  CHECK(nccl_version_text(22807) == "2.28.7");
  CHECK(nccl_version_text(2708) == "2.7.8");
}

TEST_CASE("an aperture directory missing or empty is named, a populated one passes", "[check_node]") {
  const fs::path dir = fs::temp_directory_path() / ("gpudirect-aperture-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CHECK(judge_aperture_devices(dir.string())->measured == "missing");
  fs::create_directories(dir);
  CHECK(judge_aperture_devices(dir.string())->measured == "empty");
  std::ofstream(dir / "aperture0") << "";
  CHECK_FALSE(judge_aperture_devices(dir.string()).has_value());
  fs::remove_all(dir);
}

TEST_CASE("the mode's lib dir: missing, without the plugin, with a plugin that does not load, and one that loads", "[check_node]") {
  Expectations tcpxo;
  tcpxo.mode = "tcpxo";
  gpudirect::PluginConfig config;
  const auto checks_of = [&](const std::string& lib_dir, bool rxdm = false) {
    config.lib_dir = lib_dir;
    std::vector<Finding> out;
    const StackFacts facts = check_stack(tcpxo, config, rxdm, out);
    std::vector<std::string> failing;
    for (const Finding& f : out)
      if (f.severity == Severity::fail) failing.push_back(f.check + " " + f.measured);
    return std::make_pair(failing, facts);
  };
  const std::string standins = GPUDIRECT_NET_PLUGIN_STANDINS;
  CHECK(checks_of("/nonexistent/lib64").first == std::vector<std::string>{"lib_dir missing"});
  CHECK(checks_of(standins).first == std::vector<std::string>{"net_plugin missing"});
  const auto broken = checks_of(standins + "/broken").first;
  REQUIRE(broken.size() == 1);
  CHECK_THAT(broken[0], Catch::Contains("undefined symbol"));
  const auto [loads, facts] = checks_of(standins + "/loads");
  CHECK(loads.empty());
  CHECK(facts.net_plugin == standins + "/loads/libnccl-net.so");
  // RxDM, in a prolog: its ready file must exist.
  const fs::path ready = fs::temp_directory_path() / ("gpudirect-rxdm-ready-" + std::to_string(::getpid()));
  fs::remove(ready);
  config.rxdm_ready = ready.string();
  const auto not_ready = checks_of(standins + "/loads", true).first;
  REQUIRE(not_ready.size() == 1);
  CHECK_THAT(not_ready[0], Catch::StartsWith("rxdm " + ready.string() + " does not exist"));
  std::ofstream(ready) << "";
  CHECK(checks_of(standins + "/loads", true).first.empty());
  fs::remove(ready);
}

TEST_CASE("NCCL's version from the library --nccl-library names, and a warning naming it when it does not answer", "[check_node]") {
  Expectations tcpxo;
  tcpxo.mode = "tcpxo";
  gpudirect::PluginConfig config;
  config.lib_dir = std::string(GPUDIRECT_NET_PLUGIN_STANDINS) + "/loads";
  std::vector<Finding> out;
  const std::string standin = GPUDIRECT_NCCL_STANDIN;
  const StackFacts facts = check_stack(tcpxo, config, false, out, standin);
  CHECK(facts.nccl_version == "2.23.4");
  CHECK(facts.nccl_library == standin);
  CHECK(out.empty());
  // A library without ncclGetVersion (the net plugin stand-in), and one that is not there: a warning
  // naming the path given, never the loader's NCCL in its place.
  for (const std::string& wrong : {config.lib_dir + "/libnccl-net.so", std::string("/nonexistent/libnccl.so.2")}) {
    out.clear();
    const StackFacts none = check_stack(tcpxo, config, false, out, wrong);
    CHECK(none.nccl_version.empty());
    REQUIRE(out.size() == 1);
    CHECK(out[0].severity == Severity::warn);
    CHECK(out[0].what == wrong);
    CHECK_THAT(out[0].fix, Catch::Contains("--nccl-library"));
  }
}

TEST_CASE("dcgmi diag: each failing test from its JSON, its exit code otherwise, a missing dcgmi a warning", "[check_node]") {
  const std::string json = R"(Some banner
{"DCGM Diagnostic": {"test_categories": [
  {"category": "Deployment", "tests": [{"name": "Persistence Mode", "results": [{"status": "Fail", "warnings": ["persistence mode off"]}]}]},
  {"category": "Integration", "tests": [{"name": "PCIe", "results": [{"status": "Pass", "gpu_id": "0"}, {"status": "Fail", "gpu_id": "3",
    "warnings": [{"warning": "PCIe replay rate too high"}]}]}]},
  {"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [{"status": "Skip"}]}]}]}})";
  const auto findings = judge_dcgm_diag(226, json);
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].fault == Fault::configuration);
  CHECK(findings[0].what == "Deployment test 'Persistence Mode' failed");
  CHECK(findings[0].measured == "(persistence mode off)");
  CHECK(findings[1].fault == Fault::gpu_hardware);
  CHECK(findings[1].what == "Integration test 'PCIe' failed on GPU 3");
  CHECK(findings[1].measured == "(PCIe replay rate too high)");
  CHECK(judge_dcgm_diag(0, R"({"DCGM Diagnostic": {"test_categories": []}})").empty());
  const auto no_json = judge_dcgm_diag(1, "Error: unable to connect to host engine");
  REQUIRE(no_json.size() == 1);
  CHECK(no_json[0].measured == "1");
  const auto missing = judge_dcgm_diag(127, "gpudirect-launch: cannot run dcgmi: No such file or directory");
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].severity == Severity::warn);
}
