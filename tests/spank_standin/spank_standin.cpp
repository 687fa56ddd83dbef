#include "spank_standin.hpp"

#include <net/if.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spank_standin {
namespace {

// Slurm 22.05 defines the ESPANK_* codes as plain int macros.
spank_err_t code(int value) { return static_cast<spank_err_t>(value); }

std::string formatted(const char* format, va_list args) {
  char buffer[8192];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  return buffer;
}

}  // namespace

Standin& standin() {
  static Standin instance;
  return instance;
}

spank_t handle() { return reinterpret_cast<spank_t>(&standin()); }

}  // namespace spank_standin

using spank_standin::code;
using spank_standin::formatted;
using spank_standin::standin;

extern "C" {

// Interposed over libc's for the plugin, which binds to this executable's symbols first; allocated
// per call, as libc does, so that a leak in the caller would show.
struct if_nameindex* if_nameindex(void) {
  const auto& names = standin().interfaces;
  auto* list = static_cast<struct if_nameindex*>(std::calloc(names.size() + 1, sizeof(struct if_nameindex)));
  if (!list) return nullptr;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list[i].if_index = static_cast<unsigned>(i + 1);
    list[i].if_name = strdup(names[i].c_str());
  }
  return list;
}

void if_freenameindex(struct if_nameindex* list) {
  for (struct if_nameindex* i = list; i && i->if_index != 0; ++i) std::free(i->if_name);
  std::free(list);
}

spank_context_t spank_context(void) { return standin().context; }

spank_err_t spank_option_register(spank_t, struct spank_option* option) {
  standin().registered = option;
  return code(ESPANK_SUCCESS);
}

spank_err_t spank_getenv(spank_t, const char* name, char* buffer, int size) {
  const auto& env = standin().env;
  const auto it = env.find(name);
  if (it == env.end()) return code(ESPANK_ENV_NOEXIST);
  if (static_cast<int>(it->second.size()) >= size) return code(ESPANK_NOSPACE);
  std::memcpy(buffer, it->second.c_str(), it->second.size() + 1);
  return code(ESPANK_SUCCESS);
}

spank_err_t spank_setenv(spank_t, const char* name, const char* value, int overwrite) {
  auto& env = standin().env;
  if (overwrite || !env.count(name)) env[name] = value;
  return code(ESPANK_SUCCESS);
}

spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  const auto& s = standin();
  va_list args;
  va_start(args, item);
  spank_err_t result = code(ESPANK_SUCCESS);
  switch (item) {
    case S_JOB_STEPID:
      *va_arg(args, std::uint32_t*) = s.step_id;
      break;
    case S_TASK_ID:
      *va_arg(args, std::uint32_t*) = s.local_task_id;
      break;
    case S_TASK_GLOBAL_ID:
      *va_arg(args, std::uint32_t*) = s.global_task_id;
      break;
    case S_JOB_LOCAL_TASK_COUNT:
      *va_arg(args, std::uint32_t*) = s.local_task_count;
      break;
    case S_JOB_NODEID:
      *va_arg(args, std::uint32_t*) = s.node_id;
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
  standin().errors.push_back(formatted(format, args));
  va_end(args);
}

void slurm_verbose(const char* format, ...) {
  va_list args;
  va_start(args, format);
  standin().verboses.push_back(formatted(format, args));
  va_end(args);
}

void slurm_spank_log(const char* format, ...) {
  va_list args;
  va_start(args, format);
  standin().logged.push_back(formatted(format, args));
  va_end(args);
}

}  // extern "C"
