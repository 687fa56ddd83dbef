#include "doctor/elf_version_needs.hpp"

#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace gpudirect::launcher {
namespace {

struct Elf32 {
  using Ehdr = Elf32_Ehdr;
  using Shdr = Elf32_Shdr;
};
struct Elf64 {
  using Ehdr = Elf64_Ehdr;
  using Shdr = Elf64_Shdr;
};

template <typename T>
T byte_swapped(T value) {
  static_assert(std::is_integral_v<T>);
  T out{};
  const auto* in = reinterpret_cast<const unsigned char*>(&value);
  auto* swapped = reinterpret_cast<unsigned char*>(&out);
  for (std::size_t i = 0; i < sizeof(T); ++i) swapped[i] = in[sizeof(T) - 1 - i];
  return out;
}

// Bounds-checked reads of the file's integers in its own byte order.
class Bytes {
 public:
  Bytes(const std::string& bytes, const std::string& name, bool swap)
      : bytes_(bytes), name_(name), swap_(swap), records_(bytes.size() / sizeof(Elf64_Vernaux)) {}

  template <typename T>
  T at(std::uint64_t offset, const char* what) const {
    if (offset > bytes_.size() || sizeof(T) > bytes_.size() - offset) fail(std::string(what) + " lies past the end of the file");
    T value{};
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return swap_ ? byte_swapped(value) : value;
  }

  // The NUL-terminated string at `index` of the string table [offset, offset + size), at most
  // kLongestName bytes: real names are short ("libc.so.6", "GLIBC_2.34"), and a file whose
  // entries all name one huge string would otherwise cost time and memory by their product.
  std::string string_at(std::uint64_t offset, std::uint64_t size, std::uint64_t index) const {
    if (offset > bytes_.size() || size > bytes_.size() - offset || index >= size) fail("a version name lies outside its string table");
    const char* begin = bytes_.data() + offset + index;
    const std::uint64_t searched = std::min<std::uint64_t>(size - index, kLongestName + 1);
    const void* end = std::memchr(begin, '\0', searched);
    if (!end)
      fail(searched > kLongestName ? "a version name is longer than " + std::to_string(kLongestName) + " bytes"
                                   : std::string("a version name runs past its string table"));
    return std::string(begin, static_cast<const char*>(end));
  }

  // Every version entry read costs one record of a budget of one per 16 bytes of the file (what an
  // entry takes): entries that overlap or are visited again (a next offset of 1, several version
  // sections over the same bytes) cannot make the work grow faster than the file.
  void count_record() {
    if (records_ == 0) fail("more version entries than the file has room for (entries overlap)");
    --records_;
  }

  static constexpr std::uint64_t kLongestName = 256;

  [[noreturn]] void fail(const std::string& why) const { throw ElfError(name_ + ": malformed ELF file: " + why); }

