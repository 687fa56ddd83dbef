#include "check_node/gres_gpus.hpp"

#include "gpudirect/text.hpp"

namespace gpudirect::launcher::check_node {

std::optional<int> gres_gpu_count(const std::string& text) {
  // " Gres=" and not "GresUsed=" / "GresDrain=": the field starts after a blank or at the start.
  std::size_t at = 0;
  for (;;) {
    at = text.find("Gres=", at);
    if (at == std::string::npos) return std::nullopt;
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n' || text[at - 1] == '\t') break;
    ++at;
  }
  const std::size_t start = at + 5;
  const std::string field = text.substr(start, text.find_first_of(" \n\t", start) - start);
  std::optional<int> total;
  for (std::string_view item : split(field, ',')) {
    item = item.substr(0, item.find('('));  // "(S:0-1)": the sockets
    if (!item.starts_with("gpu:")) continue;
    const std::string_view count = item.substr(item.rfind(':') + 1);
    if (const auto n = try_parse_integer<int>(count, 0, 100000)) total = total.value_or(0) + *n;
  }
  return total;
}

}  // namespace gpudirect::launcher::check_node
