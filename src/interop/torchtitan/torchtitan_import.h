// torchtitan's forms as imports (see torchtitan_import.cc).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "interop/import_builder.h"
#include "interop/named_files.h"

namespace vramplan::interop {

// A job config TOML (torchtitan/models/*/train_configs/*.toml); a comment line holding its
// launch command (`# torchrun --nproc_per_node 8 ... -m torchtitan.train ...` or
// `# NGPU=8 ./run_train.sh`) gives the world size.
bool looks_like_torchtitan_toml(const nlohmann::json& toml);
Result<Imported> import_torchtitan_toml(std::string_view text, const nlohmann::json& toml);

// A launch command whose job is given by its overrides alone (torchrun ... -m torchtitan.train
// --model.name llama3 --model.flavor 8B ...), or by the job TOML it names with its overrides on
// top (torchtitan's ConfigManager: the file, then the command line); a TOML named but not given
// is an error naming the key.
bool looks_like_torchtitan_command(std::string_view text);
// `files`: the job TOML it names (--job.config_file, run_train.sh's CONFIG_FILE), when given.
Result<Imported> import_torchtitan_command(std::string_view text, const NamedFileLookup& files);

// The job's keys (a document of sections, as the TOML parses), on `world_size` GPUs described
// by `world_from` (0: unknown), into `out`. Contradictions are errors naming the key as written.
std::optional<Error> import_torchtitan_document(const nlohmann::json& doc, int64_t world_size,
                                                const std::string& world_from, ImportBuilder& out);

}  // namespace vramplan::interop
