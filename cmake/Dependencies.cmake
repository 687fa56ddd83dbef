# Every dependency comes from Debian; CUDA and NCCL are optional.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric)
pkg_check_modules(LIBXML2 REQUIRED IMPORTED_TARGET libxml-2.0)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)

# libslurm-dev ships spank.h but no pkg-config file.
find_path(SLURM_INCLUDE_DIR slurm/spank.h REQUIRED)

# CUDA is a real CMake language: .cu files build the normal way wherever nvcc is found. Results,
# for the targets below:
#   GPUDIRECT_HAVE_CUDA  nvcc works and CUDA::cudart and CUDA::cublas exist (add .cu sources when ON)
#   GPUDIRECT_HAVE_NCCL  the CUDA toolkit (runtime and headers, nvcc not needed) and NCCL were found;
#                        the gpudirect_nccl target links NCCL with the CUDA runtime
# Architectures: CMAKE_CUDA_ARCHITECTURES, default 90 (H100/H200); e.g. -DCMAKE_CUDA_ARCHITECTURES="80;90".
set(GPUDIRECT_HAVE_CUDA OFF)
set(GPUDIRECT_HAVE_NCCL OFF)
if(GPUDIRECT_WITH_CUDA)
  # nvcc is rarely on PATH: point the probe at the usual install unless the user chose one.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to build for (90: H100/H200)")
    endif()
    enable_language(CUDA)
    # C++20 in .cu files too. CMake 3.25 does not know nvcc's C++20 flag (3.26 does), and a target's
    # CXX_STANDARD 20 makes CMake require the CUDA20 dialect for its .cu sources: tell it what 3.26 knows.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas)
    set(GPUDIRECT_HAVE_CUDA ON)
  endif()
  if(CUDAToolkit_FOUND AND GPUDIRECT_WITH_NCCL)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME PATH_SUFFIXES lib lib64)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(GPUDIRECT_HAVE_NCCL ON)
      add_library(gpudirect_nccl INTERFACE)
      target_include_directories(gpudirect_nccl INTERFACE ${NCCL_INCLUDE_DIR})
      target_link_libraries(gpudirect_nccl INTERFACE ${NCCL_LIBRARY} CUDA::cudart)
    endif()
  endif()
endif()
if(GPUDIRECT_HAVE_CUDA)
  message(STATUS "gpudirect-slurm: CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}, architectures ${CMAKE_CUDA_ARCHITECTURES}), NCCL backend ${GPUDIRECT_HAVE_NCCL}")
elseif(GPUDIRECT_WITH_CUDA)
  message(STATUS "gpudirect-slurm: no CUDA language (no working nvcc, cudart and cuBLAS found), NCCL backend ${GPUDIRECT_HAVE_NCCL}")
else()
  message(STATUS "gpudirect-slurm: CUDA and NCCL off (GPUDIRECT_WITH_CUDA=OFF)")
endif()

# CPU training: OpenBLAS (Debian libopenblas-dev) for the matrix products, OpenMP for the rest.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
find_package(OpenMP REQUIRED COMPONENTS CXX)
