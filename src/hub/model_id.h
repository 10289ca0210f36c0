// Hugging Face Hub model ids as users type them: "org/name" or "org/name@revision".
#pragma once

#include <string>
#include <string_view>

#include "vramplan/base/error.h"

namespace vramplan::hub {

inline constexpr std::string_view kDefaultRevision = "main";

struct ModelRef {
  std::string repo_id;   // "meta-llama/Llama-3.1-8B"
  std::string revision;  // branch, tag or commit; "main" when none was given
  bool revision_given = false;

  // As typed back to the user: "org/name" or "org/name@revision".
  std::string text() const;
};

// What a --model value may be, for error messages.
inline constexpr std::string_view kModelAccepted =
    "a preset (vramplan models), a path to a config.json, or a Hugging Face Hub id org/name or "
    "org/name@revision";

// Parses "org/name[@revision]" by the Hub's own rules (huggingface_hub validate_repo_id): two
// segments of letters, digits, '-', '_' and '.', each starting and ending with a letter, digit or
// '_', at most 96 characters, no "--" or "..", not ending in ".git". Revisions are branch, tag or
// commit names: letters, digits, '-', '_', '.', '/', no "..", no whitespace. URLs, paths and
// other hosts are refused. Errors name the field "model".
Result<ModelRef> parse_model_ref(std::string_view text);

// A full 40-hex commit id, which names a snapshot directly (no refs/ lookup).
bool is_commit_hash(std::string_view revision);

// "meta-llama/Llama-3.1-8B" -> "models--meta-llama--Llama-3.1-8B" (the cache folder name).
std::string repo_folder_name(std::string_view repo_id);

}  // namespace vramplan::hub
