// `parsim validate --profile FILE... <predict flags>` — the simulated step beside the measured one.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"
#include "sim/measure/profile.hpp"
#include "sim/measure/validate.hpp"
#include "sim/step/evaluate.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace parsim::cli {

void add_validate(CLI::App& root, Action& action) {
  struct Opts {
    std::vector<std::string> profiles;
    ScenarioArgs args;
    std::string format = "table";
    bool all_kernels = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = root.add_subcommand(
      "validate", "Simulate a plan and put it beside a measured profile (step, compute, communication, idle, memory)");
  sub->add_option("--profile", o->profiles, "Kineto trace files of the run (one per rank)")->required();
  sub->add_option("--model", o->args.model, "model name or JSON file")->required();
  sub->add_option("--plan", o->args.plan, "plan string, e.g. tp8pp2dp4")->required();
  sub->add_option("--gpu", o->args.gpu, "GPU/node preset or hardware JSON file (default h100)");
  sub->add_option("--gpus-per-node", o->args.gpus_per_node, "GPUs per node");
  sub->add_option("--seq", o->args.seq, "sequence length");
  sub->add_option("--gbs", o->args.gbs, "global batch size (sequences)");
  sub->add_option("--mbs", o->args.mbs, "micro-batch size (sequences)");
  sub->add_option("--recompute", o->args.recompute, "none | selective | full");
  sub->add_flag("--sp", o->args.sp, "Megatron sequence parallelism");
  sub->add_option("--precision", o->args.precision, "bf16 | fp16 | fp8 | fp32");
  auto* schedule = sub->add_option("--schedule", o->args.schedule, "gpipe | 1f1b | interleaved");
  sub->add_option("--format", o->format, "table | json")->check(CLI::IsMember({"table", "json"}));
  sub->add_flag("--all-kernels", o->all_kernels, "count GPU events with no CPU launch in the measurement too");
  sub->callback([&action, o, schedule] {
    o->args.schedule_given = schedule->count() > 0;
    action = [o]() -> int {
      const Scenario sc = make_scenario(o->args);
      const StepReport rep = evaluate(sc);
      ProfileOptions popt;
      popt.steps = true;  // per-step figures: the ProfilerStep windows
      popt.all_kernels = o->all_kernels;
      const ProfileReport prof = profile_traces(o->profiles, popt);
      Validation v = measure_for_validation(prof);
      const auto stage = static_cast<std::size_t>(rep.critical_stage);
      if (stage >= rep.stages.size()) throw InputError("validate: the simulation reported no pipeline stage");
      const StageMetrics& st = rep.stages[stage];
      v.predicted.step_time_s = rep.step_time_s;
      v.predicted.compute_s = st.compute_s;
      v.predicted.comm_s = st.comm_s;
      v.predicted.exposed_comm_s = st.exposed_comm_s;
      v.predicted.idle_s = st.idle_s;
      v.predicted.memory_peak_gib = st.allocated_peak_gib > 0 ? st.allocated_peak_gib : rep.memory.allocated_peak_gib;
      const int world = sc.plan.world();
      for (const auto& r : prof.ranks)
        if (r.world_size > 0 && r.world_size != world) {
          v.notes.push_back("the trace's world size is " + std::to_string(r.world_size) + " but the plan uses " +
                            std::to_string(world) + " GPUs");
          break;
        }
      nlohmann::ordered_json extra;
      extra["model"] = utf8_sanitize(o->args.model);  // flags may hold any bytes; JSON output must be UTF-8
      extra["plan"] = utf8_sanitize(o->args.plan);
      extra["gpu"] = utf8_sanitize(o->args.gpu);
      extra["critical_stage"] = rep.critical_stage;
      extra["mfu"] = rep.mfu;
      extra["bubble_fraction"] = rep.bubble_fraction;
      if (o->format == "json") std::cout << validation_json(v, dump_output(extra, -1));
      else std::cout << validation_table(v);
      return 0;
    };
  });
}

}  // namespace parsim::cli
