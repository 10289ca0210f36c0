// A torchtitan job config's keys (torchtitan/config/job_config.py) under their current dotted
// names, each remembering how the file wrote it: torchtitan renamed many (training.batch_size →
// training.local_batch_size, experimental.pipeline_parallel_* and training.*_degree →
// parallelism.*, training.compile → compile.enable, [float8] → [quantize.linear.float8], ...),
// and a file of either age is read the same way. Readers take keys; what no reader took is
// listed as ignored with its reason.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan::interop {

struct TitanValue {
  std::string written;   // the key as the file writes it: "experimental.pipeline_parallel_degree"
  nlohmann::json value;  // as parsed (a TOML value, or the text of a command-line override)
  std::string text;      // the value as the user would write it
};

class TitanKeys {
 public:
  // Every leaf of the document (its dotted path and value), under its current name. A key given
  // in both spellings with different values is an error naming the older spelling.
  static Result<TitanKeys> from_document(const nlohmann::json& doc);

  // The key (current name), marked as read; nullptr when the file does not set it.
  const TitanValue* take(const std::string& key);
  const TitanValue* peek(const std::string& key) const;
  bool has(const std::string& key) const { return values_.count(key) > 0; }

  // Typed reads of a key the file sets; errors name the key as written.
  Result<int64_t> integer(const TitanValue& v) const;
  Result<bool> boolean(const TitanValue& v) const;
  Result<std::string> text(const TitanValue& v) const;

  // Keys no reader took, in order.
  std::map<std::string, TitanValue> untaken() const;
  // Older spellings given beside the current one with the same value (read once), each with the
  // spelling read.
  const std::vector<std::pair<TitanValue, std::string>>& repeated() const { return repeated_; }

 private:
  std::map<std::string, TitanValue> values_;
  std::set<std::string> taken_;
  std::vector<std::pair<TitanValue, std::string>> repeated_;
};

// Why an untaken key changes nothing vramplan counts, or "" when it might.
std::string titan_no_effect_reason(const std::string& key);

}  // namespace vramplan::interop
