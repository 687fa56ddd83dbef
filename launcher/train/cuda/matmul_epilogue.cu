// The linear-layer products with cuBLASLt epilogues (--gemm-epilogues): the plans of
// epilogue_plan.hpp, bf16 inputs, fp32 compute and fp32 biases, launched as cuBLASLt describes them.
#include "train/cuda/cuda_check.cuh"
#include "train/cuda/epilogue_plan.hpp"
#include "train/cuda/kernels.cuh"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {
namespace {

struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublaslt().desc_destroy(d); }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublaslt().layout_destroy(l); }
};
struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublaslt().preference_destroy(p); }
};
using Desc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter>;

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  GPUDIRECT_CUBLAS(cublaslt().desc_set(desc, attribute, &value, sizeof value));
}

// A column-major matrix as stored: `rows` x `cols` with leading dimension ld.
Layout layout(cudaDataType_t type, int rows, int cols, int ld) {
  cublasLtMatrixLayout_t l = nullptr;
  GPUDIRECT_CUBLAS(cublaslt().layout_create(&l, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld));
  return Layout(l);
}

const char* name(Epilogue e) {
  switch (e) {
    case Epilogue::bias:
      return "bias";
    case Epilogue::gelu_bias:
      return "GELU+bias";
    case Epilogue::dgelu:
      return "GELU-gradient";
  }
  return "?";
}

// D = epilogue(op(A) op(B)) as the plan says; bias: fp32, plan.bias_length entries; aux: the bf16
// GELU input (written by gelu_bias, read by dgelu).
void run(const GemmEpilogueContext& lt, const EpiloguePlan& plan, const Operands<bf16>& operands, const float* bias, bf16* aux, void* d,
         cudaDataType_t d_type, cudaStream_t stream) {
  if (const std::string why = epilogue_problem(plan); !why.empty())
    throw std::invalid_argument(std::string("gpudirect-launch train: --gemm-epilogues: the ") + name(plan.epilogue) + " product: " + why);
  const GemmPlan& p = plan.gemm;
  cublasLtMatmulDesc_t raw = nullptr;
  GPUDIRECT_CUBLAS(cublaslt().desc_create(&raw, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const Desc desc(raw);
  set<std::int32_t>(raw, CUBLASLT_MATMUL_DESC_TRANSA, p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  set<std::int32_t>(raw, CUBLASLT_MATMUL_DESC_TRANSB, p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  if (plan.epilogue == Epilogue::gelu_bias) epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  if (plan.epilogue == Epilogue::dgelu) epilogue = CUBLASLT_EPILOGUE_DGELU;
  set(raw, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  if (plan.epilogue != Epilogue::dgelu) {
    set(raw, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
    set<std::int32_t>(raw, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_32F);  // the master biases, not a bf16 copy
  }
  if (plan.epilogue != Epilogue::bias) {
    set(raw, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(aux));
    set<std::int64_t>(raw, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, plan.aux_ld);
    set<std::int32_t>(raw, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, CUDA_R_16BF);
  }
  const Layout a = p.transpose_a ? layout(CUDA_R_16BF, p.k, p.m, p.lda) : layout(CUDA_R_16BF, p.m, p.k, p.lda);
  const Layout b = p.transpose_b ? layout(CUDA_R_16BF, p.n, p.k, p.ldb) : layout(CUDA_R_16BF, p.k, p.n, p.ldb);
  const Layout c = layout(d_type, p.m, p.n, p.ldc);

  cublasLtMatmulPreference_t raw_preference = nullptr;
  GPUDIRECT_CUBLAS(cublaslt().preference_create(&raw_preference));
  const Preference preference(raw_preference);
  const std::uint64_t workspace = lt.workspace_bytes;
  GPUDIRECT_CUBLAS(cublaslt().preference_set(raw_preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
  // The heuristic reads the pointers set above for their alignment: asked per call, as they change.
  cublasLtMatmulHeuristicResult_t choice{};
  int found = 0;
  GPUDIRECT_CUBLAS(cublaslt().heuristic(lt.handle, raw, a.get(), b.get(), c.get(), c.get(), raw_preference, 1, &choice, &found));
  if (found == 0)
    throw std::runtime_error(std::string("gpudirect-launch train: cuBLASLt has no kernel for the ") + name(plan.epilogue) + " product (m " +
                             std::to_string(p.m) + ", n " + std::to_string(p.n) + ", k " + std::to_string(p.k) +
                             ") on this GPU: run without --gemm-epilogues");
  const float alpha = 1.0f, beta = 0.0f;
  GPUDIRECT_CUBLAS(cublaslt().matmul(lt.handle, raw, &alpha, operands[p.a], a.get(), operands[p.b], b.get(), &beta, d, c.get(), d, c.get(),
                                     &choice.algo, lt.workspace, lt.workspace_bytes, stream));
}

}  // namespace

void matmul_forward_bias(const GemmEpilogueContext& lt, void* out, cudaDataType_t out_type, const bf16* inp, const bf16* weight,
                         const float* bias, int N, int IC, int OC, cudaStream_t stream) {
  Operands<bf16> operands;
  operands.inp = inp;
  operands.weight = weight;
  run(lt, bias_epilogue_plan(N, IC, OC), operands, bias, nullptr, out, out_type, stream);
}

void matmul_forward_gelu(const GemmEpilogueContext& lt, bf16* out, bf16* pre_gelu, const bf16* inp, const bf16* weight, const float* bias,
                         int N, int IC, int OC, cudaStream_t stream) {
  Operands<bf16> operands;
  operands.inp = inp;
  operands.weight = weight;
  run(lt, gelu_epilogue_plan(N, IC, OC), operands, bias, pre_gelu, out, CUDA_R_16BF, stream);
}

void matmul_dinp_dgelu(const GemmEpilogueContext& lt, bf16* dinp, const bf16* dout, const bf16* weight, const bf16* pre_gelu, int N, int IC,
                       int OC, cudaStream_t stream) {
  Operands<bf16> operands;
  operands.dout = dout;
  operands.weight = weight;
  // cuBLASLt reads the aux input through a non-const pointer attribute; it does not write it here.
  run(lt, dgelu_epilogue_plan(N, IC, OC), operands, nullptr, const_cast<bf16*>(pre_gelu), dinp, CUDA_R_16BF, stream);
}

}  // namespace gpudirect::train::cuda
