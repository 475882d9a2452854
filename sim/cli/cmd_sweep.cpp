#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

namespace parsim::cli {
// placeholder until the sweep command lands
void add_sweep(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("sweep", "sweep (not yet available)");
  sub->allow_extras();
  sub->callback([&action] { action = [] () -> int { throw InputError("'sweep' is not available in this build yet"); }; });
}
void add_merge(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("merge", "merge (not yet available)");
  sub->allow_extras();
  sub->callback([&action] { action = [] () -> int { throw InputError("'merge' is not available in this build yet"); }; });
}
}  // namespace parsim::cli
