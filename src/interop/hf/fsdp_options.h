// PyTorch FSDP as the Hugging Face stack configures it: the TrainingArguments' `fsdp` words
// ("full_shard auto_wrap offload") and `fsdp_config`, accelerate's `fsdp_config` (fsdp_ prefixed
// keys) and axolotl's `fsdp` / `fsdp_config`: one reader for all three.
#pragma once

#include <optional>
#include <string>

#include "interop/hf/doc_keys.h"
#include "vramplan/base/error.h"

namespace vramplan::interop::hf {

struct FsdpFacts {
  bool on = false;            // FSDP shards this run
  bool hybrid = false;        // hybrid_shard: its shard group is a node
  bool recompute = false;     // activation_checkpointing in the FSDP config
  std::string recompute_key;  // the key that said so
  int version = 1;            // FSDP2 with fsdp_version 2
};

// The TrainingArguments / axolotl `fsdp` option: words (a string or a list) of full_shard,
// shard_grad_op, hybrid_shard, hybrid_shard_zero2, no_shard, offload, auto_wrap.
std::optional<Error> read_fsdp_words(DocKeys& keys, const std::string& path, ImportBuilder& out,
                                     FsdpFacts& facts);

// An FSDP config object at `path` ("fsdp_config"), its keys with or without the fsdp_ prefix;
// a string there is the path of a JSON file vramplan does not read (a warning).
std::optional<Error> read_fsdp_config(DocKeys& keys, const std::string& path, ImportBuilder& out,
                                      FsdpFacts& facts);

}  // namespace vramplan::interop::hf
