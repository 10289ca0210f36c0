// The quick calculator's answer for people (table, CSV) and programs (JSON), docs/quick.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vramplan/io/quick_settings.h"
#include "vramplan/report/report.h"

namespace vramplan {

// Stable JSON keys: example (null when none), inputs {params, layers, hidden, batch, seq_len,
// mode, weight_dtype, grad_dtype, activation_dtype, optimizer_dtype, master_weights, optimizer,
// checkpoint_factor, kv_cache, cache_tokens, kv_dtype, overhead_bytes, allocator_overhead},
// activation_multiplier {value, source}, rows[] {component, bytes, counts_toward, formula,
// source}, total_bytes, calculator_gib (an example's; null otherwise), full_estimate {model,
// command, parameters, total_bytes, allocated_bytes, rows[] {component, bytes, counts_toward},
// settings} or null, notes[].
nlohmann::json quick_to_json(const QuickAnswer& answer);
std::string render_quick_table(const QuickAnswer& answer, const TableOptions& options = {});
// component,bytes,gib,counts_toward,formula,source (RFC 4180 quoting), then a total line.
std::string render_quick_csv(const QuickAnswer& answer);
// The shipped examples: name, title, settings and the calculator's figure.
nlohmann::json quick_examples_json();
std::string render_quick_examples();

}  // namespace vramplan
