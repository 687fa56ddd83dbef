#include <catch2/catch.hpp>

#include "bounded_jobs.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace gpudirect::launcher;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("jobs run side by side, one over the timeout is ended with its whole process group", "[health]") {
  const auto dir = std::filesystem::temp_directory_path() / ("health-jobs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string marker = (dir / "child-survived").string();
  // The slow job's own child would write the marker after 3 s if the group were not killed.
  const std::vector<BoundedJob> jobs{{{"sh", "-c", "echo quick; exit 3"}, (dir / "quick.log").string()},
                                     {{"sh", "-c", "(sleep 3; touch " + marker + ") & echo slow; sleep 30"}, (dir / "slow.log").string()}};
  std::vector<std::size_t> started, ended;
  const auto start = std::chrono::steady_clock::now();
  const auto ends = run_bounded(
      jobs, 1.0, [&](std::size_t i) { started.push_back(i); }, [&](std::size_t i, const JobEnd&) { ended.push_back(i); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(started == std::vector<std::size_t>{0, 1});
  CHECK(ended == std::vector<std::size_t>{0, 1});
  CHECK(ends[0].exit_code == 3);
  CHECK_FALSE(ends[0].timed_out);
  CHECK(ends[1].timed_out);
  CHECK(ends[1].exit_code == -1);
  CHECK(took < 3.0);
  CHECK(read_all((dir / "quick.log").string()) == "quick\n");
  CHECK(read_all((dir / "slow.log").string()) == "slow\n");
  ::sleep(3);
  CHECK_FALSE(std::filesystem::exists(marker));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a short command's status and output", "[health]") {
  const auto [status, output] = run_capture({"sh", "-c", "echo out; echo err >&2; exit 2"});
  CHECK(status == 2);
  CHECK(output == "out\nerr\n");
  const auto [missing, message] = run_capture({"gpudirect-no-such-command"});
  CHECK(missing == 127);
  CHECK_THAT(message, Catch::Contains("cannot run gpudirect-no-such-command"));
}
