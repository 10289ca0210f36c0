// Serving offload: weights in pinned CPU memory, swap space, host KV pools (docs/offload.md).
#include "serving/serving_offload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace vramplan {
namespace {

constexpr const char* kSourceVllmWeights =
    "vLLM model_executor/models/utils.py make_layers → maybe_offload_to_cpu (recent releases: "
    "model_executor/offloader/uva.py UVAOffloader): the decoder layers' parameters, one after "
    "another until cpu_offload_gb GiB, move to pinned CPU memory and the GPU reads them through "
    "UVA in every forward (no GPU copy); the embedding and the LM head stay on the GPU";
constexpr const char* kSourceSglangWeights =
    "SGLang srt/utils/offloader.py OffloaderV1.maybe_offload_to_cpu: the decoder layers' "
    "parameters, until cpu_offload_gb GiB, to pinned CPU memory; the embedding and LM head stay";
constexpr const char* kSourceSglangCopy =
    "SGLang srt/utils/offloader.py OffloaderV1: an offloaded layer's forward copies its "
    "state_dict to the GPU (v.to(device)) and runs functional_call; freed after the layer";
constexpr const char* kSourceSwap =
    "vLLM V0 worker/worker.py determine_num_available_blocks: num_cpu_blocks = swap_space_bytes "
    "// cache_block_size, allocated pinned by worker/cache_engine.py for preempted sequences' "
    "blocks (V1 preempts by recomputing and allocates none)";
constexpr const char* kSourceKvOffload =
    "vLLM config/kv_offloading.py: kv_bytes_per_rank = kv_offloading_size GiB / (tp × pp), "
    "the native OffloadingConnector's pinned CPU blocks or LMCache's max_local_cpu_size";
constexpr const char* kSourceHiCache =
    "SGLang mem_cache/memory_pool_host.py HostKVCache: size = hicache_size·1e9 // "
    "size_per_token, else the device pool's size × hicache_ratio, aligned up to whole pages (+1 "
    "page); pinned host memory";

std::string gib_text(Wide bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30));
}

Error engine_error(const char* field, const std::string& value, const std::string& accepted,
                   const std::string& reason) {
  return Error{field, value, accepted, reason};
}

Row make_row(std::string component, Wide bytes, CountsToward toward, std::string formula,
             const char* source, bool explain) {
  return Row{std::move(component), static_cast<int64_t>(bytes), toward,
             explain ? std::move(formula) : "", explain ? source : ""};
}

}  // namespace

std::optional<Error> check_serving_offload(const InferenceScenario& s) {
  const ServingOffload& o = s.offload;
  const std::pair<const char*, int64_t> sizes[] = {{"cpu_offload_gib", o.cpu_offload_bytes},
                                                   {"swap_space_gib", o.swap_space_bytes},
                                                   {"kv_offload_gib", o.kv_offload_bytes},
                                                   {"hicache_size_gb", o.hicache_bytes}};
  for (const auto& [name, bytes] : sizes)
    if (bytes < 0 || bytes > (int64_t{1} << 50))
      return Error{name, fmt::format("{}", static_cast<double>(bytes) / (1 << 30)),
                   "0 to 1,048,576 (GiB)", ""};
  const bool vllm = s.engine == ServingEngine::kVllm;
  if (!vllm && o.swap_space_bytes > 0)
    return engine_error("swap_space_gib", gib_text(o.swap_space_bytes), "0 with engine sglang",
                        "--swap-space is vLLM's (SGLang retracts requests and recomputes)");
  if (!vllm && o.kv_offload_bytes > 0)
    return engine_error("kv_offload_gib", gib_text(o.kv_offload_bytes), "0 with engine sglang",
                        "--kv-offloading-size is vLLM's; SGLang's host KV cache is "
                        "enable_hierarchical_cache");
  if (vllm && o.hierarchical_cache)
    return engine_error("enable_hierarchical_cache", "true", "false with engine vllm",
                        "the hierarchical cache is SGLang's; vLLM's host KV cache is "
                        "kv_offload_gib");
  if (!std::isfinite(o.hicache_ratio) || o.hicache_ratio <= 0 || o.hicache_ratio > 1000)
    return Error{"hicache_ratio", fmt::format("{}", o.hicache_ratio),
                 "a ratio above 0 and at most 1000 (SGLang's default 2)", ""};
  if (o.hierarchical_cache && o.hicache_bytes == 0 && !s.mem_fraction_static)
    return Error{"hicache_ratio", fmt::format("{}", o.hicache_ratio),
                 "mem_fraction_static too (the GPU pool the ratio multiplies), or hicache_size_gb",
                 "the host pool is hicache_ratio × the GPU pool's tokens"};
  return std::nullopt;
}

