// ASCII case folding for names users type: presets, GPU ids, dtypes, choices.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace vramplan {

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

inline bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](unsigned char x, unsigned char y) {
    return std::tolower(x) == std::tolower(y);
  });
}

}  // namespace vramplan
