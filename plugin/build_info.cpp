// What this spank_gpudirect.so was built for, as one string in the file: scripts/install-node.sh
// reads it (grep -a) to refuse a plugin built for another Slurm release and to install the profiles
// where the plugin looks for them. Kept private by the version script, kept in the file by `used`.
// slurm.h and spank.h bring SLURM_VERSION_NUMBER in every release (slurm_version.h from 21.08, slurm.h before).
#include "spank.hpp"

static_assert(GPUDIRECT_SLURM_VERSION_NUMBER == SLURM_VERSION_NUMBER,
              "the Slurm version CMake read differs from the header the plugin compiles against");

extern "C" [[gnu::used]] const char gpudirect_build_info[] =
    "gpudirect-build-info: version=" GPUDIRECT_VERSION " slurm=" GPUDIRECT_SLURM_VERSION " prefix=" GPUDIRECT_BUILD_PREFIX
    " profile_dir=" GPUDIRECT_BUILD_PROFILE_DIR " ;";
