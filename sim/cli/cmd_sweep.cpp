// `parsim sweep` — search the plan space; `parsim merge` — combine the JSON/CSV of several `--shard` runs.
// Contract: docs/cli.md "parsim sweep".
#include "sim/api/api.hpp"
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

int run_sweep_command(const Registered<api::SweepRequest>& given) {
  api::SweepRequest req = api::sweep_request(given.values());
  std::atomic<std::int64_t> done{0}, total{0};
  req.options.progress = &done;
  req.options.progress_total = &total;
  SweepReport rep;
  {
    Progress bar(done, total);  // stderr only, only on a terminal, only after the first second
    rep = api::run_sweep(req);
  }
  print(rep, req.format, req.listing);
  return 0;
}

int run_merge_command(const Registered<api::MergeRequest>& given) {
  const api::MergeRequest req = api::merge_request(given.values());
  print(api::run_merge(req), req.format, req.listing);
  return 0;
}

}  // namespace

void add_sweep(CLI::App& root, Action& action) {
  CLI::App* sub = root.add_subcommand("sweep", "search every valid plan for N GPUs and rank them");
  auto given = register_options(sub, api::sweep_options());
  sub->callback([&action, given] { action = [given] { return run_sweep_command(*given); }; });
}

void add_merge(CLI::App& root, Action& action) {
  CLI::App* sub = root.add_subcommand("merge", "combine the JSON or CSV of several `sweep --shard` runs into one ranking");
  auto given = register_options(sub, api::merge_options());
  sub->callback([&action, given] { action = [given] { return run_merge_command(*given); }; });
}

}  // namespace parsim::cli
