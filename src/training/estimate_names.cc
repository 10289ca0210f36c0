// Names of the estimate's enums as they appear in every output format (JSON, CSV, tables).
#include "vramplan/training/estimate.h"

namespace vramplan {

std::string_view counts_toward_name(CountsToward c) {
  switch (c) {
    case CountsToward::kAllocated:
      return "allocated";
    case CountsToward::kReserved:
      return "reserved";
    case CountsToward::kDevice:
      return "device";
    case CountsToward::kHost:
      return "host";
    case CountsToward::kDisk:
      return "disk";
  }
  return "allocated";
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kTight:
      return "tight";
    case Verdict::kOom:
      return "oom";
  }
  return "fits";
}

}  // namespace vramplan
