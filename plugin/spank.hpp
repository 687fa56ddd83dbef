// spank.h declares the hooks outside its own extern "C": wrap it once here.
#pragma once

extern "C" {
#include <slurm/spank.h>
}
