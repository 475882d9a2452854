// `parsim calibrate FILE [--format table|json] [--out hardware.json]` — fit latency and bandwidth to nccl-tests output,
// or the GEMM ceiling and k_half to a GEMM table
// (options: api::calibrate_options()).
#include "sim/api/api.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"

#include <iostream>

namespace parsim::cli {

void add_calibrate(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand(
      "calibrate", "Fit the hardware model to a measurement: collective latency (alpha) and bus bandwidth to nccl-tests / "
      "rccl-tests output, or the GPU's GEMM ceiling and k-loop constant to a GEMM table (XLA GemmPerfTable or CSV)");
  auto given = register_options(sub, api::calibrate_options());
  sub->callback([&action, given] {
    action = [given]() -> int {
      const api::CalibrateRequest req = api::calibrate_request(given->values());
      const api::CalibrationResult c = api::run_calibrate(req);
      std::cout << api::calibration_result_text(c, req.format);
      return 0;
    };
  });
}

}  // namespace parsim::cli
