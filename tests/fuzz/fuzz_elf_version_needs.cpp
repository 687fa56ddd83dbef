// The doctor's ELF reader (launcher/commands/doctor/elf_version_needs.cpp) over any bytes: it reads
// libraries out of container images, so a library a user built is its input. The reader must
// either return the version needs or throw ElfError; anything else (another exception, a crash, a
// sanitizer report, a hang, memory out of proportion to the file) is a bug the fuzzer reports.
#include "fuzz_input.hpp"

#include "doctor/elf_version_needs.hpp"

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = gpudirect::fuzz::as_text(data, size);
  try {
    const auto needs = gpudirect::launcher::elf_version_needs_of(bytes, "fuzz.so");
    // Each entry is two names that lie inside the file, so there are never more entries than the
    // file has bytes: more would mean the reader went around in circles.
    if (needs.size() > size) {
      std::fprintf(stderr, "fuzz_elf_version_needs: %zu entries from %zu bytes\n", needs.size(), size);
      __builtin_trap();
    }
  } catch (const gpudirect::launcher::ElfError&) {
  }
  return 0;
}
