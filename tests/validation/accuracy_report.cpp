// parsim_accuracy — per-row accuracy report on the published measured runs, for calibrating the compute and network
// models. Not a test: it prints and exits 0 whatever the error (test_validation asserts the bound).
//
//   parsim_accuracy [--data FILE] [--sort] [--tsv] [FILTER ...]
//     FILTER   a source id (S04) or a row id (R0001), case-insensitive; several are OR-ed; none = every row
//     --sort   rows by |error|, largest first (default: file order)
//     --tsv    tab-separated rows with a header (for scripts), no per-source table
//     --host-megatron X  use host factor X for the Megatron-Core stack instead of calibration.json's (exploration)
//     --host-legacy X    the same for the legacy Megatron-LM / Megatron-DeepSpeed stack (--stack megatron-legacy)
//     --data   another CSV with the same columns (default: tests/data/validation/published_runs_usable.csv)
//     --cv     leave-one-source-out cross-validation of the fitted constants (hardware/calibration.json) over every
//              measured file of tests/data/validation (cross_validation.hpp): per source, the in-sample error (constants
//              fitted on all rows) and the out-of-sample error (refitted without that source); then the host factor
//              across S53's configurations, and each GPU generation left out (its GPU-bound rows predicted with every
//              constant refitted without the generation's rows)
//
// Columns: row, source, model, gpu preset, plan/seq/gbs/mbs/recompute/precision, measured and predicted step time,
// error = (predicted − measured)/measured, predicted MFU, and stage 0's split of the step: compute (union of
// compute-stream busy time), exposed communication, and the rest (idle: pipeline bubble and waits).
#include "cross_validation.hpp"
#include "published_runs.hpp"

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <iostream>

using namespace parsim;
using namespace parsim::validation;

namespace {

constexpr const char* kUsage = "usage: parsim_accuracy [--data FILE] [--sort] [--tsv] [SOURCE_ID|ROW_ID ...]\n"
                                "       parsim_accuracy --cv\n";

int run_cv() {
  std::vector<std::vector<PublishedRun>> files;
  std::vector<PublishedRun> all;
  try {
    for (const std::string& f : cv_data_files())
      for (auto& r : load_published_runs(f)) all.push_back(std::move(r));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parsim_accuracy: error: %s\n", e.what());
    return 2;
  }
  std::vector<CvRow> rows = cv_rows(all);
  mark_host_bound(rows);
  const CvResult cv = cross_validate(rows);
  std::printf("leave-one-source-out cross-validation of hardware/calibration.json (%zu rows)\n", rows.size());
  const std::vector<CvConstant> consts = cv_constants();
  std::printf("%-24s %12s %18s\n", "constant", "all rows", "calibration.json");
  for (const CvConstant& c : consts)
    std::printf("%-24s %12.3f %18.3f\n", c.name, cv.all.*c.field, default_fitted_constants().*c.field);
  std::printf("host_megatron and host_legacy are fitted on the host-bound rows of their program only (the prediction moves > %.0f %% between factors %.1f "
              "and %.1f); a fit with none falls back to 1\n\n",
              100 * kHostBoundShift, kHostProbeLo, kHostProbeHi);
  std::printf("%-6s %5s %10s %10s %14s   refitted without the source:", "source", "rows", "host-bound", "in-sample",
              "out-of-sample");
  for (const CvConstant& c : consts) std::printf(" %s", c.name);
  std::printf("\n");
  for (const CvSource& s : cv.sources) {
    std::printf("%-6s %5d %10d %9.1f%% %13.1f%%  ", s.source.c_str(), s.rows, s.host_bound_rows, 100 * s.in_sample,
                100 * s.out_of_sample);
    for (const CvConstant& c : consts) std::printf(" %.3f", s.fitted_without.*c.field);
    std::printf("\n");
  }
  std::printf("%-6s %5s %10s %9.1f%% %13.1f%%   (mean over sources; worst out-of-sample: %s %.1f%%)\n", "mean", "", "",
              100 * cv.mean_in, 100 * cv.mean_out, cv.worst.c_str(), 100 * cv.max_out);
  // S53 is the one host-bound source: leaving it out leaves the host factor unconstrained. Within it, the factor is
  // fitted on one group of configurations and the other group predicted with it, both ways.
  std::printf("\nthe host factor across configurations of the host-bound source S53 (fit on one group, predict the "
              "other):\n");
  std::printf("%-18s %-32s %5s %9s %9s %14s\n", "split", "group", "rows", "factor", "in-sample", "out-of-sample");
  for (const CvSplit& s : host_bound_splits(rows)) {
    std::printf("%-18s %-32s %5d %9.3f %8.1f%% %13.1f%%\n", s.name.c_str(), s.group_a.c_str(), s.rows_a, s.fit_a,
                100 * s.in_a, 100 * s.out_a);
    std::printf("%-18s %-32s %5d %9.3f %8.1f%% %13.1f%%\n", "", s.group_b.c_str(), s.rows_b, s.fit_b, 100 * s.in_b,
                100 * s.out_b);
  }
  // A GPU generation none of whose runs set a constant: refitted without it, its GPU-bound rows predicted.
  std::printf("\nleave one GPU generation out (every constant refitted without the generation's rows; its GPU-bound rows "
              "predicted; mean over its sources):\n");
  std::printf("%-30s %5s %8s %10s %14s   refitted without it:", "generation", "rows", "sources", "in-sample",
              "out-of-sample");
  for (const CvConstant& c : consts) std::printf(" %s", c.name);
  std::printf("\n");
  for (const CvGeneration& g : leave_generation_out(rows, cv.all)) {
    std::printf("%-30s %5d %8d %9.1f%% %13.1f%%  ", g.name(), g.rows, g.sources, 100 * g.in_sample,
                100 * g.out_of_sample);
    for (const CvConstant& c : consts) std::printf(" %.3f", g.fitted_without.*c.field);
    std::printf("\n");
  }
  return 0;
}

std::string clip(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

int usage(const char* msg) {
  std::fprintf(stderr, "parsim_accuracy: %s\n%s", msg, kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = default_data_path();
  bool sort = false, tsv = false;
  std::vector<std::string> filters;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--cv") return run_cv();
    if (arg == "--sort") sort = true;
    else if (arg == "--tsv") tsv = true;
    else if (arg == "--host-megatron") {
      if (i + 1 >= argc) return usage("--host-megatron needs a factor");
      host_megatron_override() = std::atof(argv[++i]);
      if (!(host_megatron_override() > 0)) return usage("--host-megatron needs a positive factor");
    } else if (arg == "--host-legacy") {
      if (i + 1 >= argc) return usage("--host-legacy needs a factor");
      host_legacy_override() = std::atof(argv[++i]);
      if (!(host_legacy_override() > 0)) return usage("--host-legacy needs a positive factor");
    } else if (arg == "--hw-dir") {
      if (i + 1 >= argc) return usage("--hw-dir needs a folder");
      hardware_override_dir() = argv[++i];
    } else if (arg == "--data") {
      if (i + 1 >= argc) return usage("--data needs a file");
      data = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg.rfind("--", 0) == 0) {
      return usage(("unknown option '" + arg + "'").c_str());
    } else {
      filters.push_back(to_lower(arg));
    }
  }

  std::vector<PublishedRun> all;
  try {
    all = load_published_runs(data);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parsim_accuracy: error: %s\n", e.what());
    return 2;
  }
  std::vector<PublishedRun> runs;
  for (const auto& r : all) {
    const bool keep = filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const std::string& f) {
                        return f == to_lower(r.source_id()) || f == to_lower(r.row_id());
                      });
    if (keep) runs.push_back(r);
  }
  if (runs.empty()) return usage("no row matches the filter (give source ids like S04 or row ids like R0001)");

