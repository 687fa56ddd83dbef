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

set(GPUDIRECT_HAVE_NCCL OFF)
if(GPUDIRECT_WITH_NCCL)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
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
message(STATUS "gpudirect-slurm: NCCL backend ${GPUDIRECT_HAVE_NCCL}")

# CPU training: OpenBLAS (Debian libopenblas-dev) for the matrix products, OpenMP for the rest.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
find_package(OpenMP REQUIRED COMPONENTS CXX)
