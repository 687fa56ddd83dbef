// cuBLAS, opened with dlopen the first time the CUDA model is made instead of linked: libcublas and
// libcublasLt are several hundred MB, and loading them made every gpudirect-launch start (exec,
// doctor, bench on CPUs) about 0.4 s slower. Only the calls the model makes are resolved.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

namespace gpudirect::train::cuda {

// cublasGemmEx as the library exports it (the header adds a C++ overload taking a cudaDataType).
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                                        cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
                                        cublasComputeType_t, cublasGemmAlgo_t);

// cublasGemmStridedBatchedEx as the library exports it (the header adds the same kind of overload).
using CublasGemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                                      const void*, cudaDataType, int, long long int, const void*, cudaDataType, int,
                                                      long long int, const void*, void*, cudaDataType, int, long long int, int,
                                                      cublasComputeType_t, cublasGemmAlgo_t);

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  CublasGemmEx gemm_ex = nullptr;
  CublasGemmStridedBatchedEx gemm_strided_batched_ex = nullptr;  // the tensor-core attention
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// libcublas.so.<CUBLAS_VER_MAJOR of the headers we built with>, opened once. Throws
// std::runtime_error naming the library and dlerror()'s reason when it or a symbol is missing.
const CublasLibrary& cublas();

// cuBLASLt, for the GEMMs with epilogues (--gemm-epilogues: epilogue_plan.hpp, matmul_epilogue.cu).
struct CublasLtLibrary {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

// libcublasLt.so.<CUBLAS_VER_MAJOR>, opened once, the first time a model with --gemm-epilogues is
// made; throws like cublas().
const CublasLtLibrary& cublaslt();

}  // namespace gpudirect::train::cuda