 private:
  const std::string& bytes_;
  const std::string& name_;
  bool swap_;
  std::uint64_t records_;
};

#define GPUDIRECT_FIELD(type, field) b.at<decltype(type::field)>(base + offsetof(type, field), #type "." #field)

template <typename Class>
std::vector<VersionNeed> read_needs(Bytes& b) {
  using Ehdr = typename Class::Ehdr;
  using Shdr = typename Class::Shdr;
  std::uint64_t base = 0;
  const std::uint64_t section_table = GPUDIRECT_FIELD(Ehdr, e_shoff);
  const std::uint64_t entry_size = GPUDIRECT_FIELD(Ehdr, e_shentsize);
  std::uint64_t sections = GPUDIRECT_FIELD(Ehdr, e_shnum);
  if (section_table == 0) return {};  // no section headers (stripped to the segments): nothing to read
  if (entry_size < sizeof(Shdr)) b.fail("section header entries are smaller than the format's");
  if (sections == 0) {  // more than SHN_LORESERVE sections: the count is section 0's size
    base = section_table;
    sections = GPUDIRECT_FIELD(Shdr, sh_size);
  }
  auto section = [&](std::uint64_t index) { return section_table + index * entry_size; };
  if (sections > (UINT64_MAX - section_table) / entry_size) b.fail("the section header table is larger than any file");
  std::vector<VersionNeed> needs;
  for (std::uint64_t s = 0; s < sections; ++s) {
    base = section(s);
    if (GPUDIRECT_FIELD(Shdr, sh_type) != SHT_GNU_verneed) continue;
    const std::uint64_t start = GPUDIRECT_FIELD(Shdr, sh_offset);
    const std::uint64_t size = GPUDIRECT_FIELD(Shdr, sh_size);
    const std::uint64_t count = GPUDIRECT_FIELD(Shdr, sh_info);
    const std::uint64_t link = GPUDIRECT_FIELD(Shdr, sh_link);
    if (link >= sections) b.fail("the version section links to no section");
    base = section(link);
    const std::uint64_t strings = GPUDIRECT_FIELD(Shdr, sh_offset);
    const std::uint64_t strings_size = GPUDIRECT_FIELD(Shdr, sh_size);
    auto inside = [&](std::uint64_t offset, std::size_t length) {
      if (offset < start || offset - start > size || length > size - (offset - start)) b.fail("a version entry lies outside its section");
    };
    std::uint64_t entry = start;
    for (std::uint64_t n = 0; n < count; ++n) {
      inside(entry, sizeof(Elf64_Verneed));
      b.count_record();
      base = entry;
      const std::string file = b.string_at(strings, strings_size, GPUDIRECT_FIELD(Elf64_Verneed, vn_file));
      const std::uint64_t auxiliaries = GPUDIRECT_FIELD(Elf64_Verneed, vn_cnt);
      std::uint64_t aux = entry + GPUDIRECT_FIELD(Elf64_Verneed, vn_aux);
      for (std::uint64_t a = 0; a < auxiliaries; ++a) {
        inside(aux, sizeof(Elf64_Vernaux));
        b.count_record();
        base = aux;
        needs.push_back({file, b.string_at(strings, strings_size, GPUDIRECT_FIELD(Elf64_Vernaux, vna_name))});
        const std::uint64_t next = GPUDIRECT_FIELD(Elf64_Vernaux, vna_next);
        if (next == 0 && a + 1 < auxiliaries) b.fail("a version entry ends before its count");
        aux += next;
      }
      base = entry;
      const std::uint64_t next = GPUDIRECT_FIELD(Elf64_Verneed, vn_next);
      if (next == 0 && n + 1 < count) b.fail("the version section ends before its count");
      entry += next;
    }
  }
  return needs;
}

#undef GPUDIRECT_FIELD

bool little_endian_host() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

}  // namespace

std::vector<VersionNeed> elf_version_needs_of(const std::string& bytes, const std::string& name) {
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    throw ElfError(name + ": not an ELF file (no \\x7fELF at its start)");
  const auto data = static_cast<unsigned char>(bytes[EI_DATA]);
  if (data != ELFDATA2LSB && data != ELFDATA2MSB) throw ElfError(name + ": malformed ELF file: unknown byte order");
  Bytes reader(bytes, name, (data == ELFDATA2LSB) != little_endian_host());
  switch (static_cast<unsigned char>(bytes[EI_CLASS])) {
    case ELFCLASS32:
      return read_needs<Elf32>(reader);
    case ELFCLASS64:
      return read_needs<Elf64>(reader);
    default:
      throw ElfError(name + ": malformed ELF file: neither 32 nor 64 bit");
  }
}

std::vector<VersionNeed> elf_version_needs(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ElfError(path + ": cannot be read");
  std::ostringstream bytes;  // in bulk: a character at a time took 25 s for a 220 MB binary under ASan
  bytes << file.rdbuf();
  if (file.bad()) throw ElfError(path + ": cannot be read");
  return elf_version_needs_of(bytes.str(), path);
}

}  // namespace gpudirect::launcher
