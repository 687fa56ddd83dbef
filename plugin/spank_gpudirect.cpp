// spank_gpudirect.so: the symbols Slurm needs and a dispatch from each SPANK hook to its own file.
// No exception and no crash may escape into slurmstepd: every hook goes through guarded().
#include "plugin_state.hpp"

#include <exception>

extern "C" {
// SPANK_PLUGIN() would give these internal linkage in C++; Slurm then refuses the plugin.
extern const char plugin_name[] = "gpudirect";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

#if GPUDIRECT_STATIC_LIBSTDCXX
// The plugin carries its own libstdc++ (plugin/CMakeLists.txt), whose exception emergency pool
// (about 72 KB) would be lost at every dlclose. __freeres is the function libstdc++ provides for
// valgrind to release it; it has no header.
namespace __gnu_cxx {
void __freeres();
}
namespace {
struct ReleaseLibstdcxxPoolAtUnload {
  ~ReleaseLibstdcxxPoolAtUnload() { __gnu_cxx::__freeres(); }
} release_libstdcxx_pool_at_unload;
}  // namespace
#endif

namespace gpudirect::plugin {

PluginState& state() {
  static PluginState instance;
  return instance;
}

void log_error(const std::string& message) { slurm_error("gpudirect: %s", message.c_str()); }

namespace {

template <typename Body>
int guarded(const char* hook, Body body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    log_error(std::string(hook) + ": " + e.what());
  } catch (...) {
    log_error(std::string(hook) + ": unexpected internal error");
  }
  return -1;
}

}  // namespace
}  // namespace gpudirect::plugin

using gpudirect::plugin::guarded;

extern "C" {

int slurm_spank_init(spank_t spank, int argc, char** argv) {
  return guarded("init", [&] { return gpudirect::plugin::on_init(spank, argc, argv); });
}

int slurm_spank_init_post_opt(spank_t spank, int, char**) {
  return guarded("init_post_opt", [&] {
    return spank_context() == S_CTX_LOCAL ? gpudirect::plugin::on_srun_post_opt() : gpudirect::plugin::on_user_init(spank);
  });
}

int slurm_spank_user_init(spank_t spank, int, char**) {
  return guarded("user_init", [&] { return gpudirect::plugin::on_user_init(spank); });
}

int slurm_spank_task_init(spank_t spank, int, char**) {
  return guarded("task_init", [&] { return gpudirect::plugin::on_task_init(spank); });
}

}  // extern "C"
