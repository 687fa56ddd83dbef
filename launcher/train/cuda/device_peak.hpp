// A GPU's dense bf16 tensor-core peak, for MFU (as llm.c and the notes count it: no 2:4 sparsity).
#pragma once

#include <string_view>

namespace gpudirect::train::cuda {

// From NVIDIA's datasheets by device name (cudaDeviceProp::name): H100 SXM 989, H100 NVL 835,
// H100 PCIe 756, H200 989, A100 312 TFLOP/s. Otherwise from the architecture's dense bf16 rate per
// SM and clock (sm_80: 2048 FLOP/clock/SM, sm_90: 4096) times SMs and the boost clock in kHz.
// 0 when neither is known (the train command then asks for --peak-tflops).
double dense_bf16_peak_flops(std::string_view name, int major, int minor, int sms, long clock_khz);

}  // namespace gpudirect::train::cuda
