// `parsim profile FILE... [--format table|json] [--all-kernels] [--steps]` — measure PyTorch-profiler traces.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/measure/profile.hpp"

#include <iostream>
#include <memory>

namespace parsim::cli {

void add_profile(CLI::App& root, Action& action) {
  struct Opts {
    std::vector<std::string> files;
    std::string format = "table";
    bool all_kernels = false, steps = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = root.add_subcommand(
      "profile", "Measure PyTorch-profiler (Kineto) traces, one file per rank: GPU compute, communication, exposed "
                 "communication, memcpy and idle time (TraceLens GPU-timeline definitions), collectives and skew");
  sub->add_option("files", o->files, "Kineto Chrome-trace JSON files (plain or .gz), one per rank")->required();
  sub->add_option("--format", o->format, "table | json")->check(CLI::IsMember({"table", "json"}));
  sub->add_flag("--all-kernels", o->all_kernels, "also count GPU events that no CPU launch is linked to");
  sub->add_flag("--steps", o->steps, "measure only GPU work launched in the ProfilerStep windows (HTA's view)");
  sub->callback([&action, o] {
    action = [o]() -> int {
      ProfileOptions opt;
      opt.all_kernels = o->all_kernels;
      opt.steps = o->steps;
      const ProfileReport report = profile_traces(o->files, opt);
      std::cout << (o->format == "json" ? profile_json(report) : profile_table(report));
      return 0;
    };
  });
}

}  // namespace parsim::cli
