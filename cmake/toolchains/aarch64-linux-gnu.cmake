# Cross-compiling for arm64 (aarch64) Linux on a Debian x86-64 host with Debian's cross toolchain
# (g++-aarch64-linux-gnu) and the arm64 libraries installed through multiarch
# (dpkg --add-architecture arm64; libhwloc-dev:arm64 ...). scripts/cross-arm64.sh sets it all up.
#   cmake --preset arm64-cross     (or -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake)
# Headers come from /usr/include (shared by every architecture), libraries from
# /usr/lib/aarch64-linux-gnu (CMAKE_LIBRARY_ARCHITECTURE), pkg-config files from the arm64 directory
# only, so nothing of the host's x86-64 libraries can be picked up. Programs built for the target run
# under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR), which ctest uses for the tests.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The soname probe in cmake/Dependencies.cmake and CPack's strip need the target's binutils.
set(CMAKE_OBJDUMP aarch64-linux-gnu-objdump CACHE FILEPATH "objdump for arm64")
set(CMAKE_STRIP aarch64-linux-gnu-strip CACHE FILEPATH "strip for arm64")

# pkg-config: the arm64 .pc files and the architecture-independent ones, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Libraries of the target only; headers and CMake package files (Catch2, CLI11, nlohmann-json are
# header-only) from the usual places.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# GNUInstallDirs gives Debian's multiarch libdir (lib/<triplet>) only when not cross-compiling: the
# plugin belongs in /usr/lib/aarch64-linux-gnu/slurm-wlm, where arm64 Slurm looks (found in the
# first arm64 .deb, which put it in /usr/lib/slurm-wlm).
set(CMAKE_INSTALL_LIBDIR lib/aarch64-linux-gnu CACHE PATH "Object code libraries (Debian multiarch)")

# Debian's .deb architecture for CPack (it would otherwise ask the host's dpkg: amd64).
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)

# qemu-user runs the target's programs; -L points it at the arm64 loader and libc of the cross
# toolchain (libc6-arm64-cross), and the multiarch libraries are found under /usr/lib/aarch64-linux-gnu.
# OPENBLAS_NUM_THREADS=1: under qemu-user (Debian 12's qemu 7.2) OpenBLAS's thread pool, started when
# the library loads, spins forever (unit_tests --list-test-names-only never returned in 3 min; with
# one OpenBLAS thread it lists 418 cases in 0.2 s). Measured under emulation only, not on arm64 hardware.
find_program(GPUDIRECT_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(GPUDIRECT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${GPUDIRECT_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu;-E;OPENBLAS_NUM_THREADS=1")
endif()
