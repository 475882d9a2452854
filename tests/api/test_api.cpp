// sim/api: predict/sweep/merge/profile/calibrate/validate as JSON in → JSON out, the same numbers as the typed path.
#include "sim/api/api.hpp"
#include "sim/step/evaluate.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace parsim;
using nlohmann::json;

namespace {
doctest::String error_of(const json& request, json (*fn)(const json&)) {
  try {
    fn(request);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}
}  // namespace

TEST_CASE("every table row: key = flag without dashes, '-' → '_' (the Python keyword rule of docs/cli.md)") {
  auto check = [](const auto& table) {
    for (const auto& o : table) {
      CAPTURE(o.key);
      if (o.flag.empty()) continue;  // positional (files)
      std::string k = o.flag.substr(2, o.flag.find(',') == std::string::npos ? std::string::npos : o.flag.find(',') - 2);
      for (char& c : k)
        if (c == '-') c = '_';
      CHECK(k == o.key);
    }
  };
  check(api::predict_options());
  check(api::sweep_options());
  check(api::merge_options());
  check(api::profile_options());
  check(api::calibrate_options());
  check(api::validate_options());
}

TEST_CASE("api::predict(json) is the predict JSON of the same scenario") {
  const json out = api::predict({{"model", "llama7b"}, {"plan", "tp8pp2dp4"}, {"sp", true}, {"seq", 4096},
                                 {"tokens", "2T"}, {"price_per_gpu_hour", 2.5}});
  ScenarioInput in;
  in.model = "llama7b";
  in.plan = "tp8pp2dp4";
  in.train.sp_auto = false;
  in.train.sp = true;
  const Scenario sc = resolve_scenario(in);
  const StepReport rep = evaluate(sc);
  CHECK(out["step_time_s"].get<double>() == rep.step_time_s);
  CHECK(out["mfu"].get<double>() == rep.mfu);
  // Resolved: off, Megatron-LM's default (recipes opt in with --tp-comm-overlap), also with sp on tp8.
  CHECK(out["settings"]["tp_comm_overlap"] == false);
  CHECK(out["settings"]["sp"] == true);
  CHECK(out["train"].contains("cost_usd"));
  for (const char* k : {"tp", "cp", "ep", "dp", "pp"}) CHECK(out["exposed_comm_by_kind_s"].contains(k));
  // The settings echo is itself a valid request (plus model and plan) and reproduces the prediction.
  json again = out["settings"];
  again.erase("micro_batches");
  again["model"] = "llama7b";
  again["plan"] = "tp8pp2dp4";
  CHECK(api::predict(again)["step_time_s"] == out["step_time_s"]);
}

TEST_CASE("predict's layer_kinds: each kind of layer, its count and where its passes spend their time") {
  // GPT-OSS 120B (tests/data/models/gpt_oss_120b_parsim.json): 36 MoE layers, sliding-window attention on the even
  // layers and full attention on the odd ones — two kinds of 18 layers; on 8 GPUs with ep8.
  const json out = api::predict({{"model", std::string(PARSIM_TEST_DATA) + "/models/gpt_oss_120b_parsim.json"},
                                 {"plan", "tp1pp1dp8ep8"}, {"gpu", "b200"}, {"seq", 4096}, {"gbs", 64}, {"mbs", 1}});
  REQUIRE(out.contains("layer_kinds"));
  const json& kinds = out["layer_kinds"];
  REQUIRE(kinds.size() == 2);
  int layers = 0;
  for (const json& k : kinds) {
    CAPTURE(k.dump());
    CHECK(k["ffn"] == "moe");
    CHECK(k["layers"] == 18);
    layers += k["layers"].get<int>();
    for (const char* pass : {"forward", "backward"}) {
      const json& p = k[pass];
      // The parts add up to the pass's compute; the pass lasts its compute + exposed communication + host wait.
      const double parts = p["gemm_s"].get<double>() + p["attention_s"].get<double>() +
                           p["memory_bound_s"].get<double>() + p["fp8_cast_s"].get<double>() +
                           p["recompute_s"].get<double>() + p["other_s"].get<double>();
      CHECK(parts == doctest::Approx(p["compute_s"].get<double>()).epsilon(1e-9));
      CHECK(p["duration_s"].get<double>() ==
            doctest::Approx(p["compute_s"].get<double>() + p["exposed_comm_s"].get<double>() +
                            p["host_wait_s"].get<double>())
                .epsilon(1e-9));
      CHECK(p["gemm_s"].get<double>() > 0);
      CHECK(p["kernels"].get<double>() > 0);
    }
  }
  CHECK(layers == out["model"]["layers"].get<int>());
  // The window of 128 keys costs the sliding layers' attention far less than the full layers' 4,096.
  const auto attn = [&](const char* a) {
    for (const json& k : kinds)
      if (k["attention"] == a) return k["forward"]["attention_s"].get<double>();
    return -1.0;
  };
  CHECK(attn("sliding") > 0);
  CHECK(attn("sliding") < 0.5 * attn("full"));
}

TEST_CASE("api errors carry the CLI's one-line messages") {
  using doctest::Contains;
  CHECK(error_of({{"model", "llama7b"}, {"plan", "tp8"}, {"seq", -1}}, api::predict) ==
        Contains("--seq must be a positive integer, got '-1'"));
  CHECK(error_of({{"model", "llama7b"}, {"plan", "tp8"}, {"format", "json"}}, api::predict) ==
        Contains("predict: unknown key 'format'"));  // output format is the command line's business
  CHECK(error_of({{"model", "llama7b"}, {"plan", "tp3"}}, api::predict) == Contains("tp3 does not divide"));
  CHECK(error_of({{"plan", "tp8"}}, api::predict) == Contains("--model is required"));
  CHECK(error_of({{"model", "llama7b"}, {"plan", "tp8"}, {"price_per_gpu_hour", 2}}, api::predict) ==
        Contains("--price-per-gpu-hour needs --tokens"));
  CHECK(error_of({{"model", "llama7b"}}, api::sweep) == Contains("--gpus is required"));
  CHECK(error_of({{"files", json::array()}}, api::profile) == Contains("profile needs trace files"));
  CHECK(error_of({{"model", "llama7b"}, {"plan", "tp8"}}, api::validate) == Contains("--profile is required"));
}

TEST_CASE("api::sweep takes filters as JSON arrays and returns the sweep JSON") {
  const json out = api::sweep({{"model", "llama2-7b"}, {"gpus", 8}, {"gbs", 32}, {"tp", {2, 8}}, {"pp", {1}},
                               {"zero", {"0", "1"}}, {"recompute", "none"}, {"mbs", {1}}, {"threads", 1}, {"top", 3}});
  SweepSetup setup;
  setup.base.model = "llama2-7b";
  setup.base.train.gbs = 32;
  setup.gpus = 8;
  setup.filter.tp = {2, 8};
  setup.filter.pp = {1};
  setup.filter.mbs = {1};
  setup.filter.sharding = {Sharding::None, Sharding::Zero1};
  setup.filter.recompute = {Recompute::None};
  SweepOptions opt;
  opt.threads = 1;
  const SweepReport rep = run_sweep(setup, opt);
  CHECK(out["evaluated"].get<std::int64_t>() == rep.evaluated);
  REQUIRE(out["results"].size() == std::min<std::size_t>(3, rep.ranked.size()));
  CHECK(out["results"][0]["step_time_s"].get<double>() == rep.ranked[0].step_time_s);
  CHECK(out["results"][0]["plan"] == rep.ranked[0].plan.to_string());
}

TEST_CASE("api::calibrate and api::profile read their files like the CLI") {
  // An nccl-tests table (tests/data/nccl/README.md: AWS p5, 2 nodes × 8 H100): the JSON names the collective and
  // the rank count, as `parsim calibrate FILE --format json` does.
  const json c = api::calibrate({{"file", std::string(PARSIM_TEST_DATA) + "/nccl/aws_p5_2node_16xH100_all_reduce.txt"}});
  CHECK(c["collective"] == "all_reduce");
  CHECK(c["ranks"].get<int>() == 16);
  // A missing file: the CLI's message naming it.
  CHECK(error_of({{"file", "no-such-file.txt"}}, api::calibrate) == doctest::Contains("no-such-file.txt"));
  CHECK(error_of({{"files", {"no-such-trace.json"}}}, api::profile) == doctest::Contains("no-such-trace.json"));
}
