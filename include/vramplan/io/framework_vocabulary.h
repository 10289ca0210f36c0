// Framework vocabulary: setting values that mean one thing in one framework and another thing in
// another. `--recompute selective` is Megatron-LM's selective recomputation (the attention core
// recomputed) and vramplan's own meaning, but torchtitan calls its op-level policy "selective"
// too; Hugging Face says "gradient_checkpointing" for what vramplan calls full. Under
// `--framework X` a word takes X's meaning; where a word means different things across
// frameworks, a note says which meaning was taken. One table holds every such word; a framework
// adds its own by adding rows (framework_vocabulary.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

struct FrameworkWord {
  const char* framework;  // a --framework name; "" = vramplan's own meaning (no framework)
  const char* setting;    // "recompute"
  const char* word;       // as the user writes it: "selective"
  const char* value;      // the vramplan value it means: "selective-op"
  const char* meaning;    // what it is in that framework, with its source
};

// Every row, vramplan's own meanings first.
std::span<const FrameworkWord> framework_vocabulary();

// Which meaning a word of the user's settings was given.
struct VocabularyNote {
  std::string setting;    // "recompute"
  std::string word;       // "selective"
  std::string framework;  // whose meaning was taken ("" = vramplan's own)
  std::string value;      // the vramplan value read: "selective-op"
  std::string meaning;
  std::string others;  // the other meanings: "megatron: selective (...)"
  std::string text() const;
};

// Reads the words `given` (the settings as the user wrote them) holds in the vocabulary of the
// framework `settings` names, replacing them in `settings` with the vramplan values they mean.
// Returns a note for each word translated, and for each word with several meanings across
// frameworks, saying which was taken. Settings that `given` lacks (a file's, already in vramplan
// values) are left alone.
std::vector<VocabularyNote> read_framework_words(nlohmann::json& settings,
                                                 const nlohmann::json& given);

nlohmann::json vocabulary_to_json(const std::vector<VocabularyNote>& notes);

}  // namespace vramplan
