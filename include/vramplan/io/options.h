// The one registry of settings: every key a scenario file, a CLI flag or an API body may hold,
// with its kind, group, default, help text and choices. Every command registers its flags from
// it, the server's GET /api/options, /api/infer/options and /api/plan/options answer from it, and
// the readers (scenario_io.h, inference_settings.h, plan_settings.h) accept exactly its keys.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace vramplan {

enum class OptionKind { kInteger, kNumber, kBool, kText, kChoice, kObject };

struct OptionSpec {
  const char* key;  // "seq_len"; the CLI flag is "--seq-len"
  OptionKind kind;
  const char* group;         // "model", "training", "precision", "parallelism", "hardware", ...
  const char* default_text;  // shown in --help and the UI
  const char* help;
  const char* choices;  // for kChoice: "none, selective, full"
};

// The training scenario's settings in --help order (`estimate`, `roofline`, `plan`'s scenario).
std::span<const OptionSpec> scenario_options();
// The serving settings in --help order: the model keys of scenario_options() and the serving
// ones (`infer`).
std::span<const OptionSpec> inference_options();
// The planner's own settings beside the scenario keys: gpus_per_node, max_tp, headroom, top,
// threads (group "plan"; gpus is a scenario key the planner requires).
std::span<const OptionSpec> plan_options();
// The "what fits" questions' settings beside the scenario and planner keys: question, up_to,
// seq_multiple (group "fit"; `fit`, POST /api/fit, docs/fit.md).
std::span<const OptionSpec> fit_options();
// The quick calculator's settings (`quick`, POST /api/quick; docs/quick.md).
std::span<const OptionSpec> quick_options();
// The roofline's cluster beside the scenario keys: gpus_per_node, intra_node_gbps,
// inter_node_gbps (group "cluster"; each defaults to the chosen GPU's catalog entry).
std::span<const OptionSpec> roofline_options();
// The training estimate's output settings beside the scenario keys: formulas (group "input";
// `estimate`, POST /api/estimate, vramplan.estimate in Python).
std::span<const OptionSpec> estimate_output_options();

// The title a group's options are listed under in --help and the web form ("model" -> "Model").
std::string_view group_title(std::string_view group);

// The option `key` of `options`, or nullptr.
const OptionSpec* find_option(std::span<const OptionSpec> options, std::string_view key);

// "seq_len" -> "--seq-len"
std::string flag_name(const std::string& key);

}  // namespace vramplan
