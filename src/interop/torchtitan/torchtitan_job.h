// Reading a torchtitan job config (its keys already under their current names, TitanKeys) into
// vramplan settings, one part per file: the model, training and precision
// (torchtitan_model.cc), the parallel degrees, pipeline and batch (torchtitan_parallel.cc), and
// activation checkpointing (torchtitan_recompute.cc). The parts run in the order of
// read_titan_job, each using what the earlier ones found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interop/import_builder.h"
#include "interop/torchtitan/torchtitan_flavors.h"
#include "interop/torchtitan/torchtitan_keys.h"

namespace vramplan::interop {

inline constexpr const char* kTitanSource = "torchtitan/config/job_config.py";

struct TitanJob {
  TitanJob(TitanKeys k, ImportBuilder& o, int64_t w, std::string wf)
      : keys(std::move(k)), out(o), world(w), world_from(std::move(wf)) {}

  TitanKeys keys;
  ImportBuilder& out;
  int64_t world = 0;  // the launcher's world size (0: unknown)
  std::string world_from;

  // Found along the way.
  const TitanFlavor* flavor = nullptr;
  int64_t seq_len = 2048;   // Training.seq_len default
  int64_t local_batch = 8;  // Training.local_batch_size default
  std::string local_batch_key = "(default training.local_batch_size)";
  int64_t replicate = 1, shard = -1, tp = 1, pp = 1, cp = 1;  // shard -1: the rest (or unknown)
  bool fsdp = false;                 // FSDP2 applied (dp_shard > 1 or cp > 1)
  int64_t vpp = 1;                   // stages per pipeline rank
  std::vector<int64_t> rank_layers;  // decoder layers per pipeline rank
  std::string recompute = "none";    // the vramplan recompute setting made

  // A key's value, or its torchtitan default, and the key to name ("(default k = v)" when the
  // file does not set it).
  struct Read {
    nlohmann::json value;
    std::string key;
    std::string text;
    bool given;
  };
  Read read(const std::string& key, nlohmann::json fallback);
};

// The key as the file writes it, or "(default KEY)" when the file does not set it.
std::string titan_key(const TitanJob& job, const std::string& key);

std::optional<Error> read_titan_model(TitanJob& job);
std::optional<Error> read_titan_training(TitanJob& job);
std::optional<Error> read_titan_parallelism(TitanJob& job);
std::optional<Error> read_titan_pipeline(TitanJob& job);
std::optional<Error> read_titan_recompute(TitanJob& job);
std::optional<Error> read_titan_precision(TitanJob& job);
void list_titan_rest(TitanJob& job);

// Every part, in order.
std::optional<Error> read_titan_job(TitanJob& job);

}  // namespace vramplan::interop
