# The library search path of what we install (gpudirect-launch, spank_gpudirect.so): root runs them
# (check-node as a prolog, health, slurmstepd loading the plugin), often in a directory a job user
# can write to, so their RUNPATH may name only absolute directories.
#
# Why a property is needed: for a target that has an install rule, CMake pads the build tree's RPATH
# with a trailing ':' (so that its install step can rewrite the string in place, and so that the
# linker cannot share the string with a symbol name). The loader reads that empty entry as the
# current directory, searched before its cache: with the build RPATH of gpudirect-launch
# (/usr/local/cuda/lib:/usr/lib/<multiarch>/openblas-pthread:, the directories of NCCL and
# OpenBLAS), a libhwloc.so.15 in the caller's directory ran as root, and scripts/install-node.sh
# copied that binary as it was. BUILD_WITH_INSTALL_RPATH links the build tree's binary with the
# install RPATH directly: no padding, nothing to rewrite, the same search path built and installed.
# The install RPATH is empty (Debian's rule: no RUNPATH in a package), so every library comes from
# the loader's cache and default directories; a library outside them (a CUDA installed without an
# /etc/ld.so.conf.d entry) is reported at configure time, below.

# gpudirect_installed_binary(<target>): call for every executable or shared object we install.
function(gpudirect_installed_binary target)
  get_target_property(install_rpath ${target} INSTALL_RPATH)
  if(install_rpath)
    # -DCMAKE_INSTALL_RPATH=...: absolute directories, or $ORIGIN-based ones, only.
    foreach(entry IN LISTS install_rpath)
      if(NOT entry MATCHES "^/" AND NOT entry MATCHES "^\\$ORIGIN(/|$)")
        message(FATAL_ERROR "gpudirect-slurm: INSTALL_RPATH of ${target} ('${install_rpath}') has the entry '${entry}', "
                            "which the loader resolves against the current directory (root runs ${target} in users' "
                            "directories): give absolute directories only")
      endif()
    endforeach()
  endif()
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON)
  # Every relocation resolved at start and the GOT read-only afterwards (full RELRO), as Debian's
  # hardening flags give packaged programs: root runs these in other users' directories.
  target_link_options(${target} PRIVATE -Wl,-z,relro -Wl,-z,now)
endfunction()

# gpudirect_check_loader_finds(<what> <library files>...): a warning for each library the loader
# finds neither in its cache (ldconfig -p) nor in its default directories, as the binaries carry
# no RUNPATH to point at it.
function(gpudirect_check_loader_finds what)
  find_program(GPUDIRECT_LDCONFIG ldconfig PATHS /sbin /usr/sbin)
  if(NOT GPUDIRECT_LDCONFIG OR CMAKE_CROSSCOMPILING)
    return()
  endif()
  execute_process(COMMAND ${GPUDIRECT_LDCONFIG} -p OUTPUT_VARIABLE cache ERROR_QUIET RESULT_VARIABLE failed)
  if(failed)
    return()
  endif()
  foreach(library IN LISTS ARGN)
    if(NOT library MATCHES "^/" OR NOT EXISTS "${library}" OR library MATCHES "\\.a$")
      continue()
    endif()
    gpudirect_library_soname(soname "${library}")  # cmake/Dependencies.cmake
    if(soname)
      string(REPLACE "+" "\\+" soname_pattern "${soname}")
      string(REPLACE "." "\\." soname_pattern "${soname_pattern}")
      if(NOT cache MATCHES "[\t ]${soname_pattern} [^\n]*=> ")
        get_filename_component(dir "${library}" DIRECTORY)
        message(WARNING "gpudirect-slurm: ${what} needs ${soname} from ${dir}, which the loader does not find by itself "
                        "(not in ldconfig -p), and installed binaries carry no RUNPATH: add ${dir} to a file in "
                        "/etc/ld.so.conf.d/ and run ldconfig, or the built and installed ${what} will not start")
      endif()
    endif()
  endforeach()
endfunction()
