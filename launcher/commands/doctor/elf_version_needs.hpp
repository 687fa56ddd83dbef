// The symbol versions a shared library needs from the libraries it links (its ELF version-needed
// entries, .gnu.version_r: "libc.so.6" needs "GLIBC_2.32"), read from the file without loading
// it: a library that needs a newer glibc than the process has cannot be loaded to ask.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect::launcher {

struct VersionNeed {
  std::string file;     // the library the version comes from, as DT_NEEDED names it: "libc.so.6"
  std::string version;  // "GLIBC_2.32"
  bool operator==(const VersionNeed&) const = default;
};

struct ElfError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The version-needed entries of the ELF file at `path` (32 or 64 bit, either byte order), in file
// order; empty for a file that needs no versions. Throws ElfError naming the file and what is
// wrong when it cannot be read or is no ELF file, or when its version section is malformed (this
// includes entries that overlap beyond one per 16 bytes of the file and names over 256 bytes: the
// file may come from a container image, and its work and memory stay in proportion to its size).
std::vector<VersionNeed> elf_version_needs(const std::string& path);

// The same from the bytes of a whole file; `name` is for messages.
std::vector<VersionNeed> elf_version_needs_of(const std::string& bytes, const std::string& name);

}  // namespace gpudirect::launcher
