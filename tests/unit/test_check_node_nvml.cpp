#include <catch2/catch.hpp>

#include "check_node/nvml_probe.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gpudirect::launcher::check_node;

TEST_CASE("NVML through dlopen: each GPU's faults as the stand-in reports them", "[check_node]") {
  const auto path = std::filesystem::temp_directory_path() / ("gpudirect-nvml-standin-" + std::to_string(::getpid()) + ".conf");
  std::ofstream(path) << "count 8\ndriver 570.1\ngpu 3 ecc_volatile 2\ngpu 3 ecc_aggregate 5\ngpu 1 retired_pending 1\n"
                         "gpu 2 remap_pending 1\ngpu 2 remap_failed 1\ngpu 4 nvlink_down 3\ngpu 7 nvlink_recovery 4\n"
                         "gpu 5 throttle 0x40\ngpu 6 pcie_width 8\ngpu 6 pcie_max_gen 4\n";
  ::setenv("NVML_STANDIN_CONFIG", path.c_str(), 1);
  const GpuProbe probe = probe_gpus(GPUDIRECT_NVML_STANDIN);
  ::unsetenv("NVML_STANDIN_CONFIG");
  std::filesystem::remove(path);
  REQUIRE(probe.loaded);
  CHECK(probe.driver_version == "570.1");
  CHECK(probe.cuda_driver_version == 12040);
  REQUIRE(probe.gpus.size() == 8);
  CHECK(probe.gpus[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(probe.gpus[0].bus_id == "00000000:04:00.0");
  CHECK(probe.gpus[3].ecc_volatile_uncorrected == 2ULL);
  CHECK(probe.gpus[3].ecc_aggregate_uncorrected == 5ULL);
  CHECK(probe.gpus[0].ecc_volatile_uncorrected == 0ULL);
  CHECK(probe.gpus[1].retired_pages_pending == true);
  CHECK(probe.gpus[2].remap_pending == true);
  CHECK(probe.gpus[2].remap_failed == true);
  REQUIRE(probe.gpus[4].nvlinks.size() == 18);
  CHECK_FALSE(probe.gpus[4].nvlinks[3].active);
  CHECK(probe.gpus[4].nvlinks[2].active);
  CHECK(probe.gpus[7].nvlinks[0].recovery == 4);
  CHECK(probe.gpus[5].throttle_reasons == 0x40ULL);
  CHECK(probe.gpus[6].pcie_width == 8U);
  CHECK(probe.gpus[6].pcie_max_width == 16U);
  CHECK(probe.gpus[6].pcie_max_generation == 4U);
  CHECK(probe.gpus[0].errors.empty());
}

TEST_CASE("NVML that cannot be loaded says so instead of failing", "[check_node]") {
  const GpuProbe probe = probe_gpus("/nonexistent/libnvidia-ml.so.1");
  CHECK_FALSE(probe.loaded);
  CHECK_THAT(probe.error, Catch::Contains("/nonexistent/libnvidia-ml.so.1 cannot be loaded"));
}
