// The invariants every fuzz target checks beyond "no crash" (docs/reliability.md):
//   accepted input -> a JSON answer that parses, every byte count in it finite and non-negative,
//                     and allocated <= reserved <= device wherever an object reports all three;
//   rejected input -> one Error that names a field (the setting, key or "body" at fault).
// A broken invariant aborts with a message, which libFuzzer reports as a crash with its input.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "vramplan/base/error.h"

namespace vramplan::fuzz {

// Prints `what` and the offending detail to stderr, then aborts.
[[noreturn]] void fail(std::string_view what, std::string_view detail);

// Byte counts (keys ending in "bytes", "bytes_low", "bytes_high", and "bytes_per_*") are numbers,
// finite and >= 0; each object's allocated/reserved/device triple is ordered.
void check_bytes(const nlohmann::json& answer, const std::string& path = "");

// A rejection names its field and says why (reason or accepted values).
void check_error(const Error& error);

// An HTTP answer of the API: its body parses as JSON; 200 passes check_bytes, 4xx carries
// {"error": {"field": non-empty, ...}}; 5xx other than the Hub's 502/503/504 is a failure.
void check_api_answer(int status, const std::string& body);

// Offline Hub settings for the server's handlers: a "model": "org/name" in a fuzzed body must
// never reach the network.
void use_offline_hub();

}  // namespace vramplan::fuzz
