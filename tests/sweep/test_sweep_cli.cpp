// `parsim sweep` and `parsim merge` through the binary: the contract's JSON keys, reproduction by `parsim predict`,
// thread-count independence, shards + merge, CSV, and one line on stderr with status 2 for every bad input.
#include "../cli/run.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>

using namespace parsim::testing;
using nlohmann::json;

namespace {
// llama2-7b on 16 H100s restricted to a few dozen plans so that the test stays fast.
const std::string kSmall =
    "sweep --model llama2-7b --gpus 16 --gbs 64 --tp 8 --pp 1,2 --zero 0,1 --recompute none,selective --mbs 1,2";
}  // namespace

TEST_CASE("sweep JSON holds the contract's keys, and each result is reproduced by predict") {
  Run r = run_parsim(kSmall + " --format json --top 3 --threads 1");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  for (const char* k : {"evaluated", "simulated", "feasible", "results"}) CHECK(j.contains(k));
  CHECK(j["evaluated"].get<long long>() >= j["simulated"].get<long long>());
  CHECK(j["simulated"].get<long long>() >= j["feasible"].get<long long>());
  REQUIRE(j["results"].size() == 3);
  for (const json& x : j["results"]) {
    for (const char* k : {"plan", "mbs", "recompute", "sp", "schedule", "precision", "step_time_s", "mfu", "memory"})
      CHECK(x.contains(k));
    CHECK(x["memory"].contains("peak_gib"));
    CHECK(x["memory"].contains("capacity_gib"));
  }
  // Re-run the first two through predict with the listed flags: the same numbers, to the last bit of the JSON.
  for (int i = 0; i < 2; ++i) {
    const json& x = j["results"][i];
    std::string cmd = x["predict"].get<std::string>();
    REQUIRE(cmd.rfind("parsim predict ", 0) == 0);
    Run p = run_parsim(cmd.substr(std::string("parsim ").size()) + " --format json");
    REQUIRE(p.status == 0);
    const json q = json::parse(p.out);
    CHECK(q["step_time_s"].get<double>() == x["step_time_s"].get<double>());
    CHECK(q["mfu"].get<double>() == x["mfu"].get<double>());
    CHECK(q["memory"]["peak_gib"].get<double>() == x["memory"]["peak_gib"].get<double>());
    CHECK(q["plan"]["plan"].get<std::string>() == x["plan"].get<std::string>());
  }
}

TEST_CASE("--threads 1 and --threads 2 list the same results; shards merge into the whole") {
  Run one = run_parsim(kSmall + " --format json --all --threads 1");
  Run two = run_parsim(kSmall + " --format json --all --threads 2");
  REQUIRE(one.status == 0);
  REQUIRE(two.status == 0);
  const json a = json::parse(one.out), b = json::parse(two.out);
  CHECK(a["results"] == b["results"]);
  CHECK(a["pareto_front"] == b["pareto_front"]);
  CHECK(a["evaluated"] == b["evaluated"]);

  std::vector<std::string> files;
  for (int i = 0; i < 2; ++i) {
    Run s = run_parsim(kSmall + " --format json --all --threads 1 --shard " + std::to_string(i) + "/2");
    REQUIRE(s.status == 0);
    files.push_back(write_temp("shard" + std::to_string(i) + ".json", s.out));
  }
  Run m = run_parsim("merge --format json --all " + files[0] + " " + files[1]);
  REQUIRE(m.status == 0);
  const json merged = json::parse(m.out);
  CHECK(merged["results"] == a["results"]);
  CHECK(merged["evaluated"] == a["evaluated"]);
  CHECK(merged["feasible"] == a["feasible"]);
  Run dup = run_parsim("merge " + files[0] + " " + files[0]);
  CHECK(dup.clean_error());
  CHECK(dup.err.find("appears twice") != std::string::npos);
  for (const auto& f : files) std::remove(f.c_str());
}

TEST_CASE("table and CSV output") {
  Run t = run_parsim(kSmall + " --top 2 --tokens 1T --price-per-gpu-hour 2");
  REQUIRE(t.status == 0);
  CHECK(t.out.find("fastest 2") != std::string::npos);
  CHECK(t.out.find("Pareto front") != std::string::npos);
  CHECK(t.out.find("GPU-hours") != std::string::npos);
  CHECK(t.err.empty());  // no progress bar when stderr is not a terminal
  Run c = run_parsim(kSmall + " --format csv --all");
  REQUIRE(c.status == 0);
  // The plan's degrees in axis order (sim/core/axis.hpp), then etp, vpp and the sharding term.
  CHECK(c.out.rfind("rank,plan,tp,cp,ep,dp,pp,etp,vpp,sharding,mbs,", 0) == 0);
  // Exposed communication per axis, also in axis order.
  CHECK(c.out.find("exposed_tp_s,exposed_cp_s,exposed_ep_s,exposed_dp_s,exposed_pp_s") != std::string::npos);
  Run j = run_parsim(kSmall + " --format json --all");
  // One CSV line per feasible plan plus the header.
  const auto feasible = json::parse(j.out)["feasible"].get<long long>();
  CHECK(static_cast<long long>(std::count(c.out.begin(), c.out.end(), '\n')) == feasible + 1);
}

TEST_CASE("bad sweep and merge input: one line, status 2") {
  const std::string base = "sweep --model llama2-7b --gpus 16 --tp 8 --pp 2 --zero 1 --recompute none --mbs 1";
  for (const std::string& extra :
       {std::string(" --shard 2/2"), std::string(" --shard x"), std::string(" --threads 0"), std::string(" --top -1"),
        std::string(" --format xml"), std::string(" --tp 8,x"), std::string(" --zero 4"), std::string(" --sp maybe"),
        std::string(" --recompute some"), std::string(" --schedule zb"), std::string(" --goodput 1.5"),
        std::string(" --price-per-gpu-hour 2")}) {
    CAPTURE(extra);
    Run r = run_parsim(base + extra);
    CHECK(r.clean_error());
  }
  Run g = run_parsim("sweep --model llama2-7b --gpus 0");
  CHECK(g.clean_error());
  Run none = run_parsim("sweep --model llama2-7b --gpus 12 --tp 8");
  CHECK(none.clean_error());
  CHECK(none.err.find("12 GPUs") != std::string::npos);
  Run nomodel = run_parsim("sweep --gpus 8");
  CHECK(nomodel.clean_error());
  Run missing = run_parsim("merge does-not-exist.json");
  CHECK(missing.clean_error());
  const std::string junk = write_temp("junk.json", "[1, 2");
  Run bad = run_parsim("merge " + junk);
  CHECK(bad.clean_error());
  std::remove(junk.c_str());
}
