#include "train/cuda/epilogue_plan.hpp"

#include "train/model.hpp"

namespace gpudirect::train::cuda {

std::string epilogue_problem(const EpiloguePlan& p) {
  const int rows = p.gemm.m;  // rows of column-major D
  if (p.gemm.beta != 0) return "the epilogue plans overwrite D (beta 0)";
  if ((p.epilogue == Epilogue::bias || p.epilogue == Epilogue::gelu_bias) && p.bias_length != rows)
    return "the bias has " + std::to_string(p.bias_length) + " entries and D has " + std::to_string(rows) + " rows";
  if (p.epilogue == Epilogue::gelu_bias || p.epilogue == Epilogue::dgelu) {
    if (p.aux_ld < rows)
      return "the GELU input's leading dimension " + std::to_string(p.aux_ld) + " is less than D's rows " + std::to_string(rows);
    if (p.aux_ld % 8 != 0) return "the GELU input's leading dimension " + std::to_string(p.aux_ld) + " is not a multiple of 8";
  }
  return "";
}

std::string gemm_epilogues_problem(const GptConfig& config) {
  // Every activation offset of the model is a multiple of B x T x C elements and every bias offset a
  // multiple of C floats (ParameterLayout), so a width that is a multiple of 8 keeps bf16 and fp32
  // operands 16-byte aligned; the bias offsets are checked one by one all the same.
  if (config.width % 8 != 0)
    return "--gemm-epilogues needs a model width that is a multiple of 8 (16-byte aligned operands for cuBLASLt); this model's is " +
           std::to_string(config.width) + ": run without --gemm-epilogues";
  const ParameterLayout layout(config);
  for (int l = 0; l < config.layers; ++l)
    for (const char* bias : {"qkv.b", "proj.b", "fc.b", "fcproj.b"}) {
      const std::string name = "h." + std::to_string(l) + "." + bias;
      if (layout.find(name).offset % 4 != 0)
        return "--gemm-epilogues needs 16-byte aligned biases and " + name + " starts at float " +
               std::to_string(layout.find(name).offset) + ": run without --gemm-epilogues";
    }
  const int N = config.micro_batch * config.seq_len, C = config.width;
  for (const EpiloguePlan& p : {bias_epilogue_plan(N, C, 3 * C), bias_epilogue_plan(N, C, C), gelu_epilogue_plan(N, C, 4 * C),
                                bias_epilogue_plan(N, 4 * C, C), dgelu_epilogue_plan(N, 4 * C, C)})
    if (const std::string why = epilogue_problem(p); !why.empty()) return "--gemm-epilogues: " + why + ": run without --gemm-epilogues";
  return "";
}

}  // namespace gpudirect::train::cuda
