#include "interop/hf/deepspeed_batch.h"

#include <fmt/format.h>

#include "base/text.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

bool is_auto(const json& v) { return v.is_string() && to_lower(v.get<std::string>()) == "auto"; }

bool trainer_given(const DeepspeedContext& ctx) {
  return ctx.trainer != nullptr && ctx.trainer->given;
}

// The HF Trainer fills "auto" from its arguments (integrations/deepspeed.py
// trainer_config_process); without them the key says nothing.
std::optional<Error> batch_key(DocKeys& keys, const DeepspeedContext& ctx, ImportBuilder& out,
                               const char* path, const char* setting, const char* trainer_arg) {
  const json* v = keys.take_set(path);
  if (v == nullptr) return std::nullopt;
  const std::string key = keys.shown(path), text = value_text(*v);
  if (is_auto(*v)) {
    if (trainer_given(ctx))
      out.understood(key, text, fmt::format("auto: the TrainingArguments' {}", trainer_arg));
    else
      out.ignore(key, text,
                 fmt::format("\"auto\" takes the TrainingArguments' {}, which are not given: "
                             "vramplan's {} applies",
                             trainer_arg, setting));
    return std::nullopt;
  }
  Result<int64_t> n = integer_value(key, *v);
  if (!n) return n.error();
  if (*n < 1) return Error{key, text, "a positive integer or \"auto\"", ""};
  return set_agreeing(out, key, text, setting, *n);
}

// An integer setting given beside the file, or the file's own.
std::optional<int64_t> known(const DeepspeedContext& ctx, const ImportBuilder& out,
                             const char* setting) {
  const json* v = nullptr;
  if (ctx.beside && ctx.beside->contains(setting))
    v = &(*ctx.beside)[setting];
  else if (out.has(setting))
    v = &out.get(setting);
  if (v == nullptr) return std::nullopt;
  Result<int64_t> n = integer_value(setting, *v);
  return n ? std::optional<int64_t>(*n) : std::nullopt;
}

// Data-parallel ranks: the world size over the model-parallel sizes given beside the file.
std::optional<int64_t> data_parallel(const DeepspeedContext& ctx, const ImportBuilder& out) {
  std::optional<int64_t> world = known(ctx, out, "gpus");
  if (!world) return std::nullopt;
  int64_t model_parallel = 1;
  for (const char* s : {"tp", "pp", "cp"}) model_parallel *= known(ctx, out, s).value_or(1);
  if (model_parallel < 1 || *world % model_parallel != 0) return std::nullopt;
  return *world / model_parallel;
}

Error mismatch(const std::string& key, int64_t total, const std::string& product) {
  return Error{key, std::to_string(total), product,
               "DeepSpeed requires train_batch_size = train_micro_batch_size_per_gpu × "
               "gradient_accumulation_steps × data-parallel GPUs"};
}

std::optional<Error> solve(const std::string& key, int64_t total, const DeepspeedContext& ctx,
                           ImportBuilder& out) {
  const std::optional<int64_t> m = known(ctx, out, "micro_batch");
  const std::optional<int64_t> a = known(ctx, out, "grad_accum");
  const std::optional<int64_t> dp = data_parallel(ctx, out);
  const std::string text = std::to_string(total);
  if (m && a && dp) {
    if (*m * *a * *dp != total)
      return mismatch(key, total,
                      fmt::format("{} × {} × {} GPUs = {}", *m, *a, *dp, *m * *a * *dp));
    out.understood(key, text, fmt::format("= {} × {} × {} GPUs, as set", *m, *a, *dp));
    return std::nullopt;
  }
  auto divide = [&](int64_t by, const char* setting, const char* what) -> std::optional<Error> {
    if (by < 1 || total % by != 0)
      return mismatch(key, total, fmt::format("a multiple of {} ({})", by, what));
    out.set(key, text, setting, total / by);
    return std::nullopt;
  };
  if (m && a) return divide(*m * *a, "gpus", "micro-batch × accumulation steps");
  if (m && dp) return divide(*m * *dp, "grad_accum", "micro-batch × GPUs");
  if (a && dp) return divide(*a * *dp, "micro_batch", "accumulation steps × GPUs");
  out.set(key, text, "global_batch", total);
  return std::nullopt;
}

}  // namespace

std::optional<Error> read_deepspeed_batch(DocKeys& keys, const DeepspeedContext& ctx,
                                          ImportBuilder& out) {
  if (auto e = batch_key(keys, ctx, out, "train_micro_batch_size_per_gpu", "micro_batch",
                         "per_device_train_batch_size"))
    return e;
  if (auto e = batch_key(keys, ctx, out, "gradient_accumulation_steps", "grad_accum",
                         "gradient_accumulation_steps"))
    return e;
  const json* v = keys.take_set("train_batch_size");
  if (v == nullptr) return std::nullopt;
  const std::string key = keys.shown("train_batch_size");
  if (is_auto(*v)) {
    if (trainer_given(ctx))
      out.understood(key, "auto", "auto: micro-batch × accumulation steps × GPUs");
    else
      out.ignore(key, "auto", "\"auto\" is set by the HF Trainer, whose arguments are not given");
    return std::nullopt;
  }
  Result<int64_t> total = integer_value(key, *v);
  if (!total) return total.error();
  if (*total < 1) return Error{key, value_text(*v), "a positive integer or \"auto\"", ""};
  return solve(key, *total, ctx, out);
}

}  // namespace vramplan::interop::hf
