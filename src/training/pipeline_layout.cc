#include "vramplan/training/pipeline_layout.h"

#include <fmt/format.h>

#include <cctype>

namespace vramplan {
namespace {

constexpr size_t kMaxExpanded = 1'000'000;
constexpr const char* kAccepted =
    "Megatron's layout: stages separated by |, E (embedding) first, t (decoder layer), m (MTP "
    "layer), L (loss) last, (…)*n and x*n to repeat, e.g. Et|(tt|)*30mL";

Error layout_error(std::string_view text, const std::string& why) {
  return Error{"pipeline_layout", std::string(text), kAccepted, why};
}

// Reads the repeat count after a '*' at `i`; advances `i` past it.
Result<size_t> repeat_count(std::string_view s, size_t& i, std::string_view text) {
  size_t n = 0, digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    n = n * 10 + static_cast<size_t>(s[i] - '0');
    if (n > kMaxExpanded) return layout_error(text, "a repeat count over a million");
    ++i, ++digits;
  }
  if (digits == 0) return layout_error(text, "'*' must be followed by a count");
  return n;
}

Result<std::string> append_repeated(std::string out, std::string_view unit, size_t n,
                                    std::string_view text) {
  if (out.size() + unit.size() * n > kMaxExpanded)
    return layout_error(text, "more than a million layers once expanded");
  for (size_t k = 0; k < n; ++k) out.append(unit);
  return out;
}

// One unrolling pass, as Megatron's two regular expressions: with `groups`, "(…)*n" (no nesting);
// without, "x*n". Other text is copied.
Result<std::string> unroll(const std::string& s, bool groups, std::string_view text) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    std::string_view unit = std::string_view(s).substr(i, 1);
    size_t after = i + 1;
    if (groups && s[i] == '(') {
      const size_t close = s.find(')', i);
      if (close == std::string::npos) return layout_error(text, "a '(' without its ')'");
      unit = std::string_view(s).substr(i + 1, close - i - 1);
      if (unit.find('(') != std::string_view::npos)
        return layout_error(text, "parentheses do not nest");
      after = close + 1;
      if (after >= s.size() || s[after] != '*')
        return layout_error(text, "'(…)' must be followed by *n");
    } else if (groups && s[i] == ')') {
      return layout_error(text, "a ')' without its '('");
    }
    size_t n = 1;
    if (after < s.size() && s[after] == '*' && (groups ? s[i] == '(' : true)) {
      ++after;
      Result<size_t> count = repeat_count(s, after, text);
      if (!count) return count.error();
      n = *count;
    }
    Result<std::string> next = append_repeated(std::move(out), unit, n, text);
    if (!next) return next;
    out = std::move(next).value();
    i = after;
  }
  return out;
}

Result<std::string> expand(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) s.push_back(c);
  Result<std::string> grouped = unroll(s, true, text);
  if (!grouped) return grouped;
  return unroll(*grouped, false, text);
}

}  // namespace

Result<PipelineLayout> parse_pipeline_layout(std::string_view text) {
  Result<std::string> expanded = expand(text);
  if (!expanded) return expanded.error();
  const std::string& s = *expanded;
  if (s.empty() || s.front() != 'E') return layout_error(text, "the embedding (E) must come first");
  if (s.back() != 'L') return layout_error(text, "the loss (L) must come last");
  PipelineLayout layout;
  layout.chunk_layers.push_back(0);
  int64_t embeddings = 0, losses = 0, stage = 0;
  for (char c : s) {
    switch (c) {
      case '|':
        layout.chunk_layers.push_back(0);
        ++stage;
        break;
      case 't':
        if (layout.mtp_layers > 0)
          return layout_error(text, "decoder layers must come before the MTP layers");
        ++layout.chunk_layers.back();
        break;
      case 'm':
        ++layout.mtp_layers;
        break;
      case 'E':
        ++embeddings;
        break;
      case 'L':
        ++losses;
        break;
      default:
        return layout_error(text, fmt::format("'{}' is no layer", c));
    }
  }
  if (embeddings != 1 || losses != 1)
    return layout_error(text, "one embedding (E) and one loss (L)");
  const size_t last_stage_start = s.rfind('|') == std::string::npos ? 0 : s.rfind('|') + 1;
  if (layout.mtp_layers > 0 && s.find('m') < last_stage_start)
    return layout_error(text,
                        "MTP layers outside the last stage: vramplan places them with the loss");
  return layout;
}

namespace {

std::string stage_text(int64_t layers) {
  if (layers == 0) return "";
  return layers == 1 ? "t" : fmt::format("t*{}", layers);
}

}  // namespace

std::string pipeline_layout_text(const std::vector<int64_t>& chunk_layers, int64_t mtp_layers) {
  std::string out = "E";
  const size_t n = chunk_layers.size();
  for (size_t i = 0; i < n;) {
    // A run of equal middle stages (not the first or the last, which carry E and L).
    size_t j = i + 1;
    if (i > 0 && i + 1 < n)
      while (j + 1 < n && chunk_layers[j] == chunk_layers[i]) ++j;
    const size_t run = j - i;
    if (i > 0) out += "|";
    if (run > 1)
      out += fmt::format("({}|)*{}", stage_text(chunk_layers[i]), run - 1) +
             stage_text(chunk_layers[i]);
    else
      out += stage_text(chunk_layers[i]);
    i = j;
  }
  if (mtp_layers > 0) out += mtp_layers == 1 ? "m" : fmt::format("m*{}", mtp_layers);
  return out + "L";
}

}  // namespace vramplan
