// Values a user or a node hands the plugin that try to break out: newlines, '=', shell
// metacharacters, path traversal, NUL bytes, huge lengths. Each is refused with a short message
// that quotes at most a bounded prefix of the value, escaped to one line.
#include "gpudirect/gpu_selection.hpp"
#include "gpudirect/hostlist.hpp"
#include "gpudirect/mode.hpp"
#include "gpudirect/network_profile.hpp"
#include "gpudirect/plugin_config.hpp"
#include "gpudirect/slurm_tasks.hpp"
#include "gpudirect/text.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace gpudirect;

namespace {

const std::string kHuge(1 << 20, 'x');
const std::string kWithNul = std::string("tcpxo\0rdma", 10);

// The message of what `call` throws: one line, at most `limit` bytes.
template <typename Call>
std::string refusal(Call call, std::size_t limit = 512) {
  try {
    call();
  } catch (const std::exception& error) {
    const std::string message = error.what();
    INFO(message);
    CHECK(message.size() <= limit);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find('\0') == std::string::npos);
    return message;
  }
  FAIL("accepted a hostile value");
  return "";
}

}  // namespace

TEST_CASE("quote_bounded escapes control bytes and cuts long values", "[hostile]") {
  CHECK(quote_bounded("tcpxo") == "tcpxo");
  CHECK(quote_bounded("tcp\nx") == "tcp\\x0ax");
  CHECK(quote_bounded(kWithNul) == "tcpxo\\x00rdma");
  CHECK(quote_bounded(std::string(100, 'a'), 8) == "aaaaaaaa... (100 bytes)");
  CHECK(quote_bounded("\xff\\") == "\\xff\\x5c");
}

TEST_CASE("hostile --gpu-direct values are refused with a bounded message", "[hostile]") {
  for (const std::string& value : {std::string("tcpxo\nNCCL_NET=evil"), std::string("tcpxo=1"), std::string("tcpxo;rm -rf /"),
                                   std::string("$(reboot)"), std::string("`id`"), std::string("../../etc/passwd"), kWithNul, kHuge,
                                   std::string("tcpxo,") + kHuge, std::string("tcpxo,verbose,verbose")}) {
    const std::string message = refusal([&] { parse_mode_request(value); });
    CHECK(message.find("invalid --gpu-direct value") != std::string::npos);
  }
  CHECK(refusal([&] { parse_mode_request("tcp\nxo"); }).find("tcp\\x0axo") != std::string::npos);
}

TEST_CASE("plugstack paths: absolute, no '..', no control bytes, bounded", "[hostile]") {
  for (const std::string& arg :
       {std::string("lib_dir=/var/lib/../../etc"), std::string("topology=/etc/x/../shadow"), std::string("profile_dir=/a/.."),
        std::string("rxdm_ready=/run/x\nverbose=on"), std::string("lib_dir=relative/dir"), "lib_dir=/" + kHuge, "lib_dir=/tmp/" + kWithNul,
        std::string("profile.tcpxo=../tcpxo"), std::string("profile.tcpxo=a/b"), std::string("profile.tcpxo=x;rm"),
        std::string("profile.tcpxo=.hidden"), "profile.tcpxo=" + kHuge, "default=" + kHuge, kHuge})
    refusal([&] { parse_plugin_config({arg}); });
  // Names with '..' inside a component are ordinary names.
  CHECK(parse_plugin_config({"lib_dir=/opt/tcpxo..v2/lib64"}).lib_dir == "/opt/tcpxo..v2/lib64");
  CHECK(parse_plugin_config({"profile.tcpxo=tcpxo-simple.v2"}).tcpxo_profile == "tcpxo-simple.v2");
}

TEST_CASE("a profile may set only NCCL_*, FI_*, GPUDIRECT_* and LD_LIBRARY_PATH", "[hostile][profile]") {
  for (const char* line : {"PATH=/tmp/evil", "LD_PRELOAD=/tmp/evil.so", "PATH+=/tmp", "HOME?=/tmp", "SLURM_JOB_ID=1", "BASH_ENV=/tmp/x",
                           "when CTRL_NIC: LD_PRELOAD=x"}) {
    const std::string message = refusal([&] { parse_profile(std::string(line) + "\n", "x", "x.conf"); });
    CHECK(message.find("x.conf:1") != std::string::npos);
  }
  CHECK(refusal([&] { parse_profile("PATH=/tmp\n", "x", "x.conf"); }).find("NCCL_*, FI_*, GPUDIRECT_*, LD_LIBRARY_PATH") !=
        std::string::npos);
  CHECK(parse_profile("NCCL_A=1\nFI_B=2\nGPUDIRECT_C=3\nLD_LIBRARY_PATH+=/x\n", "x", "x.conf").lines.size() == 4);
  // Values: no control bytes (a NUL would cut the variable short in setenv).
  refusal([&] { parse_profile(std::string("NCCL_A=1\0PATH=/x\n", 18), "x", "x.conf"); });
  refusal([&] { parse_profile("NCCL_A=1\rPATH=/x\n", "x", "x.conf"); });
  refusal([&] { parse_profile("NCCL_A=${" + kHuge + "}\n", "x", "x.conf"); });
}

TEST_CASE("profiles are read only from the configured directories", "[hostile][profile]") {
  const auto dir = std::filesystem::temp_directory_path() / ("gpudirect-hostile-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "profiles");
  std::ofstream(dir / "outside.conf") << "NCCL_NET=outside\n";
  std::ofstream(dir / "profiles" / "inside.conf") << "NCCL_NET=inside\n";
  const std::vector<std::string> dirs{(dir / "profiles").string()};
  CHECK(load_profile("inside", dirs).lines.at(0).value_template == "inside");
  for (const std::string& name : {std::string("../outside"), (dir / "outside").string(), std::string(".."), std::string(".hidden"),
                                  std::string("in\nside"), std::string(""), kHuge})
    refusal([&] { load_profile(name, dirs); }, 1024);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Slurm's variables with hostile values are refused with bounded messages", "[hostile]") {
  GpuSelectionInput input;
  input.gpu_count = 8;
  for (const std::string& value :
       {std::string("0\n1"), std::string("0;1"), kWithNul, kHuge, std::string("0,") + kHuge, std::string("GPU-") + kHuge}) {
    input.cuda_visible_devices = value;
    refusal([&] { select_task_gpus(input); });
  }
  for (const std::string& value : {kHuge, std::string("8(x2)\n"), std::string("1(x1048576),") + std::string(5000, '1')})
    refusal([&] { tasks_on_node(value, 0); });
  refusal([&] { expand_hostlist("node[" + kHuge + "]"); });
}

TEST_CASE("sums that could overflow are refused, not wrapped", "[hostile]") {
  // 2^11 entries of 2^20 nodes each: 2^31 nodes would overflow an int.
  std::string per_node;
  for (int i = 0; i < 2048; ++i) per_node += (i ? "," : "") + std::string("1(x1048576)");
  refusal([&] { tasks_on_node(per_node, 0); });
  // Many items of a million hosts each: bounded in total, not per item.
  std::string hosts;
  for (int i = 0; i < 3; ++i) hosts += (i ? "," : "") + std::string("n[0-999999]");
  refusal([&] { expand_hostlist(hosts); });
}
