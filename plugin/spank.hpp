// spank.h declares the hooks outside its own extern "C": wrap it once here.
#pragma once

extern "C" {
#include <slurm/slurm.h>  // SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT
#include <slurm/spank.h>
}
