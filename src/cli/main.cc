// vramplan: how much GPU memory an LLM training run needs, per GPU and per pipeline stage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "vramplan: per-GPU memory of LLM training, where every byte goes, and whether it fits.\n"
      "Run `vramplan estimate --help` for the training estimate's options."};
  app.set_version_flag("--version", "vramplan 0.1.0");
  app.require_subcommand(1);
  std::function<int()> run;
  vramplan::cli::add_estimate_command(app, &run);
  vramplan::cli::add_list_commands(app, &run);
  vramplan::cli::add_validate_command(app, &run);
  vramplan::cli::add_infer_command(app, &run);
  vramplan::cli::add_serve_command(app, &run);
  vramplan::cli::add_roofline_command(app, &run);
  vramplan::cli::add_plan_command(app, &run);
  vramplan::cli::add_quick_command(app, &run);
  vramplan::cli::add_fit_command(app, &run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Unknown options, missing values, bad subcommands: the user's input, so exit code 2.
    std::cerr << "vramplan: error: " << e.what() << "\n(see `vramplan --help`)\n";
    return vramplan::cli::kExitBadInput;
  }
  try {
    return run ? run() : 0;
  } catch (const std::exception& e) {
    std::cerr << "vramplan: internal error: " << e.what() << "\n";
    return 1;
  }
}