  std::vector<RowResult> results = evaluate_runs(runs);
  std::vector<const RowResult*> order;
  for (const auto& r : results) order.push_back(&r);
  if (sort)
    std::stable_sort(order.begin(), order.end(), [](const RowResult* a, const RowResult* b) {
      const double ea = a->ok ? std::fabs(a->error) : 1e300, eb = b->ok ? std::fabs(b->error) : 1e300;
      return ea > eb;
    });

  if (tsv) {
    std::printf("row\tsource\tmodel\tgpu\tplan\tseq\tgbs\tmbs\trecompute\tprecision\tsp\tmeasured_s\tpredicted_s\t"
                "error\tmfu\tcompute0_s\texposed0_s\tidle0_s\tfailure\n");
    for (const RowResult* r : order) {
      const StageMetrics s0 = r->report.stages.empty() ? StageMetrics{} : r->report.stages.front();
      const ScenarioInput& a = r->args;
      std::printf("%s\t%s\t%s\t%s\t%s\t%lld\t%lld\t%lld\t%s\t%s\t%d\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%s\n",
                  r->run->row_id().c_str(), r->run->source_id().c_str(), r->run->at("model").c_str(), a.gpu.c_str(),
                  a.plan.c_str(), static_cast<long long>(a.train.seq), static_cast<long long>(a.train.gbs),
                  static_cast<long long>(a.train.mbs), to_string(a.train.recompute).c_str(),
                  to_string(a.train.precision).c_str(), a.train.sp ? 1 : 0, r->measured_s,
                  r->predicted_s, r->error, r->report.mfu, s0.compute_s, s0.exposed_comm_s, s0.idle_s,
                  r->ok ? "" : r->failure.c_str());
    }
    return 0;
  }
  std::printf("%-6s %-4s %-14s %-10s %-44s %9s %9s %8s %6s %9s %9s %9s\n", "row", "src", "model", "gpu",
              "plan seq gbs mbs recompute precision", "meas_s", "pred_s", "err", "mfu", "comp0_s", "expo0_s",
              "idle0_s");
  for (const RowResult* r : order) {
    std::printf("%-6s %-4s %-14s %-10s %-44s ", r->run->row_id().c_str(), r->run->source_id().c_str(),
                clip(r->run->at("model"), 14).c_str(), clip(std::filesystem::path(r->args.gpu).stem().string(), 10).c_str(),
                clip(short_args(r->args), 44).c_str());
    if (!r->ok) {
      std::printf("FAILED: %s\n", r->failure.c_str());
      continue;
    }
    const StageMetrics s0 = r->report.stages.empty() ? StageMetrics{} : r->report.stages.front();
    std::printf("%9.3f %9.3f %8s %5.1f%% %9.3f %9.3f %9.3f\n", r->measured_s, r->predicted_s,
                percent(r->error).c_str(), 100.0 * r->report.mfu, s0.compute_s, s0.exposed_comm_s, s0.idle_s);
  }
  std::printf("\n%s", format_source_table(summarize_by_source(results)).c_str());
  return 0;
}