WeightOffload offload_layer_weights(const InferenceScenario& s, std::vector<Row>& rows,
                                    const std::vector<size_t>& layer_rows, int64_t layers,
                                    bool explain) {
  WeightOffload w;
  w.layers = layers;
  for (size_t i : layer_rows) w.offloadable += rows[i].bytes;
  const Wide wanted = s.offload.cpu_offload_bytes;
  if (wanted <= 0 || w.offloadable <= 0) return w;
  const Wide target = std::min(wanted, w.offloadable);
  for (size_t i : layer_rows) {
    Row& row = rows[i];
    const Wide share = Wide{row.bytes} * target / w.offloadable;
    if (share <= 0) continue;
    row.bytes -= static_cast<int64_t>(share);
    w.offloaded += share;
    if (explain)
      row.formula += fmt::format(" − {} kept in CPU memory (its share of --cpu-offload-gib)",
                                 short_bytes(share));
  }
  return w;
}

std::vector<Row> weight_offload_rows(const InferenceScenario& s, const WeightOffload& w,
                                     bool explain) {
  std::vector<Row> out;
  if (w.offloaded <= 0) return out;
  const bool vllm = s.engine == ServingEngine::kVllm;
  out.push_back(make_row(
      "weights offloaded to CPU (pinned)", w.offloaded, CountsToward::kHost,
      fmt::format("min(--cpu-offload-gib {}, the {} decoder layers' weights {}) = {}, taken from "
                  "each layer row in proportion",
                  gib_text(s.offload.cpu_offload_bytes), w.layers, gib_text(w.offloadable),
                  gib_text(w.offloaded)),
      vllm ? kSourceVllmWeights : kSourceSglangWeights, explain));
  if (!vllm && w.layers > 0) {
    const Wide layer = (w.offloadable + w.layers - 1) / w.layers;
    const Wide copy = std::min(w.offloaded, layer);
    out.push_back(make_row(
        "offloaded layer copied in (transient)", copy, CountsToward::kAllocated,
        fmt::format("min(offloaded {}, one layer ⌈{} / {} layers⌉ = {})", gib_text(w.offloaded),
                    gib_text(w.offloadable), w.layers, short_bytes(layer)),
        kSourceSglangCopy, explain));
  }
  return out;
}

std::optional<Error> check_offload_fits(const InferenceScenario& s, Wide largest_offloadable) {
  if (s.offload.cpu_offload_bytes <= largest_offloadable) return std::nullopt;
  return Error{"cpu_offload_gib", gib_text(s.offload.cpu_offload_bytes),
               fmt::format("at most {} (the decoder layers' weights on one GPU)",
                           gib_text(largest_offloadable)),
               "more offload than the weights the engine can move (the embedding and LM head "
               "stay on the GPU)"};
}

