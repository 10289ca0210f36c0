#include "interop/hf/fsdp_options.h"

#include <fmt/format.h>

#include "base/text.h"
#include "interop/hf/hf_common.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

// accelerate's FSDP_SHARDING_STRATEGY (utils/constants.py), numbered from 1 as
// torch.distributed.fsdp.ShardingStrategy is.
constexpr const char* kStrategies[] = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                       "HYBRID_SHARD_ZERO2"};
constexpr const char* kStrategyChoices =
    "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, HYBRID_SHARD_ZERO2 (or 1 to 5)";

// A strategy name or number as vramplan's fsdp mode; "" when unknown.
std::string mode_of_strategy(const std::string& text) {
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.size() == 1 && upper[0] >= '1' && upper[0] <= '5') upper = kStrategies[upper[0] - '1'];
  if (upper == "FULL_SHARD") return "full_shard";
  if (upper == "SHARD_GRAD_OP") return "shard_grad_op";
  if (upper == "NO_SHARD") return "no_shard";
  if (upper == "HYBRID_SHARD") return "hybrid_shard";
  if (upper == "HYBRID_SHARD_ZERO2") return "hybrid_shard_zero2";
  return "";
}

std::optional<Error> set_mode(ImportBuilder& out, const std::string& key, const std::string& value,
                              std::string mode, FsdpFacts& facts) {
  if (mode == "hybrid_shard_zero2") {
    out.unsupported(key, value,
                    "HYBRID_SHARD_ZERO2 (parameters stay gathered within a node after the "
                    "forward; counted as hybrid_shard)");
    mode = "hybrid_shard";
  }
  facts.on = mode != "no_shard";
  facts.hybrid = mode == "hybrid_shard";
  return set_agreeing(out, key, value, "fsdp", mode);
}

std::optional<Error> read_strategy(const std::string& key, const json& v, ImportBuilder& out,
                                   FsdpFacts& facts) {
  const std::string text = value_text(v);
  const std::string mode = mode_of_strategy(text);
  if (mode.empty()) return Error{key, text, kStrategyChoices, ""};
  return set_mode(out, key, text, mode, facts);
}

// FSDP2's reshard_after_forward (a boolean), or FSDP1's strategy name in its place.
std::optional<Error> read_reshard(const std::string& key, const json& v, ImportBuilder& out,
                                  FsdpFacts& facts) {
  if (Result<bool> b = bool_value(key, v); b.ok())
    return set_mode(out, key, value_text(v), *b ? "full_shard" : "shard_grad_op", facts);
  return read_strategy(key, v, out, facts);
}

