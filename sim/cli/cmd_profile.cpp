#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

namespace parsim::cli {
// placeholder until the profile command lands
void add_profile(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("profile", "profile (not yet available)");
  sub->allow_extras();
  sub->callback([&action] { action = [] () -> int { throw InputError("'profile' is not available in this build yet"); }; });
}
}  // namespace parsim::cli
