// Reads the spank_gpudirect.so line of a plugstack.conf, so the doctor uses the plugin's settings.
#pragma once

#include "gpudirect/plugin_config.hpp"

#include <string>

namespace gpudirect::launcher {

// Throws std::runtime_error when the file has no spank_gpudirect.so line or its arguments are bad.
PluginConfig read_plugstack_config(const std::string& path);

}  // namespace gpudirect::launcher
