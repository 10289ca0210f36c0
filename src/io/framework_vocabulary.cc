#include "vramplan/io/framework_vocabulary.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramplan {
namespace {

using nlohmann::json;

// clang-format off
constexpr FrameworkWord kWords[] = {
    // vramplan's own meanings (no --framework), which are Megatron-LM's.
    {"", "recompute", "selective", "selective",
     "Megatron-LM's selective recomputation: the attention core (scores, softmax, dropout) is "
     "recomputed, the rest kept (Korthikanti et al. 2022; --recompute-granularity selective)"},
    {"megatron", "recompute", "selective", "selective",
     "Megatron-LM's selective recomputation: the attention core (scores, softmax, dropout) is "
     "recomputed, the rest kept (--recompute-granularity selective)"},
    {"megatron", "recompute", "uniform", "full",
     "Megatron-LM --recompute-granularity full --recompute-method uniform "
     "--recompute-num-layers 1: every layer keeps its input and is recomputed"},
    // torchtitan/config/job_config.py ActivationCheckpoint: mode "selective" with
    // selective_ac_option "op" (its llama3 train_configs) is the op-level policy of
    // torchtitan/distributed/activation_checkpoint.py _apply_op_sac.
    {"torchtitan", "recompute", "selective", "selective-op",
     "torchtitan's selective activation checkpointing with its op-level policy "
     "(activation_checkpoint.mode = \"selective\", selective_ac_option = \"op\"): each layer "
     "keeps its input and the outputs of attention and of every other matmul"},
    {"torchtitan", "recompute", "op", "selective-op",
     "torchtitan's selective_ac_option = \"op\": the op-level policy"},
    // transformers PreTrainedModel.gradient_checkpointing_enable: each decoder layer under
    // torch.utils.checkpoint.
    {"hf-trainer", "recompute", "gradient_checkpointing", "full",
     "Hugging Face gradient_checkpointing = True: each decoder layer keeps its input and is "
     "recomputed"},
    {"hf-trainer", "recompute", "true", "full",
     "Hugging Face gradient_checkpointing = True: each decoder layer keeps its input and is "
     "recomputed"},
    // nanotron's recompute_layer (config/parallelism_config.py): each decoder layer under
    // checkpoint_method.
    {"nanotron", "recompute", "true", "full",
     "nanotron recompute_layer: true: each decoder layer keeps its input and is recomputed"},
    // DeepSpeed activation_checkpointing (runtime/activation_checkpointing): the layers the
    // model wraps keep their inputs.
    {"deepspeed", "recompute", "true", "full",
     "DeepSpeed activation checkpointing of each decoder layer: its input kept, the layer "
     "recomputed"},
};
// clang-format on

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

const FrameworkWord* find_word(std::string_view framework, std::string_view setting,
                               std::string_view word) {
  for (const FrameworkWord& w : kWords)
    if (framework == w.framework && setting == w.setting && word == w.word) return &w;
  return nullptr;
}

// The meanings `word` has in the frameworks other than `taken`, which differ from it.
std::string other_meanings(const FrameworkWord& taken) {
  std::string out;
  for (const FrameworkWord& w : kWords) {
    if (std::string_view(w.setting) != taken.setting || std::string_view(w.word) != taken.word ||
        std::string_view(w.value) == taken.value)
      continue;
    out += fmt::format("{}{}: {} = {}", out.empty() ? "" : "; ",
                       *w.framework ? w.framework : "no --framework", w.setting, w.value);
  }
  return out;
}

}  // namespace

std::span<const FrameworkWord> framework_vocabulary() { return kWords; }

std::string VocabularyNote::text() const {
  const std::string whose = framework.empty() ? "vramplan's own (Megatron-LM's)" : framework + "'s";
  std::string out =
      word == value ? fmt::format("{} = {} read in {} meaning: {}", setting, word, whose, meaning)
                    : fmt::format("{} = {} read in {} meaning, {} = {}: {}", setting, word, whose,
                                  setting, value, meaning);
  if (!others.empty()) out += fmt::format(" (elsewhere it means {})", others);
  return out;
}

std::vector<VocabularyNote> read_framework_words(json& settings, const json& given) {
  std::vector<VocabularyNote> notes;
  if (!settings.is_object() || !given.is_object()) return notes;
  const std::string framework = settings.contains("framework") && settings["framework"].is_string()
                                    ? settings["framework"].get<std::string>()
                                    : "";
  for (auto it = given.begin(); it != given.end(); ++it) {
    if (!it.value().is_string() && !it.value().is_boolean()) continue;
    const std::string word = text_of(it.value());
    const FrameworkWord* w = find_word(framework, it.key(), word);
    if (w == nullptr) w = find_word("", it.key(), word);
    if (w == nullptr) continue;
    const std::string others = other_meanings(*w);
    if (word == w->value && others.empty()) continue;  // one meaning everywhere
    settings[it.key()] = w->value;
    notes.push_back({w->setting, word, w->framework, w->value, w->meaning, others});
  }
  return notes;
}

json vocabulary_to_json(const std::vector<VocabularyNote>& notes) {
  json out = json::array();
  for (const VocabularyNote& n : notes)
    out.push_back({{"setting", n.setting},
                   {"word", n.word},
                   {"framework", n.framework.empty() ? json(nullptr) : json(n.framework)},
                   {"read_as", n.value},
                   {"meaning", n.meaning},
                   {"other_meanings", n.others},
                   {"note", n.text()}});
  return out;
}

}  // namespace vramplan
