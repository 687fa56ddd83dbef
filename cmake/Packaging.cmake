# The Debian package (`cmake --build --preset release --target package`) and the facts about the
# Slurm we build against, which the package's Depends and scripts/install-node.sh rely on.
#
# Included before GNUInstallDirs: a Slurm plugin lives next to the system's Slurm, so the default
# prefix is /usr (Debian's plugin dir /usr/lib/<multiarch>/slurm-wlm, profiles in
# /usr/share/gpudirect-slurm/profiles, which the plugin compiles in). -DCMAKE_INSTALL_PREFIX=...
# still wins.
if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX /usr CACHE PATH "Install prefix (/usr: next to Debian's Slurm)" FORCE)
endif()

# gpudirect_slurm_version(<out> <out_number>): "22.05.8" and "0x160508", from the headers next to the
# spank.h we compile against (SLURM_VERSION_NUMBER, what Slurm checks): slurm_version.h from 21.08,
# slurm.h before (20.11 has no slurm_version.h).
function(gpudirect_slurm_version out out_number)
  set(line "")
  foreach(name slurm_version.h slurm.h)
    set(header "${SLURM_INCLUDE_DIR}/slurm/${name}")
    if(EXISTS "${header}")
      file(STRINGS "${header}" line REGEX "^#define[ \t]+SLURM_VERSION_NUMBER[ \t]+0x[0-9a-fA-F]+")
      if(line)
        break()
      endif()
    endif()
  endforeach()
  if(NOT line MATCHES "(0x[0-9a-fA-F]+)")
    message(FATAL_ERROR "gpudirect-slurm: no SLURM_VERSION_NUMBER in ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h or slurm.h: "
                        "install Slurm's complete headers (Debian and Ubuntu: libslurm-dev; scripts/install-deps.sh)")
  endif()
  set(number ${CMAKE_MATCH_1})
  math(EXPR major "(${number} >> 16) & 255")
  math(EXPR minor "(${number} >> 8) & 255")
  math(EXPR micro "${number} & 255")
  if(minor LESS 10)
    set(minor "0${minor}")
  endif()
  set(${out} "${major}.${minor}.${micro}" PARENT_SCOPE)
  set(${out_number} "${number}" PARENT_SCOPE)
endfunction()

# Called at the end of the top-level CMakeLists.txt, when the Slurm headers have been found.
function(gpudirect_configure_package)
  gpudirect_slurm_version(slurm_version slurm_number)
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" slurm_series "${slurm_version}")
  # Slurm loads a plugin only when its major.minor is its own: depend on exactly that release
  # series, from the patch release we compiled against.
  math(EXPR next_minor "((${slurm_number} >> 8) & 255) + 1")
  math(EXPR major "(${slurm_number} >> 16) & 255")
  if(next_minor LESS 10)
    set(next_minor "0${next_minor}")
  endif()

  # The RxDM prolog/epilog (scripts/rxdm/), where scripts/install-node.sh puts it too.
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/rxdm/gpudirect-rxdm DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/gpudirect-slurm)

  # The plugstack line the package ships: default=off, so installing changes nothing until an
  # admin opts in (edits this conffile).
  set(GPUDIRECT_PACKAGED_PLUGIN "${CMAKE_INSTALL_FULL_LIBDIR}/slurm-wlm/spank_gpudirect.so")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/packaging/gpudirect.conf.in
                 ${PROJECT_BINARY_DIR}/packaging/gpudirect.conf @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/packaging/gpudirect.conf DESTINATION /etc/slurm/plugstack.conf.d
          COMPONENT debian EXCLUDE_FROM_ALL)
  # The enroot hook (docs/containers.md), in enroot's system hooks dir; a conffile, as everything in
  # /etc. It runs /usr/bin/gpudirect-launch, which is where this package puts it.
  if(GPUDIRECT_BUILD_LAUNCHER)
    install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/enroot/hooks.d/50-gpudirect.sh DESTINATION /etc/enroot/hooks.d
            COMPONENT debian EXCLUDE_FROM_ALL)
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/packaging/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/gpudirect-slurm
          COMPONENT debian EXCLUDE_FROM_ALL)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/packaging/changelog.Debian.in
                 ${PROJECT_BINARY_DIR}/packaging/changelog.Debian @ONLY)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
    COMMAND gzip -9 -n -c ${PROJECT_BINARY_DIR}/packaging/changelog.Debian > ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
    DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog.Debian VERBATIM)
  add_custom_target(gpudirect_debian_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
  install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/gpudirect-slurm
          COMPONENT debian EXCLUDE_FROM_ALL)
  # The one lintian tag that does not apply to a package built outside Debian (the file says why).
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/packaging/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
          RENAME gpudirect-slurm COMPONENT debian EXCLUDE_FROM_ALL)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/packaging/conffiles.in ${PROJECT_BINARY_DIR}/packaging/control/conffiles @ONLY)
  # file(COPY), not configure_file's FILE_PERMISSIONS (CMake 3.20); reconfigure when postrm changes.
  file(COPY ${PROJECT_SOURCE_DIR}/cmake/packaging/postrm DESTINATION ${PROJECT_BINARY_DIR}/packaging/control
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/packaging/postrm)

  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME gpudirect-slurm)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_PACKAGE_CONTACT "gpudirect-slurm maintainers <gpudirect-slurm@example.org>")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Slurm SPANK plugin for GPUDirect NIC/CPU binding (TCPXO, TCPX, RDMA)")
  set(CPACK_PACKAGE_DESCRIPTION
      "spank_gpudirect.so gives every task of srun --gpu-direct the CPUs and NICs\nlocal to its GPUs and the network environment of its mode (A3 Mega TCPXO,\nA3 High TCPX, RDMA). gpudirect-launch runs collective benchmarks, the node\ndoctor and binding checks. Built for Slurm ${slurm_series}; the shipped\nplugstack line is default=off.")
  set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION admin)
  set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/gpudirect-slurm/gpudirect-slurm")
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # hwloc, libfabric, libxml2, libstdc++ from the binaries
  # libhwloc-plugins holds hwloc's PCI component: without it a live node shows no GPUs or NICs.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libhwloc-plugins, slurm-wlm-basic-plugins (>= ${slurm_version}), slurm-wlm-basic-plugins (<< ${major}.${next_minor}~)")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
      "${PROJECT_BINARY_DIR}/packaging/control/conffiles;${PROJECT_BINARY_DIR}/packaging/control/postrm")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
  set(CPACK_STRIP_FILES ON)
  # Everything `cmake --install` installs, plus the package-only files (conffile, copyright),
  # which `cmake --install` leaves alone (EXCLUDE_FROM_ALL): it must not overwrite an admin's line.
  set(CPACK_INSTALL_CMAKE_PROJECTS
      "${PROJECT_BINARY_DIR};gpudirect-slurm;ALL;/;${PROJECT_BINARY_DIR};gpudirect-slurm;debian;/")
  if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    # The plugin compiles its profile dir in; a package must install where it looks.
    set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/packaging/refuse-prefix.cmake)
    set(CPACK_GPUDIRECT_PREFIX "${CMAKE_INSTALL_PREFIX}")
  endif()
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  include(CPack)
  message(STATUS "gpudirect-slurm: Debian package for Slurm ${slurm_version} (target package)")
endfunction()
