# Manual pages of the commands we install in /usr/bin (gpudirect-launch and one page per subcommand,
# gpudirect-launch-bench(1) ...), made by help2man from their --help at build time, so they say
# what the binary says. Installed into man1 (component man: the .deb and `cmake --install`;
# scripts/install-node.sh installs no documentation). Without help2man (scripts/install-deps.sh
# installs it) or when cross-compiling, no pages: configure says so, and the package test's lintian
# check (no-manual-page) fails.
function(gpudirect_man_pages)
  set(out_dir ${PROJECT_BINARY_DIR}/man/man1)
  file(MAKE_DIRECTORY ${out_dir})  # install(DIRECTORY) below needs it, pages or not
  install(DIRECTORY ${out_dir}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT man FILES_MATCHING PATTERN "*.1.gz")
  find_program(GPUDIRECT_HELP2MAN help2man)
  find_program(GPUDIRECT_GZIP gzip)
  if(CMAKE_CROSSCOMPILING)
    message(STATUS "gpudirect-slurm: no manual pages (cross-compiling: help2man cannot run gpudirect-launch --help)")
    return()
  elseif(NOT GPUDIRECT_HELP2MAN OR NOT GPUDIRECT_GZIP)
    message(STATUS "gpudirect-slurm: no manual pages (no help2man or gzip: scripts/install-deps.sh installs them)")
    return()
  endif()
  set(stamp ${PROJECT_BINARY_DIR}/man/pages.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DLAUNCH=$<TARGET_FILE:gpudirect-launch> -DOUT_DIR=${out_dir} -DWORK_DIR=${PROJECT_BINARY_DIR}/man/work
            -DVERSION=${PROJECT_VERSION} -DHELP2MAN=${GPUDIRECT_HELP2MAN} -DGZIP=${GPUDIRECT_GZIP} -DSTAMP=${stamp}
            -P ${PROJECT_SOURCE_DIR}/cmake/man/generate_man_pages.cmake
    DEPENDS gpudirect-launch ${PROJECT_SOURCE_DIR}/cmake/man/generate_man_pages.cmake
    COMMENT "Manual pages of gpudirect-launch (help2man)" VERBATIM)
  add_custom_target(gpudirect_man_pages ALL DEPENDS ${stamp})
endfunction()
