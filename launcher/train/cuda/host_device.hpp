// GPUDIRECT_HOST_DEVICE marks code that runs in a CUDA kernel and, unchanged, on the host, where the
// unit tests emulate the kernels with it (the headers of plans and per-thread steps include this).
#pragma once

#if defined(__CUDACC__)
#define GPUDIRECT_HOST_DEVICE __host__ __device__
#else
#define GPUDIRECT_HOST_DEVICE
#endif
