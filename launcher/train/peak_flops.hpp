// The CPU's achievable fp32 FLOP/s, for MFU when no --peak-tflops is given: a short sgemm probe
// through the same BLAS the CPU model uses, on the thread count the model set (OpenBLAS threads are process-wide).
#pragma once

namespace gpudirect::train {

// Best of a few 1024x1024x1024 sgemm runs (about 0.1-1 s in all); FLOP/s.
double measure_sgemm_flops();

}  // namespace gpudirect::train
