#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

namespace parsim::cli {
// placeholder until the validate command lands
void add_validate(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("validate", "validate (not yet available)");
  sub->allow_extras();
  sub->callback([&action] { action = [] () -> int { throw InputError("'validate' is not available in this build yet"); }; });
}
}  // namespace parsim::cli
