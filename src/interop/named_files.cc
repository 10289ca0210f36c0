#include "interop/named_files.h"

namespace vramplan::interop {
namespace {

std::string last_component(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const std::string* NamedFileLookup::find(const std::string& name) const {
  if (given != nullptr) {
    if (auto it = given->find(name); it != given->end()) return &it->second;
    // "./configs/ds.json" in the script, "ds.json" in from_files (or the other way round).
    for (const auto& [path, text] : *given)
      if (last_component(path) == last_component(name)) return &text;
  }
  if (asked != nullptr) asked->insert(name);
  return nullptr;
}

}  // namespace vramplan::interop
