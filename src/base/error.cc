#include "vramplan/base/error.h"

namespace vramplan {

std::string Error::message() const {
  std::string text = field + " = " + (value.empty() ? "\"\"" : value);
  if (!reason.empty()) text += ": " + reason;
  if (!accepted.empty()) text += "; accepted: " + accepted;
  return text;
}

}  // namespace vramplan
