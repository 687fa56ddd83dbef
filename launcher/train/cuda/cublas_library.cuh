// cuBLAS, opened with dlopen the first time the CUDA model is made instead of linked: libcublas and
// libcublasLt are several hundred MB, and loading them made every gpudirect-launch start (exec,
// doctor, bench on CPUs) about 0.4 s slower. Only the calls the model makes are resolved.
#pragma once

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

}  // namespace gpudirect::train::cuda
