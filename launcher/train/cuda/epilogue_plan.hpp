// --gemm-epilogues (speed_options.hpp): the bias and the GELU done by cuBLASLt in the GEMM's epilogue
// instead of by separate kernels. Three products change, as data here like gemm_plan.hpp's, so the unit
// tests can run them through a host emulation of cuBLASLt's epilogues against the CPU layers:
//   bias       out[N, OC] = inp W^T + bias (qkv, attention projection, MLP projection)
//   gelu_bias  pre[N, OC] = inp W^T + bias, kept for backward (cuBLASLt's aux output), and
//              out = gelu(pre) (the MLP's first layer: fch and fch_gelu in one product)
//   dgelu      dinp[N, IC] = (dout W) * gelu'(pre) with pre[N, IC] read as the aux input (the MLP
//              projection's input gradient straight into the first layer's output gradient)
// The weight and bias gradients stay the plain plans (they accumulate; cuBLASLt's BGRAD overwrites).
#pragma once

#include "train/cuda/gemm_plan.hpp"
#include "train/gpt_config.hpp"

#include <string>

namespace gpudirect::train::cuda {

enum class Epilogue { bias, gelu_bias, dgelu };

struct EpiloguePlan {
  GemmPlan gemm;  // beta 0: the epilogue writes D whole
  Epilogue epilogue = Epilogue::bias;
  int bias_length = 0;  // bias and gelu_bias: one fp32 bias per row of column-major D (= OC); dgelu: 0
  int aux_ld = 0;       // gelu_bias and dgelu: leading dimension of the GELU input matrix; bias: 0
};

constexpr EpiloguePlan bias_epilogue_plan(int N, int IC, int OC) { return {forward_plan(N, IC, OC, false), Epilogue::bias, OC, 0}; }
constexpr EpiloguePlan gelu_epilogue_plan(int N, int IC, int OC) { return {forward_plan(N, IC, OC, false), Epilogue::gelu_bias, OC, OC}; }
// The layer whose input gradient it is: inp[N, IC] -> out[N, OC]; pre is that input before the GELU.
constexpr EpiloguePlan dgelu_epilogue_plan(int N, int IC, int OC) { return {dinp_plan(N, IC, OC), Epilogue::dgelu, 0, IC}; }

// Empty when cuBLASLt accepts the plan's epilogue as documented (cublasLt.h: the GELU input's leading
// dimension a multiple of 8 and at least D's rows; the bias as long as D's rows), else why not.
std::string epilogue_problem(const EpiloguePlan& plan);

// Empty when every product of this model can take the epilogues with 16-byte aligned operands
// (cuBLASLt chooses its kernels by the pointers' alignment: the switch is refused for a shape that
// would give less rather than silently running slower kernels), else why not, naming the fix.
std::string gemm_epilogues_problem(const GptConfig& config);

}  // namespace gpudirect::train::cuda
