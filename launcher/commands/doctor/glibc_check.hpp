// The net plugin against the glibc the task runs with. A plugin built on a newer system needs newer
// GLIBC_ symbol versions than an older container image's libc defines; the loader then refuses it
// ("version `GLIBC_2.32' not found") and NCCL says only that its network was not found
// (AI-Hypercomputer/gpu-recipes#5: gIB's plugin in an image with glibc 2.31). The doctor reads what
// the plugin needs from its ELF version needs, without loading it, and names both versions.
#pragma once

#include "doctor/elf_version_needs.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher {

struct GlibcCheck {
  std::string needed;   // the newest GLIBC_ version the library needs ("GLIBC_2.32"); "" for none
  std::string from;     // the library it needs it from ("libc.so.6")
  std::string problem;  // "" when the running glibc is as new as what the library needs
};

// glibc's version of a GLIBC_ version name ("GLIBC_2.2.5" -> {2, 2, 5}); empty for a name that is
// not a glibc release (GLIBC_PRIVATE). GLIBC_ABI_DT_RELR, the mark of packed relocations, counts as
// 2.36, the release that brought it.
std::vector<int> glibc_release(const std::string& version_name);

// `library` (for the message) needs `needs`; the task runs with glibc `glibc_version`
// (gnu_get_libc_version(): "2.36"); `where` says whose glibc that is ("the container's",
// "this node's").
GlibcCheck check_glibc_needs(const std::string& library, const std::vector<VersionNeed>& needs, const std::string& glibc_version,
                             const std::string& where);

}  // namespace gpudirect::launcher
