#include "number_text.hpp"

#include <cstdio>

namespace gpudirect::launcher {

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string plain_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace gpudirect::launcher
