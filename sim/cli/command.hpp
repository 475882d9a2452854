// parsim sim/cli — each subcommand registers its options on a CLI11 sub-app and returns the action to run after
// parsing. Actions throw InputError for bad input; main() turns that into `parsim: error: …` and exit status 2.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>

namespace parsim::cli {

using Action = std::function<int()>;  // returns the process exit status

void add_predict(CLI::App& root, Action& action);
void add_sweep(CLI::App& root, Action& action);
void add_merge(CLI::App& root, Action& action);
void add_profile(CLI::App& root, Action& action);
void add_calibrate(CLI::App& root, Action& action);
void add_validate(CLI::App& root, Action& action);
void add_compare(CLI::App& root, Action& action);

}  // namespace parsim::cli
