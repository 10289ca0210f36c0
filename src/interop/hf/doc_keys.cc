#include "interop/hf/doc_keys.h"

#include "interop/structured_text.h"

namespace vramplan::interop::hf {

using nlohmann::json;

const json* DocKeys::take(std::string_view path) {
  const json* v = at_path(doc_, path);
  if (v != nullptr) taken_.insert(std::string(path));
  return v;
}

const json* DocKeys::peek(std::string_view path) const { return at_path(doc_, path); }

bool DocKeys::taken(const std::string& path) const {
  for (const std::string& t : taken_)
    if (path == t ||
        (path.size() > t.size() && path.compare(0, t.size(), t) == 0 && path[t.size()] == '.'))
      return true;
  return false;
}

void DocKeys::list_rest(
    ImportBuilder& out,
    const std::function<std::string(const std::string& path)>& reason_of) const {
  for_each_leaf(doc_, [&](const std::string& path, const json& value) {
    if (taken(path)) return;
    if (value.is_null())
      out.ignore(shown(path), "null", "not set");
    else
      out.ignore(shown(path), value_text(value), reason_of(path));
  });
}

bool starts_with_any(const std::string& path, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes) {
    const std::string_view prefix(p);
    if (path.rfind(prefix, 0) == 0) return true;
    if (prefix.ends_with('.') && path == prefix.substr(0, prefix.size() - 1)) return true;
  }
  return false;
}

}  // namespace vramplan::interop::hf
