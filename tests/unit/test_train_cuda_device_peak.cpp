// The GPU's dense bf16 peak for MFU (train/cuda/device_peak.hpp).
#include <catch2/catch.hpp>

#include "train/cuda/device_peak.hpp"

using namespace gpudirect::train::cuda;

TEST_CASE("device peak: datasheet values by device name", "[train][cuda]") {
  CHECK(dense_bf16_peak_flops("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980000) == 989e12);
  CHECK(dense_bf16_peak_flops("NVIDIA H100 PCIe", 9, 0, 114, 1755000) == 756e12);
  CHECK(dense_bf16_peak_flops("NVIDIA H100 NVL", 9, 0, 132, 1785000) == 835e12);
  CHECK(dense_bf16_peak_flops("NVIDIA H200", 9, 0, 132, 1980000) == 989e12);
  CHECK(dense_bf16_peak_flops("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410000) == 312e12);
}

TEST_CASE("device peak: from SMs and clock for other sm_80/sm_90 parts, 0 when unknown", "[train][cuda]") {
  // 132 SMs x 1.83 GHz x 4096 FLOP/clock: the H100 SXM's own number, reproduced by the formula.
  CHECK(dense_bf16_peak_flops("some sm_90 part", 9, 0, 132, 1830000) == Approx(989.5e12).epsilon(1e-3));
  CHECK(dense_bf16_peak_flops("some sm_80 part", 8, 0, 108, 1410000) == Approx(312e12).epsilon(1e-2));
  CHECK(dense_bf16_peak_flops("Tesla T4", 7, 5, 40, 1590000) == 0);
  CHECK(dense_bf16_peak_flops("some sm_90 part", 9, 0, 132, 0) == 0);
}
