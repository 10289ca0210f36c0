// The keys of a config document (DeepSpeed JSON, TrainingArguments, accelerate / axolotl /
// torchtune YAML), each marked when a reader takes it, so that every key no reader took is
// listed as ignored with its reason: nothing is dropped silently.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "interop/import_builder.h"

namespace vramplan::interop::hf {

class DocKeys {
 public:
  // `shown_prefix` is how the document's keys are shown: "--" for a flag list, "" for a file.
  explicit DocKeys(const nlohmann::json& doc, std::string shown_prefix = "")
      : doc_(doc), prefix_(std::move(shown_prefix)) {}

  // The value at a dotted path (null included), marked as read with everything under it; nullptr
  // when the path is absent.
  const nlohmann::json* take(std::string_view path);
  const nlohmann::json* peek(std::string_view path) const;
  // A value that is present and not null.
  const nlohmann::json* take_set(std::string_view path) {
    const nlohmann::json* v = take(path);
    return v != nullptr && !v->is_null() ? v : nullptr;
  }
  // The key as the user wrote it: "--per_device_train_batch_size", "zero_optimization.stage".
  std::string shown(std::string_view path) const {
    auto it = shown_as_.find(std::string(path));
    return it != shown_as_.end() ? it->second : prefix_ + std::string(path);
  }
  // A path whose value came from elsewhere (a launcher flag over a config file's key) is shown
  // as written there.
  void show_as(const std::string& path, std::string written) {
    shown_as_[path] = std::move(written);
  }
  const nlohmann::json& doc() const { return doc_; }

  // Every leaf no reader took, as ignored: null leaves are "not set", the rest get `reason_of`.
  void list_rest(ImportBuilder& out,
                 const std::function<std::string(const std::string& path)>& reason_of) const;

 private:
  bool taken(const std::string& path) const;

  const nlohmann::json& doc_;
  std::string prefix_;
  std::set<std::string> taken_;
  std::map<std::string, std::string> shown_as_;
};

// `path` starts with one of `prefixes` (a prefix "x." also matches the key "x").
bool starts_with_any(const std::string& path, std::initializer_list<const char*> prefixes);

}  // namespace vramplan::interop::hf
