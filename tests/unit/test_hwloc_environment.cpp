// Loading a topology leaves the process environment alone where the process has other threads
// (slurmstepd, where the plugin runs as root: setenv there races every other thread's getenv), and
// HWLOC_* variables do not change a topology read from a file. Each case runs
// hwloc_environment_probe (tests/hwloc_environment_probe/), a process of its own, because hwloc
// loads its plugins once per process and this runner loaded them before any case.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

namespace {

const std::string kFixture = std::string(GPUDIRECT_FIXTURE_DIR) + "/a3-megagpu-8g.xml";

// The probe's output, run with only `environment` (NAME=VALUE words) in its environment.
std::string probe(const std::string& environment, const std::string& threads, const std::string& source) {
  const std::string command =
      "env -i PATH=/usr/bin:/bin " + environment + " '" + GPUDIRECT_HWLOC_ENVIRONMENT_PROBE + "' " + threads + " '" + source + "' 2>&1";
  std::string output;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    CHECK(::pclose(pipe) == 0);
  }
  INFO(command);
  INFO(output);
  REQUIRE(output.find("topology: ") != std::string::npos);
  return output;
}

std::string line_of(const std::string& output, const std::string& start) {
  const auto at = output.find(start);
  return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

}  // namespace

TEST_CASE("a topology load in a process with threads does not write the environment", "[topology][hwloc][security]") {
  for (const std::string& source : {std::string("live"), kFixture}) {
    const std::string output = probe("HOME=/nonexistent", "threads", source);
    INFO(output);
    CHECK(line_of(output, "environ array: ") == "environ array: same");
    CHECK(line_of(output, "environ entries: ") == "environ entries: same");
  }
}

TEST_CASE("a topology load in a single-threaded process leaves the environment as it was and skips the unneeded plugins",
          "[topology][hwloc]") {
  const std::string output = probe("HOME=/nonexistent", "single", kFixture);
  INFO(output);
  CHECK(line_of(output, "environ entries: ") == "environ entries: same");
  CHECK(output.find("hwloc_gl") == std::string::npos);
  CHECK(output.find("hwloc_opencl") == std::string::npos);
  CHECK(output.find("hwloc_xml_libxml") == std::string::npos);
}

TEST_CASE("HWLOC variables in the environment do not change a topology read from a file", "[topology][hwloc]") {
  const std::string plain = line_of(probe("", "threads", kFixture), "topology: ");
  CHECK(plain == "topology: 8 GPUs, 9 NICs, 208 CPUs, source hwloc-xml:" + kFixture);
  for (const char* environment : {"HWLOC_XMLFILE=/nonexistent", "HWLOC_COMPONENTS=-xml,-linux,bogus", "HWLOC_SYNTHETIC=pu:2",
                                  "HWLOC_FSROOT=/nonexistent", "HWLOC_PLUGINS_PATH=/nonexistent HWLOC_ALLOW=all"}) {
    INFO(environment);
    CHECK(line_of(probe(environment, "threads", kFixture), "topology: ") == plain);
  }
}
