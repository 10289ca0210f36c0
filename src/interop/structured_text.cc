#include "interop/structured_text.h"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <sstream>

namespace vramplan::interop {
namespace {

using nlohmann::json;

// The deepest YAML nesting read; deeper documents are refused rather than recursed into.
constexpr int kMaxDepth = 64;

json yaml_scalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: a string whatever it looks like
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "null" || text == "Null" || text == "NULL" || text == "~" || text.empty())
    return nullptr;
  if (std::regex_match(text, kInt) && text.size() < 19) return std::stoll(text);
  if (std::regex_match(text, kFloat) && text.size() < 40) return std::stod(text);
  return text;
}

Result<json> from_yaml(const YAML::Node& node, const std::string& field, int depth) {
  if (depth > kMaxDepth)
    return Error{field, "", "a document nested at most 64 levels deep", "nested too deeply"};
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      return yaml_scalar(node);
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : node) {
        Result<json> v = from_yaml(item, field, depth + 1);
        if (!v) return v;
        out.push_back(std::move(v).value());
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          return Error{field, "", "a mapping with text keys", "a key is not text"};
        Result<json> v = from_yaml(kv.second, field, depth + 1);
        if (!v) return v;
        out[kv.first.Scalar()] = std::move(v).value();
      }
      return out;
    }
  }
  return json(nullptr);
}

json from_toml(const toml::node& node) {
  if (const toml::table* t = node.as_table()) {
    json out = json::object();
    for (const auto& [key, value] : *t) out[std::string(key.str())] = from_toml(value);
    return out;
  }
  if (const toml::array* a = node.as_array()) {
    json out = json::array();
    for (const toml::node& v : *a) out.push_back(from_toml(v));
    return out;
  }
  if (auto v = node.value<bool>(); node.is_boolean()) return *v;
  if (auto v = node.value<int64_t>(); node.is_integer()) return *v;
  if (auto v = node.value<double>(); node.is_floating_point()) return *v;
  if (auto v = node.value<std::string>(); node.is_string()) return *v;
  std::string text;  // dates and times, as written
  node.visit([&](const auto& value) {
    std::ostringstream out;
    out << value;
    text = out.str();
  });
  return text;
}

}  // namespace

Result<json> parse_yaml(std::string_view text, const std::string& field) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    return from_yaml(root, field, 0);
  } catch (const YAML::Exception& e) {
    return Error{field, "", "a YAML document",
                 fmt::format("line {}, column {}: {}", e.mark.line + 1, e.mark.column + 1, e.msg)};
  }
}

Result<json> parse_toml(std::string_view text, const std::string& field) {
  try {
    const toml::table table = toml::parse(text);
    return from_toml(table);
  } catch (const toml::parse_error& e) {
    return Error{field, "", "a TOML document",
                 fmt::format("line {}, column {}: {}", e.source().begin.line,
                             e.source().begin.column, e.description())};
  }
}

const json* at_path(const json& root, std::string_view dotted) {
  const json* node = &root;
  size_t start = 0;
  while (start <= dotted.size()) {
    const size_t dot = dotted.find('.', start);
    const std::string key(
        dotted.substr(start, dot == std::string_view::npos ? dotted.npos : dot - start));
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
  return node;
}

void for_each_leaf(const json& root,
                   const std::function<void(const std::string& path, const json&)>& f,
                   const std::string& prefix) {
  if (!root.is_object()) {
    f(prefix, root);
    return;
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object() && !it.value().empty())
      for_each_leaf(it.value(), f, path);
    else
      f(path, it.value());
  }
}

}  // namespace vramplan::interop
