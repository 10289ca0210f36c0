// The vramplan subcommands. Each registers its options on the app and returns the exit code of
// its run: 0 success, 2 bad input (the message names the field, value and what is accepted).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/options.h"

namespace vramplan::cli {

inline constexpr int kExitBadInput = 2;

// Registers the subcommand; *run is set to its action, which returns the exit code.
void add_estimate_command(CLI::App& app, std::function<int()>* run);
void add_list_commands(CLI::App& app, std::function<int()>* run);
void add_validate_command(CLI::App& app, std::function<int()>* run);
void add_infer_command(CLI::App& app, std::function<int()>* run);

// `vramplan validate --serving`: published serving figures, predicted vs logged (table or JSON).
int run_serving_validation(bool json);
void add_serve_command(CLI::App& app, std::function<int()>* run);
void add_roofline_command(CLI::App& app, std::function<int()>* run);
void add_plan_command(CLI::App& app, std::function<int()>* run);
void add_quick_command(CLI::App& app, std::function<int()>* run);
void add_fit_command(CLI::App& app, std::function<int()>* run);

// `vramplan validate --throughput [--calibrate]` (validate_throughput.cc).
int run_validate_throughput(const std::string& format, bool rows, bool check, bool calibrate);
int run_calibrate_published(const std::string& format);
// `vramplan validate --planner` (plan_command.cc).
int run_validate_planner(const std::string& format);

// Prints "vramplan: error: <field> = <value>: ...; accepted: ..." to stderr and returns
// kExitBadInput. A field that is a key of one of `registries` is named as the flag the user typed
// (--seq-len); config.json fields and others stay as they are.
int report_error(const Error& error,
                 std::initializer_list<std::span<const OptionSpec>> registries = {
                     scenario_options()});

// Reads a whole file; errors name `field` (e.g. "model" or "scenario").
Result<std::string> read_text_file(const std::string& path, const std::string& field);
// "megatron, torchtitan, ...": the formats of one kind --emit writes, for --help.
std::string emit_format_names(ImportKind kind);
// An --emit error, its field named as the flag.
int report_emit_error(Error error);

// Reads standard input to its end (at most 16 MiB); errors name `field`.
Result<std::string> read_standard_input(const std::string& field);

}  // namespace vramplan::cli
