// `parsim profile FILE... [--format table|json] [--all-kernels] [--steps]` — measure PyTorch-profiler traces
// (options: api::profile_options()).
#include "sim/api/api.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"

#include <iostream>

namespace parsim::cli {

void add_profile(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand(
      "profile", "Measure PyTorch-profiler (Kineto) traces, one file per rank: GPU compute, communication, exposed "
                 "communication, memcpy and idle time (TraceLens GPU-timeline definitions), collectives and skew");
  auto given = register_options(sub, api::profile_options());
  sub->callback([&action, given] {
    action = [given]() -> int {
      const api::ProfileRequest req = api::profile_request(given->values());
      const ProfileReport report = api::run_profile(req);
      std::cout << (req.format == "json" ? profile_json(report) : profile_table(report));
      return 0;
    };
  });
}

}  // namespace parsim::cli
