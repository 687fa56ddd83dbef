# CPack pre-build script: the plugin compiles in where its profiles live, so a Debian package
# (which installs under /usr) must come from a build configured with the /usr prefix.
message(FATAL_ERROR "gpudirect-slurm: this build was configured with CMAKE_INSTALL_PREFIX=${CPACK_GPUDIRECT_PREFIX}; "
  "the Debian package installs under /usr and the plugin would look for its profiles elsewhere. "
  "Reconfigure: cmake --preset release -DCMAKE_INSTALL_PREFIX=/usr, then build the package target again.")
