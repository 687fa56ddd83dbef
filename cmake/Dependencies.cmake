# Every dependency comes from Debian; CUDA and NCCL are optional. The plugin (core + plugin) needs only
# hwloc, libxml2 and Slurm's headers; everything below them is the launcher's (GPUDIRECT_BUILD_LAUNCHER).
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(LIBXML2 REQUIRED IMPORTED_TARGET libxml-2.0)
find_package(Threads REQUIRED)

# libslurm-dev ships spank.h but no pkg-config file.
find_path(SLURM_INCLUDE_DIR slurm/spank.h)
if(NOT SLURM_INCLUDE_DIR)
  message(FATAL_ERROR "gpudirect-slurm: no slurm/spank.h: install Slurm's headers (Debian and Ubuntu: libslurm-dev; "
                      "a source-built Slurm: its include dir), or give -DSLURM_INCLUDE_DIR=<dir holding slurm/spank.h>")
endif()

# The plugin loads libxml2 only when it reads a topology file (plugin/libxml2_on_demand.cpp), by the
# soname of the library found here: libxml2.so.2 up to 2.13, libxml2.so.16 from 2.14. Read from the
# library's ELF header; -DGPUDIRECT_LIBXML2_SONAME=... overrides.
function(gpudirect_library_soname out library)
  set(soname "")
  find_program(GPUDIRECT_OBJDUMP NAMES ${CMAKE_OBJDUMP} objdump)
  if(GPUDIRECT_OBJDUMP AND EXISTS "${library}")
    execute_process(COMMAND ${GPUDIRECT_OBJDUMP} -p "${library}" OUTPUT_VARIABLE headers ERROR_QUIET RESULT_VARIABLE failed)
    if(NOT failed AND headers MATCHES "SONAME[ \t]+([^ \t\r\n]+)")
      set(soname "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${soname}" PARENT_SCOPE)
endfunction()
# Read at every configure (a libxml2 upgrade changes it); only a value given with -D is kept.
set(GPUDIRECT_LIBXML2_SONAME "" CACHE STRING "soname the plugin loads libxml2 by (empty: read from the library pkg-config finds)")
if(NOT GPUDIRECT_LIBXML2_SONAME)
  set(libxml2_file "")
  foreach(library ${LIBXML2_LINK_LIBRARIES})
    if(library MATCHES "libxml2")
      set(libxml2_file "${library}")
    endif()
  endforeach()
  gpudirect_library_soname(libxml2_soname "${libxml2_file}")
  if(NOT libxml2_soname)
    message(FATAL_ERROR "gpudirect-slurm: cannot read the soname of libxml2 ('${libxml2_file}', from pkg-config "
                        "libxml-2.0) with objdump (binutils): install binutils, or give -DGPUDIRECT_LIBXML2_SONAME=libxml2.so.N")
  endif()
  set(GPUDIRECT_LIBXML2_SONAME "${libxml2_soname}")  # a normal variable over the empty cache entry
endif()
message(STATUS "gpudirect-slurm: libxml2 ${LIBXML2_VERSION}, loaded on demand as ${GPUDIRECT_LIBXML2_SONAME}")

if(NOT GPUDIRECT_BUILD_LAUNCHER)
  message(STATUS "gpudirect-slurm: NOT building gpudirect-launch (GPUDIRECT_BUILD_LAUNCHER=OFF): no bench, doctor, "
                 "train, health or exec; building core and spank_gpudirect.so only")
  return()
endif()
# The launcher: CMake 3.25 (the C++20 CUDA setup below; the oldest CMake it is built with), GCC 11, libfabric,
# nlohmann-json, CLI11, OpenBLAS, OpenMP and libcrypto. Missing ones are named together, with the way out.
set(missing "")
if(CMAKE_VERSION VERSION_LESS 3.25)
  list(APPEND missing "CMake >= 3.25 (this is ${CMAKE_VERSION})")
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 11)
  list(APPEND missing "GCC >= 11 (this is ${CMAKE_CXX_COMPILER_VERSION}: no using enum, std::bit_cast or to_chars for double)")
endif()
pkg_check_modules(LIBFABRIC IMPORTED_TARGET libfabric)
if(NOT LIBFABRIC_FOUND)
  list(APPEND missing "libfabric (libfabric-dev)")
endif()
find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  list(APPEND missing "nlohmann-json 3 (nlohmann-json3-dev)")
endif()
find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  list(APPEND missing "CLI11 (libcli11-dev)")
endif()
# CPU training: OpenBLAS (Debian libopenblas-dev) for the matrix products, OpenMP for the rest.
pkg_check_modules(OPENBLAS IMPORTED_TARGET openblas)
if(NOT OPENBLAS_FOUND)
  list(APPEND missing "OpenBLAS (libopenblas-dev)")
endif()
find_package(OpenMP COMPONENTS CXX)
if(NOT OpenMP_CXX_FOUND)
  list(APPEND missing "OpenMP for C++ (GCC's libgomp)")
endif()
# The rendezvous handshake: HMAC-SHA256 and a constant-time compare (runtime/bootstrap/rendezvous_auth.cpp).
find_package(OpenSSL COMPONENTS Crypto)
if(NOT OpenSSL_FOUND)
  list(APPEND missing "OpenSSL's libcrypto (libssl-dev)")
endif()
if(missing)
  list(JOIN missing ", " missing_text)
  message(FATAL_ERROR "gpudirect-slurm: gpudirect-launch needs ${missing_text}: install them (Debian packages in parentheses; scripts/install-deps.sh), "
                      "or configure with -DGPUDIRECT_BUILD_LAUNCHER=OFF to build the plugin alone")
endif()

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

