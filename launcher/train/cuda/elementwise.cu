#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/launch_geometry.hpp"
#include "train/cuda/vector_loads.hpp"

namespace gpudirect::train::cuda {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

#define GPUDIRECT_GRID_STRIDE(i, n)                                                              \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

__device__ float gelu(float x) { return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kCubic * x * x * x))); }

__device__ float gelu_gradient(float x, float dout) {
  const float th = tanhf(kSqrt2OverPi * (x + kCubic * x * x * x));
  const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
  return dout * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
}

__global__ void gelu_forward_kernel(bf16* out, const bf16* inp, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(gelu(__bfloat162float(inp[i])));
}

__global__ void gelu_backward_kernel(bf16* dinp, const bf16* inp, const bf16* dout, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) dinp[i] = __float2bfloat16_rn(gelu_gradient(__bfloat162float(inp[i]), __bfloat162float(dout[i])));
}

__global__ void residual_forward_kernel(float* out, const float* a, const float* b, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

__global__ void to_bf16_kernel(bf16* out, const float* inp, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(inp[i]);
}

__global__ void fill_bf16_kernel(bf16* out, float value, std::size_t n) { GPUDIRECT_GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(value); }

// --vector-loads (vector_loads.hpp): 16-byte packs, then the scalar tail; the same arithmetic per
// element as the kernels above, so both give the same bits.
template <typename T, int N>
struct alignas(kVectorBytes) Pack {
  T v[N];
};
using Bf16Pack = Pack<bf16, 8>;
using FloatPack = Pack<float, 4>;
static_assert(sizeof(Bf16Pack) == kVectorBytes && sizeof(FloatPack) == kVectorBytes);

template <typename T>
__device__ T load_pack(const void* base, std::size_t at_bytes) {
  return *reinterpret_cast<const T*>(static_cast<const char*>(base) + at_bytes);
}

template <typename Pack, typename Scalar>
__device__ void vector_loop(std::size_t n, std::size_t width, const Pack& pack, const Scalar& scalar) {
  for_each_pack_then_tail(n, width, true, blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x,
                          static_cast<std::size_t>(gridDim.x) * blockDim.x, pack, scalar);
}

__global__ void gelu_forward_vector_kernel(bf16* out, const bf16* inp, std::size_t n) {
  vector_loop(
      n, 8,
      [=](std::size_t at) {
        const Bf16Pack x = load_pack<Bf16Pack>(inp, at * sizeof(bf16));
        Bf16Pack y;
#pragma unroll
        for (int k = 0; k < 8; ++k) y.v[k] = __float2bfloat16_rn(gelu(__bfloat162float(x.v[k])));
        *reinterpret_cast<Bf16Pack*>(out + at) = y;
      },
      [=](std::size_t i) { out[i] = __float2bfloat16_rn(gelu(__bfloat162float(inp[i]))); });
}

__global__ void gelu_backward_vector_kernel(bf16* dinp, const bf16* inp, const bf16* dout, std::size_t n) {
  vector_loop(
      n, 8,
      [=](std::size_t at) {
        const Bf16Pack x = load_pack<Bf16Pack>(inp, at * sizeof(bf16)), d = load_pack<Bf16Pack>(dout, at * sizeof(bf16));
        Bf16Pack y;
#pragma unroll
        for (int k = 0; k < 8; ++k) y.v[k] = __float2bfloat16_rn(gelu_gradient(__bfloat162float(x.v[k]), __bfloat162float(d.v[k])));
        *reinterpret_cast<Bf16Pack*>(dinp + at) = y;
      },
      [=](std::size_t i) { dinp[i] = __float2bfloat16_rn(gelu_gradient(__bfloat162float(inp[i]), __bfloat162float(dout[i]))); });
}

__global__ void residual_forward_vector_kernel(float* out, const float* a, const float* b, std::size_t n) {
  vector_loop(
      n, 4,
      [=](std::size_t at) {
        const FloatPack x = load_pack<FloatPack>(a, at * sizeof(float)), y = load_pack<FloatPack>(b, at * sizeof(float));
        FloatPack z;
#pragma unroll
        for (int k = 0; k < 4; ++k) z.v[k] = x.v[k] + y.v[k];
        *reinterpret_cast<FloatPack*>(out + at) = z;
      },
      [=](std::size_t i) { out[i] = a[i] + b[i]; });
}

// Packs of 8: two 16-byte fp32 loads, one 16-byte bf16 store.
__global__ void to_bf16_vector_kernel(bf16* out, const float* inp, std::size_t n) {
  vector_loop(
      n, 8,
      [=](std::size_t at) {
        const FloatPack lo = load_pack<FloatPack>(inp, at * sizeof(float)), hi = load_pack<FloatPack>(inp, (at + 4) * sizeof(float));
        Bf16Pack y;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          y.v[k] = __float2bfloat16_rn(lo.v[k]);
          y.v[k + 4] = __float2bfloat16_rn(hi.v[k]);
        }
        *reinterpret_cast<Bf16Pack*>(out + at) = y;
      },
      [=](std::size_t i) { out[i] = __float2bfloat16_rn(inp[i]); });
}

bool all_aligned(std::initializer_list<const void*> pointers) {
  for (const void* p : pointers)
    if (!vector_aligned(p)) return false;
  return true;
}

}  // namespace

void gelu_forward(bf16* out, const bf16* inp, std::size_t n, cudaStream_t stream, bool vector_loads) {
  if (vector_loads && all_aligned({out, inp}))
    gelu_forward_vector_kernel<<<vector_blocks(n, 8, true), kThreadsPerBlock, 0, stream>>>(out, inp, n);
  else
    gelu_forward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, inp, n);
  GPUDIRECT_LAUNCHED();
}

void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, std::size_t n, cudaStream_t stream, bool vector_loads) {
  if (vector_loads && all_aligned({dinp, inp, dout}))
    gelu_backward_vector_kernel<<<vector_blocks(n, 8, true), kThreadsPerBlock, 0, stream>>>(dinp, inp, dout, n);
  else
    gelu_backward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(dinp, inp, dout, n);
  GPUDIRECT_LAUNCHED();
}

void residual_forward(float* out, const float* a, const float* b, std::size_t n, cudaStream_t stream, bool vector_loads) {
  if (vector_loads && all_aligned({out, a, b}))
    residual_forward_vector_kernel<<<vector_blocks(n, 4, true), kThreadsPerBlock, 0, stream>>>(out, a, b, n);
  else
    residual_forward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, a, b, n);
  GPUDIRECT_LAUNCHED();
}

void to_bf16(bf16* out, const float* inp, std::size_t n, cudaStream_t stream, bool vector_loads) {
  if (vector_loads && all_aligned({out, inp}))
    to_bf16_vector_kernel<<<vector_blocks(n, 8, true), kThreadsPerBlock, 0, stream>>>(out, inp, n);
  else
    to_bf16_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, inp, n);
  GPUDIRECT_LAUNCHED();
}

void fill_bf16(bf16* out, float value, std::size_t n, cudaStream_t stream) {
  fill_bf16_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, value, n);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
