// `parsim sweep` — search the plan space; `parsim merge` — combine the JSON/CSV of several `--shard` runs.
// Contract: docs/cli.md "parsim sweep".
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/sweep/sweep.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

namespace parsim::cli {

namespace {

struct SweepState {
  ScenarioFlags flags;  // model, gpu, gpus-per-node, seq, gbs, precision and framework options only
  TrainFlags train;
  std::string gpus, top = "10", threads, shard, format = "table", max_tp_per_node;
  std::string tp, pp, dp, cp, vpp, mbs, sharding, recompute, sp, schedule;
  bool all = false;
};

int positive_int(const std::string& s, const std::string& flag, std::int64_t max = 1 << 30) {
  const std::int64_t v = parse_positive_int(s, flag);
  if (v > max) throw InputError(flag + " " + s + " is too large (at most " + std::to_string(max) + ")");
  return static_cast<int>(v);
}

template <class T, class Parse>
std::vector<T> parse_list(const std::string& s, const std::string& flag, Parse parse) {
  std::vector<T> out;
  if (s.empty()) return out;
  for (const std::string& item : split(s, ',')) {
    if (trim(item).empty()) throw InputError(flag + " '" + s + "' has an empty item (write e.g. 1,2,4)");
    out.push_back(parse(trim(item)));
  }
  return out;
}

SpaceFilter to_filter(const SweepState& st) {
  SpaceFilter f;
  if (!st.tp.empty()) f.tp = parse_int_list(st.tp, "--tp");
  if (!st.pp.empty()) f.pp = parse_int_list(st.pp, "--pp");
  if (!st.dp.empty()) f.dp = parse_int_list(st.dp, "--dp");
  if (!st.cp.empty()) f.cp = parse_int_list(st.cp, "--cp");
  if (!st.vpp.empty()) f.vpp = parse_int_list(st.vpp, "--vpp");
  if (!st.mbs.empty()) f.mbs = parse_int_list(st.mbs, "--mbs");
  f.sharding = parse_list<Sharding>(st.sharding, "--zero", [](const std::string& x) { return parse_sharding(x); });
  f.recompute =
      parse_list<Recompute>(st.recompute, "--recompute", [](const std::string& x) { return parse_recompute(x); });
  f.schedule = parse_list<Schedule>(st.schedule, "--schedule", [](const std::string& x) { return parse_schedule(x); });
  f.sp = parse_list<int>(st.sp, "--sp", [&](const std::string& x) {
    const std::string l = to_lower(x);
    if (l == "on" || l == "1" || l == "true" || l == "yes") return 1;
    if (l == "off" || l == "0" || l == "false" || l == "no") return 0;
    throw InputError("--sp '" + x + "' is not valid (choose on, off or on,off)");
  });
  if (!st.max_tp_per_node.empty()) f.max_tp_per_node = positive_int(st.max_tp_per_node, "--max-tp-per-node", 1 << 20);
  return f;
}

void parse_shard(const std::string& s, SweepOptions& opt) {
  const auto parts = split(s, '/');
  const std::string bad = "--shard '" + s + "' is not valid (write i/N with 0 ≤ i < N, e.g. 0/4)";
  if (parts.size() != 2) throw InputError(bad);
  const std::string i = trim(parts[0]), n = trim(parts[1]);
  auto digits = [](const std::string& x) {
    return !x.empty() && x.size() <= 9 && x.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(i) || !digits(n)) throw InputError(bad);
  opt.shard_index = std::stoi(i);
  opt.shard_count = std::stoi(n);
  if (opt.shard_count < 1 || opt.shard_index >= opt.shard_count) throw InputError(bad);
}

// A progress bar on stderr, only when stderr is a terminal and only once the sweep has run for a second.
class Progress {
public:
  Progress(std::atomic<std::int64_t>& done, std::atomic<std::int64_t>& total) : done_(done), total_(total) {
    if (!isatty(STDERR_FILENO)) return;
    thread_ = std::thread([this] { loop(); });
  }
  ~Progress() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (shown_) std::fprintf(stderr, "\r%*s\r", 72, "");
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

private:
  void loop() {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(m_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (s < 1.0) continue;
      const std::int64_t d = done_.load(std::memory_order_relaxed), total = total_.load();
      if (total <= 0) continue;  // still enumerating
      const int width = 30;
      const int fill = static_cast<int>(width * static_cast<double>(d) / static_cast<double>(total));
      std::string bar(static_cast<std::size_t>(fill), '#');
      bar.resize(static_cast<std::size_t>(width), '.');
      std::fprintf(stderr, "\rsweep [%s] %lld/%lld plans, %.0f s", bar.c_str(), static_cast<long long>(d),
                   static_cast<long long>(total), s);
      std::fflush(stderr);
      shown_ = true;
    }
  }
  std::atomic<std::int64_t>& done_;
  std::atomic<std::int64_t>& total_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false, shown_ = false;
};

void print(const SweepReport& rep, const std::string& format, const SweepListing& l) {
  if (format == "json") std::cout << sweep_to_json(rep, l);
  else if (format == "csv") std::cout << sweep_to_csv(rep, l);
  else std::cout << sweep_to_table(rep, l);
}

int run_sweep_command(const SweepState& st) {
  const std::string format = check_choice("--format", st.format, {"table", "json", "csv"});
  if (st.gpus.empty()) throw InputError("--gpus is required (the number of GPUs to plan for)");
  SweepSetup setup;
  setup.gpus = positive_int(st.gpus, "--gpus", 1 << 24);
  setup.args = to_args(st.flags);
  setup.filter = to_filter(st);
  SweepOptions opt;
  if (!st.threads.empty()) opt.threads = positive_int(st.threads, "--threads", 4096);
  if (!st.shard.empty()) parse_shard(st.shard, opt);
  const TrainValues tv = to_train_values(st.train);
  if (tv.enabled) {
    opt.tokens = tv.tokens;
    opt.price_per_gpu_hour = tv.price;
    opt.goodput = tv.goodput;
  }
  SweepListing listing;
  listing.top = positive_int(st.top, "--top", 1 << 30);
  listing.all = st.all;
  std::atomic<std::int64_t> done{0}, total{0};
  opt.progress = &done;
  opt.progress_total = &total;
  SweepReport rep;
  {
    Progress bar(done, total);  // stderr only, only on a terminal, only after the first second
    rep = run_sweep(setup, opt);
  }
  print(rep, format, listing);
  return 0;
}

int run_merge_command(const std::vector<std::string>& files, const std::string& format_in, const std::string& top,
                      bool all) {
  const std::string format = check_choice("--format", format_in, {"table", "json", "csv"});
  if (files.empty()) throw InputError("merge needs the sweep files to combine (parsim merge a.json b.json …)");
  std::vector<SweepReport> shards;
  for (const std::string& f : files) shards.push_back(read_sweep_file(f));
  SweepReport merged = merge_sweeps(shards, files);
  SweepListing listing;
  listing.top = positive_int(top, "--top", 1 << 30);
  listing.all = all;
  print(merged, format, listing);
  return 0;
}

}  // namespace

void add_sweep(CLI::App& root, Action& action) {
  auto st = std::make_shared<SweepState>();
  CLI::App* sub = root.add_subcommand("sweep", "search every valid plan for N GPUs and rank them");
  ScenarioFlags& f = st->flags;
  sub->add_option("--model", f.model, "built-in model name or a model JSON / Hugging Face config.json path")->required();
  sub->add_option("--gpus", st->gpus, "number of GPUs to plan for")->required();
  sub->add_option("--gpu", f.gpu, "GPU/node preset (a100-40gb, a100-80gb, h100, h200, mi300x, b200) or hardware JSON");
  sub->add_option("--gpus-per-node", f.gpus_per_node, "GPUs per node (NVLink/xGMI domain); default from the preset");
  sub->add_option("--seq", f.seq, "sequence length in tokens (default: the model's seq_len)");
  sub->add_option("--gbs", f.gbs, "global batch in sequences, the same for every plan (default ⌈4,194,304 / seq⌉)");
  sub->add_option("--precision", f.precision, "bf16 | fp16 | fp8 | fp32 (default bf16)");
  sub->add_option("--top", st->top, "how many plans to list (default 10)");
  sub->add_flag("--all", st->all, "list every plan that fits (CSV: every feasible plan)");
  sub->add_option("--threads", st->threads, "worker threads (default: all cores)");
  sub->add_option("--shard", st->shard, "evaluate only shard i of N (i/N, 0 ≤ i < N) for a job array; see merge");
  sub->add_option("--format", st->format, "table | json | csv (default table)");
  add_train_flags(sub, st->train);
  sub->add_option("--tp", st->tp, "filter: tensor-parallel degrees, e.g. 1,2,4,8");
  sub->add_option("--pp", st->pp, "filter: pipeline degrees");
  sub->add_option("--dp", st->dp, "filter: data-parallel degrees");
  sub->add_option("--cp", st->cp, "filter: context-parallel degrees (default powers of two)");
  sub->add_option("--vpp", st->vpp, "filter: virtual pipeline chunks per stage");
  sub->add_option("--mbs", st->mbs, "filter: micro-batch sizes (default powers of two)");
  sub->add_option("--zero,--sharding", st->sharding, "filter: 0,1,2,3,fsdp,hsdp");
  sub->add_option("--recompute", st->recompute, "filter: none,selective,full");
  sub->add_option("--sp", st->sp, "filter: sequence parallelism on, off or on,off");
  sub->add_option("--schedule", st->schedule, "filter: 1f1b,interleaved,gpipe (default 1f1b + interleaved)");
  sub->add_option("--max-tp-per-node", st->max_tp_per_node, "largest tp (default: GPUs per node; more spans nodes)");
  sub->add_option("--bucket-mb", f.bucket_mb, "gradient bucket in MB (default: the stack's)");
  sub->add_option("--stack", f.stack, "auto | megatron | pytorch (auto: from each plan's sharding)");
  sub->add_option("--attention", f.attention, "flash | unfused (default flash)");
  sub->add_flag("--no-tp-comm-overlap", f.no_tp_comm_overlap, "never overlap TP communication with GEMMs");
  sub->add_flag("--no-overlap-grad-reduce", f.no_overlap_grad_reduce, "reduce gradients after the backward");
  sub->add_flag("--no-overlap-param-gather", f.no_overlap_param_gather, "ZeRO-1: all-gather after the optimizer");
  sub->add_flag("--tp-comm-overlap", f.tp_comm_overlap, "overlap TP communication with GEMMs (TE userbuffers)");
  sub->add_flag("--fsdp-no-sync", f.fsdp_no_sync, "FSDP/ZeRO-3: reduce-scatter gradients only on the last micro-batch");
  sub->callback([&action, st] { action = [st] { return run_sweep_command(*st); }; });
}

void add_merge(CLI::App& root, Action& action) {
  struct MergeState {
    std::vector<std::string> files;
    std::string format = "table", top = "10";
    bool all = false;
  };
  auto st = std::make_shared<MergeState>();
  CLI::App* sub = root.add_subcommand("merge", "combine the JSON or CSV of several `sweep --shard` runs into one ranking");
  sub->add_option("files", st->files, "sweep outputs (parsim sweep --shard i/N --format json|csv)")->required();
  sub->add_option("--format", st->format, "table | json | csv (default table)");
  sub->add_option("--top", st->top, "how many plans to list (default 10)");
  sub->add_flag("--all", st->all, "list every plan the inputs hold");
  sub->callback([&action, st] { action = [st] { return run_merge_command(st->files, st->format, st->top, st->all); }; });
}

}  // namespace parsim::cli
