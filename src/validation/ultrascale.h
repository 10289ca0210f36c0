// The Ultra-Scale Playbook sweep (data/measurements/ultrascale_playbook_*.csv) as Scenarios:
// shared by the memory suite (validation.cc) and the throughput suite (throughput_validation.cc).
#pragma once

#include "base/csv.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// One benchmark row as nanotron ran it (defined in validation.cc).
Scenario ultrascale_scenario(const CsvRow& row);

}  // namespace vramplan
