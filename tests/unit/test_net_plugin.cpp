#include <catch2/catch.hpp>

#include "gpudirect/net_plugin.hpp"

#include <unistd.h>

#include <filesystem>

using namespace gpudirect;

namespace {

const std::string kStandins = GPUDIRECT_NET_PLUGIN_STANDINS;  // loads/, broken/, not_a_plugin/

std::map<std::string, std::string> env_with(const std::string& net, const std::string& library_path) {
  return {{"NCCL_NET", net}, {"LD_LIBRARY_PATH", library_path}};
}

}  // namespace

TEST_CASE("no plugin is expected for NCCL's own transports", "[net_plugin]") {
  CHECK(!check_net_plugin({}));
  CHECK(!check_net_plugin({{"NCCL_NET", "IB"}}));
  CHECK(!check_net_plugin({{"NCCL_NET", "Socket"}, {"LD_LIBRARY_PATH", kStandins + "/broken"}}));
  CHECK(!check_net_plugin({{"NCCL_NET", "gIB"}, {"NCCL_NET_PLUGIN", "none"}}));
}

TEST_CASE("the plugin NCCL_NET needs is found in the task's LD_LIBRARY_PATH and loads", "[net_plugin]") {
  const auto check = check_net_plugin(env_with("FasTrak", "/nonexistent:" + kStandins + "/loads:/usr/lib"));
  REQUIRE(check);
  CHECK(check->wanted == "NCCL_NET=FasTrak");
  CHECK(check->library == kStandins + "/loads/libnccl-net.so");
  CHECK(check->problem.empty());
}

TEST_CASE("a plugin that does not load, is no plugin, or is absent is named with the reason", "[net_plugin]") {
  SECTION("an unresolved symbol (a plugin built for another NCCL or libc)") {
    const auto check = check_net_plugin(env_with("gIB", kStandins + "/broken"));
    REQUIRE(check);
    CHECK(check->library == kStandins + "/broken/libnccl-net.so");
    CHECK_THAT(check->problem,
               Catch::Contains("NCCL_NET=gIB needs NCCL's network plugin, and " + kStandins + "/broken/libnccl-net.so does not load") &&
                   Catch::Contains("gpudirect_standin_missing_symbol"));
  }
  SECTION("a library without an ncclNetPlugin symbol") {
    const auto check = check_net_plugin(env_with("GPUDirectTCPX_v7", kStandins + "/not_a_plugin"));
    REQUIRE(check);
    CHECK_THAT(check->problem, Catch::Contains("exports no ncclNetPlugin_vN symbol"));
  }
  SECTION("absent everywhere") {
    const auto check = check_net_plugin(env_with("FasTrak", "/nonexistent/lib64"));
    REQUIRE(check);
    CHECK(check->library.empty());
    CHECK_THAT(check->problem, Catch::Contains("none of libnccl-net.so is in LD_LIBRARY_PATH=/nonexistent/lib64"));
  }
  SECTION("the first that loads wins, as in NCCL's search") {
    const auto check = check_net_plugin(env_with("FasTrak", kStandins + "/not_a_plugin:" + kStandins + "/loads"));
    REQUIRE(check);
    CHECK(check->problem.empty());
    CHECK(check->library == kStandins + "/loads/libnccl-net.so");
  }
}

TEST_CASE("NCCL_NET_PLUGIN names the library as NCCL reads it: a path, or libnccl-net-NAME.so", "[net_plugin]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("net-plugin-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kStandins + "/loads/libnccl-net.so", dir / "libnccl-net-ofi.so");
  const auto by_name = check_net_plugin({{"NCCL_NET_PLUGIN", "ofi"}, {"LD_LIBRARY_PATH", dir.string()}});
  REQUIRE(by_name);
  CHECK(by_name->names == std::vector<std::string>{"ofi", "libnccl-net-ofi.so"});
  CHECK(by_name->library == (dir / "libnccl-net-ofi.so").string());
  CHECK(by_name->problem.empty());
  const auto by_path = check_net_plugin({{"NCCL_NET_PLUGIN", kStandins + "/broken/libnccl-net.so"}});
  REQUIRE(by_path);
  CHECK_THAT(by_path->problem, Catch::Contains("does not load"));
  std::filesystem::remove_all(dir);
}
