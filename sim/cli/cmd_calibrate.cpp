// `parsim calibrate FILE [--format table|json] [--out hardware.json]` — fit latency and bandwidth to nccl-tests output.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"
#include "sim/core/text.hpp"
#include "sim/measure/calibrate.hpp"

#include <iostream>
#include <memory>

namespace parsim::cli {

void add_calibrate(CLI::App& root, Action& action) {
  struct Opts {
    std::string file, format = "table", out, gpu;
    int ranks = 0, nodes = 0, gpus_per_node = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = root.add_subcommand(
      "calibrate", "Fit the collective latency (alpha) and bus bandwidth to nccl-tests / rccl-tests output");
  sub->add_option("file", o->file, "text output of all_reduce_perf & co. (as pasted, srun prefixes allowed)")->required();
  sub->add_option("--format", o->format, "table | json")->check(CLI::IsMember({"table", "json"}));
  sub->add_option("--out", o->out, "write a hardware JSON file (for --gpu) with the fitted values in the measured tier");
  sub->add_option("--gpu", o->gpu, "preset or hardware file the --out file starts from (default: from the device list)");
  sub->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node (default: the preset's, 8)");
  sub->add_option("--ranks", o->ranks, "ranks that ran the benchmark (default: the device list or busbw/algbw)");
  sub->add_option("--nodes", o->nodes, "nodes the ranks ran on (default: the device list's hosts)");
  sub->callback([&action, o] {
    action = [o]() -> int {
      if (o->ranks < 0) throw InputError("--ranks must be a positive integer, got " + std::to_string(o->ranks));
      if (o->nodes < 0) throw InputError("--nodes must be a positive integer, got " + std::to_string(o->nodes));
      if (o->gpus_per_node < 0)
        throw InputError("--gpus-per-node must be a positive integer, got " + std::to_string(o->gpus_per_node));
      const std::string text = read_file_text(o->file, "benchmark file", kTextFileLimit);
      const NcclTestFile parsed = parse_nccl_tests(text, o->file);
      CalibrateOptions opt;
      opt.ranks = o->ranks;
      opt.nodes = o->nodes;
      opt.gpus_per_node = o->gpus_per_node > 0 ? o->gpus_per_node : 8;
      std::vector<Calibration> fits;
      for (std::size_t i = 0; i < parsed.blocks.size(); ++i) fits.push_back(calibrate_block(parsed, i, opt));
      const std::size_t primary = primary_block(parsed);
      if (!o->out.empty()) {
        const std::string hw = calibration_hardware_json(fits[primary], o->gpu, o->gpus_per_node, fits[primary].notes);
        write_output_file(o->out, hw, "--out file");
        fits[primary].notes.push_back("wrote " + o->out);
      }
      std::cout << (o->format == "json" ? calibration_json(fits, primary) : calibration_table(fits, primary));
      return 0;
    };
  });
}

}  // namespace parsim::cli