std::optional<Error> read_entry(DocKeys& keys, const std::string& path, const std::string& name,
                                ImportBuilder& out, FsdpFacts& facts) {
  const std::string key = keys.shown(path);
  // A key with a dot in its name has no dotted path to it: no FSDP option is named so, and the
  // unread key is listed as ignored with the rest.
  const json* found = keys.take(path);
  if (found == nullptr) return std::nullopt;
  const json& v = *found;
  if (v.is_null()) return out.ignore(key, "null", "not set"), std::nullopt;
  const std::string text = value_text(v);
  if (name == "sharding_strategy") return read_strategy(key, v, out, facts);
  if (name == "reshard_after_forward") return read_reshard(key, v, out, facts);
  if (name == "version") {
    Result<int64_t> n = integer_value(key, v);
    if (!n || (*n != 1 && *n != 2)) return Error{key, text, "1 or 2", ""};
    facts.version = static_cast<int>(*n);
    out.understood(key, text, fmt::format("FSDP{} (fully_shard per decoder layer)", *n));
    return std::nullopt;
  }
  if (name == "activation_checkpointing") {
    Result<bool> b = bool_value(key, v);
    if (!b) return b.error();
    if (*b) {
      facts.recompute = true;
      facts.recompute_key = key;
      return set_agreeing(out, key, text, "recompute", "full");
    }
    out.understood(key, text, "no activation checkpointing by FSDP");
    return std::nullopt;
  }
  if (name == "offload_params" || name == "cpu_offload") {
    Result<bool> b = bool_value(key, v);
    if (!b) return b.error();
    // CPUOffload(offload_params=True): parameter and gradient shards on the CPU, and the
    // optimizer steps there.
    out.set(key, text, "offload_params", *b ? "cpu" : "none");
    out.put("offload_optimizer", *b ? "cpu" : "none", std::string(key));
    return std::nullopt;
  }
  if (name == "backward_prefetch") {
    const std::string upper = to_lower(text);
    if (upper == "no_prefetch") return out.set(key, text, "fsdp_prefetch", 0), std::nullopt;
    if (upper != "backward_pre" && upper != "backward_post")
      return Error{key, text, "BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH", ""};
    out.set(key, text, "fsdp_prefetch", 1);
    return std::nullopt;
  }
  if (name == "forward_prefetch") {
    out.understood(key, text, "at most one unit gathered ahead, as fsdp_prefetch counts");
    return std::nullopt;
  }
  if (name == "transformer_layer_cls_to_wrap" || name == "auto_wrap_policy" ||
      name == "min_num_params" || name == "wrap_policy") {
    out.understood(key, text, "FSDP units of one decoder layer, as vramplan shards them");
    return std::nullopt;
  }
  out.ignore(key, text,
             starts_with_any(name, {"state_dict_type", "sync_module_states", "use_orig_params",
                                    "cpu_ram_efficient_loading", "limit_all_gathers", "xla",
                                    "activation_cpu_offload"})
                 ? kNoMemoryEffect
                 : "not read by vramplan's FSDP config reader");
  return std::nullopt;
}

}  // namespace

std::optional<Error> read_fsdp_words(DocKeys& keys, const std::string& path, ImportBuilder& out,
                                     FsdpFacts& facts) {
  const json* v = keys.take_set(path);
  if (v == nullptr) return std::nullopt;
  const std::string key = keys.shown(path), text = value_text(*v);
  if (v->is_boolean()) {  // axolotl: fsdp: false
    if (!v->get<bool>()) out.understood(key, text, "no FSDP");
    return std::nullopt;
  }
  for (const std::string& word : name_list(*v)) {
    const std::string w = to_lower(word);
    if (w == "auto_wrap") {
      out.understood(key, text, "auto_wrap: FSDP units of one decoder layer");
    } else if (w == "offload") {
      out.set(key, text, "offload_params", "cpu");
      out.put("offload_optimizer", "cpu", std::string(key));
    } else if (std::string mode = mode_of_strategy(w); !mode.empty()) {
      if (auto e = set_mode(out, key, text, mode, facts)) return e;
    } else {
      return Error{key, text,
                   "full_shard, shard_grad_op, hybrid_shard, hybrid_shard_zero2, no_shard, "
                   "offload, auto_wrap",
                   "unknown FSDP option \"" + word + "\""};
    }
  }
  return std::nullopt;
}

std::optional<Error> read_fsdp_config(DocKeys& keys, const std::string& path, ImportBuilder& out,
                                      FsdpFacts& facts) {
  const json* config = keys.peek(path);
  if (config == nullptr || config->is_null()) return std::nullopt;
  if (config->is_string()) {
    keys.take(path);
    out.unsupported(keys.shown(path), config->get<std::string>(),
                    "an FSDP config file vramplan cannot open from here (give its keys inline)");
    return std::nullopt;
  }
  if (!config->is_object())
    return Error{keys.shown(path), value_text(*config), "an object of FSDP options", ""};
  // The version first: it says what reshard_after_forward means.
  for (const char* version : {"fsdp_version", "version"})
    if (config->contains(version))
      if (auto e = read_entry(keys, path + "." + version, "version", out, facts)) return e;
  for (auto it = config->begin(); it != config->end(); ++it) {
    const std::string name = it.key().rfind("fsdp_", 0) == 0 ? it.key().substr(5) : it.key();
    if (name == "version") continue;
    if (auto e = read_entry(keys, path + "." + it.key(), name, out, facts)) return e;
  }
  return std::nullopt;
}

}  // namespace vramplan::interop::hf
