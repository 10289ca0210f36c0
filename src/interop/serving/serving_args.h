// An engine's command-line arguments split the way its argparse parser reads them: "--name value",
// "--name=value", switches and their "--no-" forms (argparse.BooleanOptionalAction), lists
// (nargs='+'), vLLM's underscores for dashes (FlexibleArgumentParser), "-O3" and the dotted
// "--compilation-config.level 3". Each engine's table (vllm_flags.cc, sglang_flags.cc) says how
// many values a flag takes and what it does for memory.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan::interop {

enum class Arity {
  kSwitch,        // --enforce-eager, --no-enforce-eager
  kValue,         // --max-model-len 32768
  kList,          // --cuda-graph-sizes 1 2 4 8
  kOptionalBool,  // --enable-chunked-prefill [True|False] (vLLM's older StoreBoolean)
};

// What a flag does for vramplan.
enum class Effect {
  kRead,         // sets a vramplan setting (Action says which)
  kNoEffect,     // no effect on memory (note: why, when it is not obvious)
  kNotModelled,  // changes memory in a way vramplan does not model (note: how); a warning
};

enum class Action {
  kNone,
  kModel,
  kTp,
  kPp,
  kDp,
  kEp,
  kExpertParallel,      // vLLM --enable-expert-parallel: experts over tp·dp
  kEnableEpMoe,         // SGLang's older --enable-ep-moe: experts over tp
  kDpAttention,         // SGLang --enable-dp-attention
  kGpuUtilization,      // vLLM --gpu-memory-utilization
  kMemFraction,         // SGLang --mem-fraction-static
  kContext,             // --max-model-len, --context-length
  kBatchedTokens,       // --max-num-batched-tokens
  kChunkedPrefillSize,  // SGLang --chunked-prefill-size (-1: no chunking)
  kMaxSeqs,             // --max-num-seqs, --max-running-requests
  kEnforceEager,        // vLLM --enforce-eager
  kDisableCudaGraph,    // SGLang --disable-cuda-graph
  kKvDtype,
  kDtype,
  kQuantization,
  kBlockSize,          // vLLM --block-size, SGLang --page-size
  kChunkedPrefill,     // vLLM --enable-chunked-prefill
  kCompilationConfig,  // vLLM --compilation-config / -O
  kOffloadGb,          // --cpu-offload-gb: cpu_offload_gib
  kSwapSpace,          // vLLM --swap-space: swap_space_gib
  kKvOffloadSize,      // vLLM --kv-offloading-size: kv_offload_gib
  kKvOffloadBackend,   // vLLM --kv-offloading-backend native|lmcache
  kKvTransferConfig,   // vLLM --kv-transfer-config: LMCache's CPU pool
  kHierarchicalCache,  // SGLang --enable-hierarchical-cache
  kHicacheRatio,       // SGLang --hicache-ratio
  kHicacheSize,        // SGLang --hicache-size (GB)
};

struct FlagSpec {
  const char* names;  // the canonical name first, then its aliases: "--tensor-parallel-size -tp"
  Arity arity;
  Effect effect;
  const char* note;  // kNoEffect: why (may be ""); kNotModelled: what it changes
  Action action = Action::kNone;
};

struct ServingArg {
  std::string written;  // as the user wrote it, without "=value": "-tp", "--max_model_len"
  std::string name;     // the canonical name ("--tensor-parallel-size"), or `written` normalised
  std::string subkey;   // "level" in --compilation-config.level 3
  std::string value;    // as written; a switch: "true" ("false" for --no-...); lists: spaced
  bool has_value = false;
  const FlagSpec* spec = nullptr;  // nullptr: a flag the table does not know
  size_t index = 0;                // position among the arguments
};

struct SplitArgs {
  std::vector<ServingArg> args;
  std::vector<std::string> positionals;  // words that are no flag's value (vllm serve MODEL)
};

// Errors name the flag as written: a value-taking flag at the end of the command.
Result<SplitArgs> split_serving_args(const std::vector<std::string>& words,
                                     std::span<const FlagSpec> specs);

// The spec whose names include `name` exactly, or nullptr.
const FlagSpec* find_flag(std::span<const FlagSpec> specs, const std::string& name);

}  // namespace vramplan::interop
