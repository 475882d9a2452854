#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

namespace parsim::cli {
// placeholder until the calibrate command lands
void add_calibrate(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("calibrate", "calibrate (not yet available)");
  sub->allow_extras();
  sub->callback([&action] { action = [] () -> int { throw InputError("'calibrate' is not available in this build yet"); }; });
}
}  // namespace parsim::cli
