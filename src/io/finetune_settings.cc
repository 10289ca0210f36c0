#include "io/finetune_settings.h"

#include "base/text.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/training/finetune.h"

namespace vramplan {

std::optional<Error> read_finetune_settings(const nlohmann::json& settings, Scenario& s) {
  Finetune& f = s.finetune;
  auto has = [&](const char* key) { return settings.contains(key) && !settings[key].is_null(); };
  std::string method;
  if (auto e = read_text_setting(settings, "finetune", method)) return e;
  if (has("finetune")) {
    bool known = false;
    for (size_t i = 0; i < kFinetuneNames.size(); ++i)
      if (to_lower(method) == kFinetuneNames[i]) {
        f.method = static_cast<FinetuneMethod>(i);
        known = true;
      }
    if (!known) return Error{"finetune", method, "none, lora, qlora", ""};
  }
  if (f.method == FinetuneMethod::kNone)
    for (const char* key : {"lora_rank", "lora_targets", "adapter_dtype"})
      if (has(key))
        return Error{
            key,
            settings[key].is_string() ? settings[key].get<std::string>() : settings[key].dump(),
            "finetune lora or qlora", "LoRA settings need a LoRA method"};
  if (auto e = read_integer_setting(settings, "lora_rank", f.lora_rank)) return e;
  std::string targets;
  if (auto e = read_text_setting(settings, "lora_targets", targets)) return e;
  if (has("lora_targets")) {
    Result<uint32_t> parsed = parse_lora_targets(targets);
    if (!parsed) return parsed.error();
    f.lora_targets = *parsed;
  }
  std::string adapter;
  if (auto e = read_text_setting(settings, "adapter_dtype", adapter)) return e;
  if (has("adapter_dtype")) {
    std::optional<DType> t = parse_dtype(adapter);
    if (!t) return Error{"adapter_dtype", adapter, std::string(kDTypeChoices), "unknown dtype"};
    f.adapter_dtype = *t;
  }
  if (auto e = read_bool_setting(settings, "freeze_embeddings", f.freeze_embeddings)) return e;
  if (auto e = read_integer_setting(settings, "freeze_first_layers", f.freeze_first_layers))
    return e;
  // QLoRA's recipe pages its optimizer state with bitsandbytes' 8-bit AdamW.
  if (f.method == FinetuneMethod::kQlora && !has("optimizer"))
    s.training.optimizer = Optimizer::kAdam8bit;
  return validate_finetune(s);
}

}  // namespace vramplan
