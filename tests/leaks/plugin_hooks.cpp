// Calls spank_gpudirect.so's hooks the way Slurm does, many times in one process, with the stand-ins
// of tests/spank_standin for the spank_* and slurm_* functions slurmstepd provides: the plugin is dlopen()ed, init runs,
// the option callback runs twice (as in slurmstepd), init_post_opt and user_init once, task_init
// once per task; then
// dlclose() and again, ROUNDS times. Run under valgrind --leak-check=full (release build) or with
// LeakSanitizer (ASan build): any leak or memory error fails the test.
//   plugin_hooks PLUGIN.so ROUNDS TOPOLOGY_XML PROFILE_DIR
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "spank_standin.hpp"

using spank_standin::standin;

namespace {

using Hook = int (*)(spank_t, int, char**);

Hook hook(void* plugin, const char* name) {
  auto* symbol = reinterpret_cast<Hook>(dlsym(plugin, name));
  if (!symbol) {
    std::fprintf(stderr, "plugin_hooks: %s is missing from the plugin\n", name);
    std::exit(2);
  }
  return symbol;
}

int fail(const std::string& what) {
  for (const std::string& error : standin().errors) std::fprintf(stderr, "plugin_hooks: the plugin logged: %s\n", error.c_str());
  std::fprintf(stderr, "plugin_hooks: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return fail("usage: plugin_hooks PLUGIN.so ROUNDS TOPOLOGY_XML PROFILE_DIR");
  const int rounds = std::atoi(argv[2]);
  // A TCPXO lib dir: the plugin checks that the NCCL net plugin is there.
  const auto lib_dir = std::filesystem::temp_directory_path() / ("gpudirect-plugin-hooks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(lib_dir);
  std::ofstream(lib_dir / "libnccl-net.so").put('\0');
  // The topology cache in a directory of its own: the first round writes it, the others read it.
  std::vector<std::string> words{"default=off",
                                 std::string("topology=") + argv[3],
                                 std::string("profile_dir=") + argv[4],
                                 "lib_dir=" + lib_dir.string(),
                                 "topology_cache=" + (lib_dir / "cache").string(),
                                 "verbose=on"};
  std::vector<char*> args;
  for (auto& word : words) args.push_back(word.data());
  spank_t const spank = spank_standin::handle();

  for (int round = 0; round < rounds; ++round) {
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) return fail(std::string("cannot load the plugin: ") + dlerror());
    standin().registered = nullptr;
    standin().context = S_CTX_REMOTE;
    if (hook(plugin, "slurm_spank_init")(spank, static_cast<int>(args.size()), args.data()) != 0) return fail("slurm_spank_init failed");
    spank_option* const registered = standin().registered;
    if (!registered) return fail("slurm_spank_init registered no option");
    // slurmstepd may call the callback twice; a bad value in between is refused and changes nothing.
    for (const char* value : {"tcpxo", "not-a-mode\n", "tcpxo"})
      if ((registered->cb(registered->val, value, 1) == 0) != (value[0] == 't')) return fail("option callback");
    if (hook(plugin, "slurm_spank_init_post_opt")(spank, 0, nullptr) != 0) return fail("slurm_spank_init_post_opt failed");
    if (hook(plugin, "slurm_spank_user_init")(spank, 0, nullptr) != 0) return fail("slurm_spank_user_init failed");
    for (std::uint32_t task = 0; task < 8; ++task) {
      standin().local_task_id = standin().global_task_id = task;
      standin().local_task_count = 8;
      standin().env = {{"SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7"},
                       {"CUDA_VISIBLE_DEVICES", std::to_string(task)},
                       {"SLURM_JOB_ID", "42"},
                       {"SLURM_NODEID", "0"},
                       {"SLURM_STEP_TASKS_PER_NODE", "8"}};
      if (hook(plugin, "slurm_spank_task_init")(spank, 0, nullptr) != 0) return fail("slurm_spank_task_init failed");
      if (standin().env.count("NCCL_FASTRAK_IFNAME") == 0) return fail("task_init set no TCPXO environment");
    }
    if (dlclose(plugin) != 0) return fail(std::string("dlclose: ") + dlerror());
  }
  std::filesystem::remove_all(lib_dir);
  if (standin().errors.size() != static_cast<std::size_t>(rounds))
    return fail("expected exactly one logged error per round (the refused option value)");
  std::printf("plugin_hooks: %d rounds of init, option x3, init_post_opt, user_init, 8 x task_init: ok\n", rounds);
  return 0;
}
