// Reads the spank_gpudirect.so line of a plugstack.conf, so doctor and exec use the plugin's settings.
#pragma once

#include "gpudirect/plugin_config.hpp"

#include <optional>
#include <string>

namespace gpudirect::launcher {

// Throws std::runtime_error when the file has no spank_gpudirect.so line or its arguments are bad.
PluginConfig read_plugstack_config(const std::string& path);

// Finds the plugstack file Slurm uses: PlugStackConfig= in $SLURM_CONF (else
// /etc/slurm/slurm.conf), default /etc/slurm/plugstack.conf, following `include` globs.
// Returns the file holding the spank_gpudirect.so line, if any.
std::optional<std::string> find_plugstack_file();

}  // namespace gpudirect::launcher
