// Ordering within the Ultra-Scale sweep's (model, GPU count) groups: how well the step-time model
// ranks the layouts of one model on one cluster, and how well the sweep ranks them against
// itself — runs of the same layout under ZeRO 0 and ZeRO 1 should order alike, and where they do
// not, no model can order that group better than its own measurements do.
#pragma once

#include <string>
#include <vector>

#include "validation/throughput/throughput_validation.h"

namespace vramplan {

// Groups of at least 3 compared runs, in the order the rows first name them.
std::vector<GroupRanking> rank_groups(const std::vector<ThroughputRow>& rows);

// A run's id without its ZeRO stage ("8B n2 dp4 tp2 pp2 zero1 mb1 ga64" -> "8B n2 dp4 tp2 pp2 mb1
// ga64") and the stage ("1"); "" for both when the id names none.
std::pair<std::string, std::string> layout_and_zero(const std::string& id);

}  // namespace vramplan