void add_kv_tiers(const InferenceScenario& s, const InferenceRank& r,
                  const std::optional<Capacity>& capacity, Wide kv_cache, int64_t context,
                  bool explain, std::vector<Row>& rows, std::vector<KvTier>& tiers) {
  const ServingOffload& o = s.offload;
  const Wide per_token = r.kv_bytes_per_token;
  const Wide page = Wide{s.block_size} * per_token;
  auto text = [explain](std::string t) { return explain ? t : std::string(); };
  KvTier gpu{"gpu", 0, 0, "", ""};
  if (capacity) {
    gpu.bytes = page > 0 ? static_cast<int64_t>(Wide{capacity->num_blocks} * page)
                         : capacity->kv_budget_bytes;
    gpu.tokens = capacity->max_kv_tokens;
    gpu.formula = text(fmt::format("the KV budget at the memory fraction: {} blocks × {} tokens",
                                   group_digits(capacity->num_blocks), s.block_size));
    gpu.source = text(capacity->source);
  } else {
    gpu.bytes = static_cast<int64_t>(kv_cache);
    gpu.tokens = s.batch * context;
    gpu.formula =
        text(fmt::format("no memory fraction given: the KV cache row, batch {} × "
                         "context {} tokens",
                         s.batch, context));
  }
  tiers.push_back(gpu);
  auto host = [&](const char* tier, const char* component, Wide bytes, Wide tokens,
                  std::string formula, const char* source) {
    if (bytes <= 0) return;
    rows.push_back(make_row(component, bytes, CountsToward::kHost, formula, source, explain));
    tiers.push_back(KvTier{tier, static_cast<int64_t>(bytes), static_cast<int64_t>(tokens),
                           text(std::move(formula)), text(source)});
  };
  if (o.swap_space_bytes > 0 && page > 0) {
    const Wide blocks = Wide{o.swap_space_bytes} / page;
    host("host: swap space", "CPU swap space (preempted KV blocks)", blocks * page,
         blocks * s.block_size,
         fmt::format("⌊--swap-space-gib {} / block {} B⌋ = {} blocks × {} B",
                     gib_text(o.swap_space_bytes), group_digits(page), group_digits(blocks),
                     group_digits(page)),
         kSourceSwap);
  }
  if (o.kv_offload_bytes > 0) {
    const Wide ranks = Wide{s.tp} * s.pp;
    const Wide bytes = Wide{o.kv_offload_bytes} / ranks;
    const Wide blocks = page > 0 ? bytes / page : 0;
    host("host: KV offload", "KV cache offloaded to CPU", bytes, blocks * s.block_size,
         fmt::format("--kv-offload-gib {} / (tp {} × pp {}) = {}; ⌊/ block {} B⌋ = {} blocks",
                     gib_text(o.kv_offload_bytes), s.tp, s.pp, gib_text(bytes), group_digits(page),
                     group_digits(blocks)),
         kSourceKvOffload);
  }
  if (o.hierarchical_cache && per_token > 0) {
    const Wide device = capacity ? capacity->max_kv_tokens : 0;
    const Wide wanted =
        o.hicache_bytes > 0
            ? Wide{o.hicache_bytes} / per_token
            : static_cast<Wide>(std::floor(static_cast<double>(device) * o.hicache_ratio));
    const Wide page_tokens = std::max<int64_t>(s.block_size, 1);
    const Wide tokens = (wanted / page_tokens + 1) * page_tokens;
    const std::string size =
        o.hicache_bytes > 0
            ? fmt::format("⌊--hicache-size-gb {:.2f} GB / {} B per token⌋ = {}",
                          static_cast<double>(o.hicache_bytes) / 1e9, group_digits(per_token),
                          group_digits(wanted))
            : fmt::format("GPU pool {} tokens × --hicache-ratio {} = {}", group_digits(device),
                          o.hicache_ratio, group_digits(wanted));
    host("host: HiCache", "hierarchical KV cache (host pool)", tokens * per_token, tokens,
         fmt::format("({}, up to whole pages of {} + 1 page) = {} tokens × {} B", size,
                     s.block_size, group_digits(tokens), group_digits(per_token)),
         kSourceHiCache);
  }
}

void add_offload_warnings(const InferenceScenario& s, InferenceEstimate& e) {
  const ServingOffload& o = s.offload;
  if (o.swap_space_bytes > 0)
    e.warnings.push_back(
        "swap_space_gib: vLLM V1 (the default since v0.8) preempts by recomputing and allocates "
        "no swap space; the host row is what V0 allocates");
  if (!o.hierarchical_cache || e.kv_tiers.empty()) return;
  const KvTier& gpu = e.kv_tiers.front();
  for (const KvTier& t : e.kv_tiers)
    if (t.tier == "host: HiCache" && t.tokens <= gpu.tokens)
      e.warnings.push_back(fmt::format(
          "the HiCache host pool ({} tokens) is not larger than the GPU pool ({} tokens): "
          "SGLang requires it to be (older releases assert; newer ones warn)",
          t.tokens, gpu.tokens));
}

}  // namespace vramplan
