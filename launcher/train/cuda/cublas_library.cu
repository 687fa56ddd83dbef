#include "train/cuda/cublas_library.cuh"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {
namespace {

// The pointer types above must name an overload the header declares (unevaluated: links nothing).
static_assert(sizeof(static_cast<CublasGemmEx>(&::cublasGemmEx)) > 0);
static_assert(sizeof(static_cast<CublasGemmStridedBatchedEx>(&::cublasGemmStridedBatchedEx)) > 0);

template <typename F>
void resolve(void* handle, const char* library, const char* symbol, F& out) {
  void* address = ::dlsym(handle, symbol);
  if (address == nullptr)
    throw std::runtime_error(std::string("gpudirect-launch train: ") + library + " has no " + symbol +
                             " (a cuBLAS older than the headers this gpudirect-launch was built with?)");
  out = reinterpret_cast<F>(address);
}

// Kept open for the life of the process: the model's handles live until exit.
void* open_library(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw std::runtime_error("gpudirect-launch train: cannot load " + library + " for the CUDA model (" + (why ? why : "unknown") +
                             "); install the CUDA toolkit's cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) +
                             " or add its directory to LD_LIBRARY_PATH");
  }
  return handle;
}

CublasLibrary open_cublas() {
  const std::string library = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* handle = open_library(library);
  CublasLibrary api;
  resolve(handle, library.c_str(), "cublasCreate_v2", api.create);
  resolve(handle, library.c_str(), "cublasDestroy_v2", api.destroy);
  resolve(handle, library.c_str(), "cublasSetStream_v2", api.set_stream);
  resolve(handle, library.c_str(), "cublasGemmEx", api.gemm_ex);
  resolve(handle, library.c_str(), "cublasGemmStridedBatchedEx", api.gemm_strided_batched_ex);
  resolve(handle, library.c_str(), "cublasGetStatusString", api.status_string);
  return api;
}

CublasLtLibrary open_cublaslt() {
  const std::string library = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* handle = open_library(library);
  CublasLtLibrary api;
  resolve(handle, library.c_str(), "cublasLtCreate", api.create);
  resolve(handle, library.c_str(), "cublasLtDestroy", api.destroy);
  resolve(handle, library.c_str(), "cublasLtMatmulDescCreate", api.desc_create);
  resolve(handle, library.c_str(), "cublasLtMatmulDescDestroy", api.desc_destroy);
  resolve(handle, library.c_str(), "cublasLtMatmulDescSetAttribute", api.desc_set);
  resolve(handle, library.c_str(), "cublasLtMatrixLayoutCreate", api.layout_create);
  resolve(handle, library.c_str(), "cublasLtMatrixLayoutDestroy", api.layout_destroy);
  resolve(handle, library.c_str(), "cublasLtMatmulPreferenceCreate", api.preference_create);
  resolve(handle, library.c_str(), "cublasLtMatmulPreferenceDestroy", api.preference_destroy);
  resolve(handle, library.c_str(), "cublasLtMatmulPreferenceSetAttribute", api.preference_set);
  resolve(handle, library.c_str(), "cublasLtMatmulAlgoGetHeuristic", api.heuristic);
  resolve(handle, library.c_str(), "cublasLtMatmul", api.matmul);
  return api;
}

}  // namespace

const CublasLtLibrary& cublaslt() {
  static const CublasLtLibrary api = open_cublaslt();
  return api;
}

const CublasLibrary& cublas() {
  static const CublasLibrary api = open_cublas();  // thread-safe initialisation; a throw is retried next call
  return api;
}

}  // namespace gpudirect::train::cuda
