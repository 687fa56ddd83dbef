// The doctor's IMEX channel check (launcher/commands/doctor/imex_check.hpp) against a stand-in root:
// proc/devices and dev/nvidia-caps-imex-channels as regular files.
#include <catch2/catch.hpp>

#include "doctor/imex_check.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace gpudirect::launcher;

namespace {

struct StandInRoot {
  std::filesystem::path root;
  StandInRoot() {
    root = std::filesystem::temp_directory_path() / ("imex-root-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "proc");
  }
  ~StandInRoot() { std::filesystem::remove_all(root); }
  void devices(const std::string& text) const { std::ofstream(root / "proc/devices") << text; }
  void channel(const std::string& name) const {
    std::filesystem::create_directories(root / "dev/nvidia-caps-imex-channels");
    std::ofstream(root / "dev/nvidia-caps-imex-channels" / name) << "";
  }
};

}  // namespace

TEST_CASE("IMEX check: a node whose driver offers no IMEX channels is not checked", "[doctor][imex]") {
  const StandInRoot r;
  r.devices("Character devices:\n195 nvidia\n 509 nvidia-caps\n");
  const ImexCheck check = check_imex_channels(r.root.string(), "a4x-1", 2);
  CHECK_FALSE(check.applies);
  CHECK(check.problem.empty());
}

TEST_CASE("IMEX check: the driver offers channels and the task sees none: one line with node, cause and fix", "[doctor][imex]") {
  const StandInRoot r;
  r.devices("Character devices:\n195 nvidia\n234 nvidia-caps-imex-channels\n");
  ImexCheck check = check_imex_channels(r.root.string(), "a4x-1", 2);
  CHECK(check.applies);
  CHECK(check.channels.empty());
  CHECK_THAT(check.problem, Catch::Contains("node a4x-1") && Catch::Contains("/dev/nvidia-caps-imex-channels/channelN") &&
                                Catch::Contains("SwitchType=switch/nvidia_imex") && Catch::Contains("mknod"));
  CHECK(check.problem.find('\n') == std::string::npos);
  // Entries that are not channelN do not count.
  r.channel("channel");
  r.channel("channelx");
  r.channel("README");
  check = check_imex_channels(r.root.string(), "a4x-1", 2);
  CHECK(check.channels.empty());
  CHECK_FALSE(check.problem.empty());
}

TEST_CASE("IMEX check: the job's channel device is there: no problem, the channel named", "[doctor][imex]") {
  const StandInRoot r;
  r.devices("Character devices:\n234 nvidia-caps-imex-channels\n");
  r.channel("channel7");
  const ImexCheck check = check_imex_channels(r.root.string(), "a4x-1", 2);
  CHECK(check.applies);
  CHECK(check.channels == std::vector<std::string>{"channel7"});
  CHECK(check.problem.empty());
}

TEST_CASE("IMEX check: a one-node job needs no IMEX channel", "[doctor][imex]") {
  const StandInRoot r;
  r.devices("Character devices:\n234 nvidia-caps-imex-channels\n");
  const ImexCheck check = check_imex_channels(r.root.string(), "a4x-1", 1);
  CHECK_FALSE(check.applies);
  CHECK(check.problem.empty());
}
