// Calls spank_gpudirect.so's hooks the way Slurm does, many times in one process, with stand-ins
// for the spank_* and slurm_* functions slurmstepd provides: the plugin is dlopen()ed, init runs,
// the option callback runs twice (as in slurmstepd), init_post_opt and user_init once, task_init
// once per task; then
// dlclose() and again, ROUNDS times. Run under valgrind --leak-check=full (release build) or with
// LeakSanitizer (ASan build): any leak or memory error fails the test.
//   plugin_hooks PLUGIN.so ROUNDS TOPOLOGY_XML PROFILE_DIR
#include <dlfcn.h>
#include <net/if.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

namespace {

// Slurm 22.05 defines the ESPANK_* codes as plain int macros.
spank_err_t code(int value) { return static_cast<spank_err_t>(value); }

std::map<std::string, std::string> task_env;
spank_option* registered = nullptr;
spank_context_t current_context = S_CTX_REMOTE;
std::uint32_t local_task = 0;
int errors_logged = 0;

}  // namespace

// The stand-ins, exported from this executable (ENABLE_EXPORTS) for the plugin to bind to.
extern "C" {

// The network namespace of an A3 Mega node (the fixture's interface names): the plugin checks the
// names its topology gives against the node's. Interposed over libc's for the plugin, which binds
// to this executable's symbols first; allocated per call, as libc does, so leaks would show.
struct if_nameindex* if_nameindex(void) {
  static const char* const names[] = {"lo",      "enp0s12",  "enp6s0",   "enp7s0",   "enp13s0",
                                      "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"};
  constexpr std::size_t count = sizeof names / sizeof names[0];
  auto* list = static_cast<struct if_nameindex*>(std::calloc(count + 1, sizeof(struct if_nameindex)));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    list[i].if_index = static_cast<unsigned>(i + 1);
    list[i].if_name = strdup(names[i]);
  }
  return list;
}

void if_freenameindex(struct if_nameindex* list) {
  for (struct if_nameindex* i = list; i && i->if_index != 0; ++i) std::free(i->if_name);
  std::free(list);
}

spank_context_t spank_context(void) { return current_context; }

spank_err_t spank_option_register(spank_t, struct spank_option* option) {
  registered = option;
  return code(ESPANK_SUCCESS);
}

spank_err_t spank_getenv(spank_t, const char* name, char* buffer, int size) {
  const auto it = task_env.find(name);
  if (it == task_env.end()) return code(ESPANK_ENV_NOEXIST);
  if (static_cast<int>(it->second.size()) >= size) return code(ESPANK_NOSPACE);
  std::memcpy(buffer, it->second.c_str(), it->second.size() + 1);
  return code(ESPANK_SUCCESS);
}

spank_err_t spank_setenv(spank_t, const char* name, const char* value, int overwrite) {
  if (overwrite || !task_env.count(name)) task_env[name] = value;
  return code(ESPANK_SUCCESS);
}

spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  va_list args;
  va_start(args, item);
  spank_err_t result = code(ESPANK_SUCCESS);
  switch (item) {
    case S_JOB_STEPID:
      *va_arg(args, std::uint32_t*) = 0;
      break;
    case S_TASK_ID:
      *va_arg(args, std::uint32_t*) = local_task;
      break;
    case S_TASK_GLOBAL_ID:
      *va_arg(args, std::uint32_t*) = local_task;
      break;
    case S_JOB_LOCAL_TASK_COUNT:
      *va_arg(args, std::uint32_t*) = 8;
      break;
    default:
      result = code(ESPANK_NOT_AVAIL);
  }
  va_end(args);
  return result;
}

void slurm_error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  ++errors_logged;
}

void slurm_verbose(const char*, ...) {}

void slurm_spank_log(const char*, ...) {}

}  // extern "C"

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
  auto* const spank = reinterpret_cast<spank_t>(&task_env);  // never dereferenced by the plugin

  for (int round = 0; round < rounds; ++round) {
    void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) return fail(std::string("cannot load the plugin: ") + dlerror());
    registered = nullptr;
    current_context = S_CTX_REMOTE;
    if (hook(plugin, "slurm_spank_init")(spank, static_cast<int>(args.size()), args.data()) != 0) return fail("slurm_spank_init failed");
    if (!registered) return fail("slurm_spank_init registered no option");
    // slurmstepd may call the callback twice; a bad value in between is refused and changes nothing.
    for (const char* value : {"tcpxo", "not-a-mode\n", "tcpxo"})
      if ((registered->cb(registered->val, value, 1) == 0) != (value[0] == 't')) return fail("option callback");
    if (hook(plugin, "slurm_spank_init_post_opt")(spank, 0, nullptr) != 0) return fail("slurm_spank_init_post_opt failed");
    if (hook(plugin, "slurm_spank_user_init")(spank, 0, nullptr) != 0) return fail("slurm_spank_user_init failed");
    for (std::uint32_t task = 0; task < 8; ++task) {
      local_task = task;
      task_env = {{"SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7"},
                  {"CUDA_VISIBLE_DEVICES", std::to_string(task)},
                  {"SLURM_JOB_ID", "42"},
                  {"SLURM_NODEID", "0"},
                  {"SLURM_STEP_TASKS_PER_NODE", "8"}};
      if (hook(plugin, "slurm_spank_task_init")(spank, 0, nullptr) != 0) return fail("slurm_spank_task_init failed");
      if (task_env.count("NCCL_FASTRAK_IFNAME") == 0) return fail("task_init set no TCPXO environment");
    }
    if (dlclose(plugin) != 0) return fail(std::string("dlclose: ") + dlerror());
  }
  std::filesystem::remove_all(lib_dir);
  if (errors_logged != rounds) return fail("expected exactly one logged error per round (the refused option value)");
  std::printf("plugin_hooks: %d rounds of init, option x3, init_post_opt, user_init, 8 x task_init: ok\n", rounds);
  return 0;
}
