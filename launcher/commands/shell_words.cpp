#include "shell_words.hpp"

namespace gpudirect::launcher {
namespace {

// No glob ([ ] * ?), no expansion ($ ` ~ at the start), no quoting, no separator, no blank.
constexpr std::string_view kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-=.,/:+%@";

bool plain(std::string_view word) { return !word.empty() && word.find_first_not_of(kPlain) == std::string_view::npos; }

std::string single_quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// The NAME= of NAME=VALUE, or 0.
std::size_t name_length(std::string_view word) {
  const auto equals = word.find('=');
  if (equals == std::string_view::npos || equals == 0) return 0;
  for (std::size_t i = 0; i < equals; ++i) {
    const char c = word[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return 0;
  }
  return equals + 1;
}

}  // namespace

std::string shell_word(std::string_view word) {
  if (plain(word)) return std::string(word);
  const std::size_t name = name_length(word);
  return std::string(word.substr(0, name)) + single_quoted(word.substr(name));
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += i == 0 && !plain(argv[i]) ? single_quoted(argv[i]) : shell_word(argv[i]);
  }
  return out;
}

}  // namespace gpudirect::launcher
