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

# qemu-user runs the target's programs with the arm64 loader and libc of multiarch (libc6:arm64, which
# the arm64 libraries pull in): the programs' interpreter /lib/ld-linux-aarch64.so.1 and every library
# from /lib/aarch64-linux-gnu, one glibc throughout. Not `-L /usr/aarch64-linux-gnu` (the cross
# toolchain's libc6-arm64-cross): its loader then finds libc.so.6 through the host's ld.so.cache in the
# multiarch directory, another build of glibc, and the mixed pair hangs in the first pthread_create
# (seen with Debian 12's qemu 7.2: a two-line std::thread program spun until killed, as did every test
# that starts a thread and OpenBLAS's thread pool; with the multiarch loader all of them run).
find_program(GPUDIRECT_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(GPUDIRECT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${GPUDIRECT_QEMU_AARCH64}")
endif()
