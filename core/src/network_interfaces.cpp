#include "gpudirect/network_interfaces.hpp"

#include <net/if.h>

#include <algorithm>

namespace gpudirect {

std::optional<std::vector<std::string>> network_interface_names() {
  struct if_nameindex* list = ::if_nameindex();
  if (!list) return std::nullopt;
  std::vector<std::string> names;
  for (const struct if_nameindex* i = list; i->if_index != 0 && i->if_name; ++i) names.emplace_back(i->if_name);
  ::if_freenameindex(list);
  return names;
}

std::vector<std::string> missing_interfaces(const std::vector<std::string>& wanted, const std::vector<std::string>& present) {
  std::vector<std::string> missing;
  for (const std::string& name : wanted)
    if (std::find(present.begin(), present.end(), name) == present.end() &&
        std::find(missing.begin(), missing.end(), name) == missing.end())
      missing.push_back(name);
  return missing;
}

}  // namespace gpudirect
