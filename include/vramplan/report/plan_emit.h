// The planner's first choice as a framework's launch config: `vramplan plan --emit FORMAT` and the
// Python package's plan(emit=...).
#pragma once

#include <cstddef>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"

namespace vramplan {

struct PlanEmit {
  std::string config;  // the launch config or command line, as the format writes it
  std::string format;
  size_t choice = 0;    // the candidate written (0: the first choice)
  std::string layout;   // its layout ("tp4 sp pp8 ...")
  std::string skipped;  // when choice > 0: why the better-ranked ones cannot be written
};

// The best-ranked layout the format can write: each candidate's scenario settings resolved again
// and emitted. Candidates the format cannot express (Megatron-LM has no ZeRO-3) are skipped;
// errors name "emit" when nothing fits or no candidate can be written.
Result<PlanEmit> emit_plan_winner(const PlanResult& result, const std::string& format,
                                  const FileReader& read_file);

}  // namespace vramplan
