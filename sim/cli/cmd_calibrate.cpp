// `parsim calibrate FILE [--format table|json] [--out hardware.json]` — fit latency and bandwidth to nccl-tests output
// (options: api::calibrate_options()).
#include "sim/api/api.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"

#include <iostream>

namespace parsim::cli {

void add_calibrate(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand(
      "calibrate", "Fit the collective latency (alpha) and bus bandwidth to nccl-tests / rccl-tests output");
  auto given = register_options(sub, api::calibrate_options());
  sub->callback([&action, given] {
    action = [given]() -> int {
      const api::CalibrateRequest req = api::calibrate_request(given->values());
      const api::CalibrationResult c = api::run_calibrate(req);
      std::cout << (req.format == "json" ? calibration_json(c.fits, c.primary) : calibration_table(c.fits, c.primary));
      return 0;
    };
  });
}

}  // namespace parsim::cli
