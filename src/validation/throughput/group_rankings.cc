#include "validation/throughput/group_rankings.h"

#include <map>
#include <sstream>
#include <utility>

namespace vramplan {

std::pair<std::string, std::string> layout_and_zero(const std::string& id) {
  std::istringstream words(id);
  std::string word, layout, zero;
  while (words >> word) {
    if (word.rfind("zero", 0) == 0 && word.size() > 4) {
      zero = word.substr(4);
      continue;
    }
    layout += (layout.empty() ? "" : " ") + word;
  }
  return zero.empty() ? std::make_pair(std::string(), std::string()) : std::make_pair(layout, zero);
}

namespace {

using GroupKey = std::pair<std::string, int64_t>;

struct GroupRuns {
  std::vector<double> predicted, measured;
  // layout -> ZeRO stage -> measured tokens/s (the first run of each, as the sweep lists them)
  std::map<std::string, std::map<std::string, double>> by_layout;
};

// The ZeRO 0 / ZeRO 1 twins' rank correlation, or {0, 0} below 3 pairs.
std::pair<int, double> twin_ranking(const GroupRuns& g) {
  std::vector<double> zero0, zero1;
  for (const auto& [layout, stages] : g.by_layout) {
    const auto a = stages.find("0"), b = stages.find("1");
    if (a == stages.end() || b == stages.end()) continue;
    zero0.push_back(a->second);
    zero1.push_back(b->second);
  }
  if (zero0.size() < 3) return {0, 0.0};
  return {static_cast<int>(zero0.size()), spearman(zero0, zero1)};
}

}  // namespace

std::vector<GroupRanking> rank_groups(const std::vector<ThroughputRow>& rows) {
  std::vector<GroupKey> order;
  std::map<GroupKey, GroupRuns> groups;
  for (const ThroughputRow& r : rows) {
    if (r.skipped) continue;
    const GroupKey key{r.model, r.gpus};
    if (!groups.count(key)) order.push_back(key);
    GroupRuns& g = groups[key];
    g.predicted.push_back(r.predicted_tok_s);
    g.measured.push_back(r.measured_tok_s);
    const auto [layout, zero] = layout_and_zero(r.id);
    if (!layout.empty()) g.by_layout[layout].emplace(zero, r.measured_tok_s);
  }
  std::vector<GroupRanking> out;
  for (const GroupKey& key : order) {
    const GroupRuns& g = groups[key];
    if (g.predicted.size() < 3) continue;  // two runs give ρ = ±1 whatever the model
    const auto [pairs, twin_rho] = twin_ranking(g);
    out.push_back({key.first, key.second, static_cast<int>(g.predicted.size()),
                   spearman(g.predicted, g.measured), pairs, twin_rho});
  }
  return out;
}

}  // namespace vramplan
