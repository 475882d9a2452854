// CLI contract tests (docs/cli.md): the default command, JSON keys, and one test per bad-input class —
// exit status 2, one line `parsim: error: …` on stderr naming the value, nothing on stdout.
#include "run.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>

using namespace parsim::testing;
using nlohmann::json;

TEST_CASE("version and help") {
  Run v = run_parsim("--version");
  CHECK(v.status == 0);
  CHECK(v.out.rfind("parsim 0.", 0) == 0);
  Run h = run_parsim("--help");
  CHECK(h.status == 0);
  for (const char* sub : {"predict", "sweep", "merge", "profile", "calibrate", "validate"}) CHECK(h.out.find(sub) != std::string::npos);
}

TEST_CASE("the README's first command works as written and predict is the default") {
  Run r = run_parsim("--model llama7b --plan tp8pp2dp4");
  CHECK(r.status == 0);
  CHECK(r.out.find("step time") != std::string::npos);
  Run p = run_parsim("predict --model llama7b --plan tp8pp2dp4");
  CHECK(p.out == r.out);
}

TEST_CASE("JSON output carries the contract's keys") {
  Run r = run_parsim("--model llama7b --plan tp8pp2dp4 --format json");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  for (const char* k : {"step_time_s", "mfu", "hfu", "tflops_per_gpu", "tokens_per_s", "bubble_fraction",
                        "exposed_comm_s", "exposed_comm_by_kind_s", "memory", "model"})
    CHECK(j.contains(k));
  for (const char* k : {"tp", "cp", "ep", "dp", "pp"}) CHECK(j["exposed_comm_by_kind_s"].contains(k));
  for (const char* k : {"peak_gib", "allocated_peak_gib", "required_gib", "capacity_gib", "fits", "weights_gib", "grads_gib",
                        "optimizer_gib", "activations_gib", "per_stage_peak_gib"})
    CHECK(j["memory"].contains(k));
  // Llama-2-7B: 6,738,415,616 parameters (domain-notes §1, recomputed from the HF config).
  CHECK(j["model"]["params"].get<long long>() == 6738415616LL);
  // Default global batch (contract): ⌈4,194,304 / 4096⌉ = 1024 sequences, already a multiple of dp·mbs = 4.
  CHECK(j["settings"]["gbs"].get<long long>() == 1024);
  CHECK(j["memory"]["per_stage_peak_gib"].size() == 2);
  CHECK(j["step_time_s"].get<double>() > 0);
  CHECK(!j.contains("train"));
}

TEST_CASE("--tokens and --price-per-gpu-hour add time-to-train and cost") {
  Run r = run_parsim("--model llama7b --plan tp8pp2dp4 --format json --tokens 2T --price-per-gpu-hour 2.5");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  const double step = j["step_time_s"], tps = j["tokens_per_s"];
  // days = tokens / tokens_per_s / 86400 (steps rounded up to whole steps: < 1 step of difference).
  CHECK(j["train"]["days"].get<double>() == doctest::Approx(2e12 / tps / 86400).epsilon(1e-3));
  CHECK(j["train"]["gpu_hours"].get<double>() == doctest::Approx(j["train"]["days"].get<double>() * 24 * 64));
  CHECK(j["train"]["cost_usd"].get<double>() == doctest::Approx(j["train"]["gpu_hours"].get<double>() * 2.5));
  CHECK(step > 0);
}

TEST_CASE("a plan that does not fit still simulates: exit 0 with fits false") {
  Run r = run_parsim("--model llama2-70b --plan dp8 --gbs 8 --format json");
  REQUIRE(r.status == 0);
  CHECK(json::parse(r.out)["memory"]["fits"] == false);
}

TEST_CASE("bad input: unknown names and flag values") {
  for (const char* args : {"--model nosuchmodel --plan tp1", "--model llama7b --plan tp1 --gpu v100",
                           "--model llama7b --plan tp1 --recompute some", "--model llama7b --plan tp1 --precision int4",
                           "--model llama7b --plan tp1 --schedule zigzag", "--model llama7b --plan tp1 --format yaml",
                           "--model llama7b --plan tp1 --bogus-flag", "--model llama7b", "--plan tp8",
                           "--model llama7b --plan tp8 --gpus-per-node 0"}) {
    Run r = run_parsim(args);
    CAPTURE(args);
    CAPTURE(r.err);
    CHECK(r.clean_error());
  }
  CHECK(run_parsim("--model nosuchmodel --plan tp1").err.find("nosuchmodel") != std::string::npos);
  CHECK(run_parsim("--model llama7b --plan tp1 --gpu v100").err.find("h100") != std::string::npos);
}

TEST_CASE("bad input: model files") {
  const std::string good = R"({"name":"m","layers":4,"hidden":512,"heads":8,"kv_heads":8,"ffn_hidden":1024,"vocab":1000,"seq_len":512,"activation":"swiglu"})";
  struct Case {
    const char* name;
    std::string content;
    const char* must_mention;
  };
  const Case cases[] = {
      {"notjson.json", "this is not json", "JSON"},
      {"truncated.json", good.substr(0, good.size() / 2), "JSON"},
      {"unknownkey.json", R"({"name":"m","layers":4,"hidden":512,"heads":8,"kv_heads":8,"ffn_hidden":1024,"vocab":1000,"seq_len":512,"activation":"swiglu","hiden":5})", "hiden"},
      {"missing.json", R"({"name":"m","layers":4,"heads":8,"kv_heads":8,"ffn_hidden":1024,"vocab":1000,"seq_len":512,"activation":"swiglu"})", "hidden"},
      {"zero.json", R"({"name":"m","layers":0,"hidden":512,"heads":8,"kv_heads":8,"ffn_hidden":1024,"vocab":1000,"seq_len":512,"activation":"swiglu"})", "layers"},
      {"negative.json", R"({"name":"m","layers":4,"hidden":-512,"heads":8,"kv_heads":8,"ffn_hidden":1024,"vocab":1000,"seq_len":512,"activation":"swiglu"})", "hidden"},
      {"heads.json", R"({"name":"m","layers":4,"hidden":500,"heads":8,"kv_heads":8,"ffn_hidden":1024,"vocab":1000,"seq_len":512,"activation":"swiglu"})", "head"},
  };
  for (const Case& c : cases) {
    const std::string path = write_temp(c.name, c.content);
    Run r = run_parsim("--model " + path + " --plan tp1 --gbs 8");
    std::remove(path.c_str());
    CAPTURE(c.name);
    CAPTURE(r.err);
    CHECK(r.clean_error());
    CHECK(r.err.find(c.must_mention) != std::string::npos);
  }
  Run missing = run_parsim("--model ./does/not/exist.json --plan tp1");
  CHECK(missing.clean_error());
  CHECK(missing.err.find("exist.json") != std::string::npos);
  // The valid file itself works.
  const std::string path = write_temp("good.json", good);
  Run ok = run_parsim("--model " + path + " --plan tp2dp2 --gbs 8");
  std::remove(path.c_str());
  CHECK(ok.status == 0);
}

TEST_CASE("bad input: plan grammar and plans that cannot map onto model or cluster") {
  for (const char* args : {
           "--model llama7b --plan tq8",            // unknown term
           "--model llama7b --plan tp2tp2",         // repeated term
           "--model llama7b --plan tp0dp4",         // zero degree
           "--model llama7b --plan tp3",            // 32 heads not divisible by 3
           "--model llama7b --plan pp64",           // more stages than 32 layers
           "--model llama7b --plan dp4 --gbs 6",    // global batch not divisible by dp × mbs
           "--model llama7b --plan cp3 --seq 4096", // sequence not divisible by 2·cp
           "--model llama7b --plan dp8 --gpu a100 --precision fp8",  // A100 has no fp8
           "--model llama7b --plan tp8dp2 --gpus-per-node 3",        // tp spans nodes but world is not whole nodes
           "--model llama7b --plan tp8pp2dp4 --gbs 0",               // non-positive batch
           "--model llama7b --plan tp8pp2dp4 --seq -5",              // non-positive sequence
           "--model llama7b --plan tp8pp2dp4 --mbs abc",
           "--model llama7b --plan pp4vpp2 --schedule 1f1b",         // vpp needs the interleaved schedule
       }) {
    Run r = run_parsim(args);
    CAPTURE(args);
    CAPTURE(r.err);
    CHECK(r.clean_error());
  }
  CHECK(run_parsim("--model llama7b --plan tp3").err.find("tp") != std::string::npos);
  CHECK(run_parsim("--model llama7b --plan pp64").err.find("64") != std::string::npos);
}

TEST_CASE("--scenario FILE gives exactly what the equivalent flags give (examples/scenarios/README.md)") {
  const std::string dir = std::string(PARSIM_TEST_DATA) + "/../../examples/scenarios/";
  const std::pair<const char*, const char*> cases[] = {
      {"llama3-70b-interleaved.json", "--model llama3-70b --plan tp8pp4dp16vpp5 --gpu h100 --seq 8192 --gbs 512 --sp"},
      {"llama2-7b-fsdp.json", "--model llama2-7b --plan dp64fsdp --mbs 2 --recompute selective"},
      {"llama3-8b-torchtitan-compile.json",
       "--model llama3-8b --plan dp8fsdp --gpu h200 --seq 8192 --gbs 16 --mbs 2 --recompute selective --precision fp8 "
       "--compile"},
      {"llama3-8b-nemo-fp8.json",
       "--model llama3-8b --plan tp2pp1dp4cp2zero1 --gpu h100 --seq 8192 --gbs 128 --precision fp8 --sp --stack megatron "
       "--bucket-mb 40 --no-overlap-param-gather --schedule 1f1b --attention flash"},
  };
  for (const auto& c : cases) {
    const char* file = c.first;  // not a structured binding: clang 14 cannot capture one (CAPTURE is a lambda)
    const char* flags = c.second;
    CAPTURE(file);
    const Run a = run_parsim("--scenario " + dir + file + " --format json");
    const Run b = run_parsim(std::string(flags) + " --format json");
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(a.out == b.out);  // byte for byte: the same numbers, settings and warnings
    // The table too.
    CHECK(run_parsim("--scenario " + dir + file).out == run_parsim(flags).out);
  }
  // The prediction's own settings are scenario keys: feeding them back reproduces the prediction.
  const Run first = run_parsim("--scenario " + dir + "llama2-7b-fsdp.json --format json");
  json settings = json::parse(first.out)["settings"];
  settings.erase("micro_batches");  // derived, not an option
  settings["model"] = "llama2-7b";
  settings["plan"] = "dp64fsdp";
  const std::string path = write_temp("settings_scenario.json", settings.dump());
  const Run again = run_parsim("--scenario " + path + " --format json");
  std::remove(path.c_str());
  REQUIRE(again.status == 0);
  CHECK(json::parse(again.out)["step_time_s"] == json::parse(first.out)["step_time_s"]);
  // Flags override the file.
  const Run over = run_parsim("--scenario " + dir + "llama2-7b-fsdp.json --mbs 1 --format json");
  CHECK(json::parse(over.out)["settings"]["mbs"] == 1);
}

TEST_CASE("bad scenario files: one line naming the file and the key") {
  const std::string unknown = write_temp("unknown_key.json", R"({"model": "llama7b", "plan": "tp8", "sequence": 4096})");
  Run r = run_parsim("--scenario " + unknown);
  std::remove(unknown.c_str());
  CHECK(r.clean_error());
  CHECK(r.err.find("unknown key 'sequence'") != std::string::npos);
  const std::string typed = write_temp("typed.json", R"({"model": "llama7b", "plan": "tp8", "sp": "yes"})");
  r = run_parsim("--scenario " + typed);
  std::remove(typed.c_str());
  CHECK(r.clean_error());
  CHECK(r.err.find("'sp' must be true or false") != std::string::npos);
  const std::string bad = write_temp("bad.json", "{not json");
  r = run_parsim("--scenario " + bad);
  std::remove(bad.c_str());
  CHECK(r.clean_error());
  CHECK(run_parsim("--scenario does-not-exist.json").clean_error());
}

TEST_CASE("expert parallelism in the plan: dense models reject it with one line") {
  Run r = run_parsim("--model llama7b --plan tp2dp32ep8");
  CHECK(r.clean_error());
  CHECK(r.err.find("dense model") != std::string::npos);
  CHECK(run_parsim("--model llama7b --plan tp2dp4etp2 --gbs 8").clean_error());
}

TEST_CASE("MoE models simulate with expert parallelism (issue 10 'Done means')") {
  const std::string models = std::string(PARSIM_TEST_DATA) + "/models/";
  // Mixtral's real config.json, tp2 with SP, 32 data-parallel ranks, 8 expert-parallel: 64 GPUs.
  Run r = run_parsim("--model " + models + "mixtral-8x7b-v0.1.config.json --plan tp2pp1dp32ep8 --sp --format json");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"]["params"] == 46702792704);         // Mixtral-8x7B total (issue 10)
  CHECK(j["model"]["active_params"] == 12879925248);  // 2 of 8 experts
  CHECK(j["plan"]["ep"] == 8);
  CHECK(j["plan"]["etp"] == 2);  // default etp = tp
  CHECK(j["exposed_comm_by_kind_s"]["ep"].get<double>() > 0);
  CHECK(j["settings"]["moe_dispatcher"] == "alltoall");
  // DeepSeek-V3 (3 dense layers, then MoE layers) simulates instead of being refused.
  r = run_parsim("--model " + models +
                 "deepseek-v3.config.json --plan tp1pp8dp32ep32etp1 --gpu b200 --gbs 256 --seq 4096 --format json");
  REQUIRE(r.status == 0);
  CHECK(json::parse(r.out)["model"]["moe_layers"] == 58);
  // Bad MoE option values: one line naming the value.
  const std::string mixtral = "--model " + models + "mixtral-8x7b-v0.1.config.json --plan tp1dp16ep8 ";
  r = run_parsim(mixtral + "--moe-imbalance 0.5");
  CHECK(r.clean_error());
  CHECK(r.err.find("--moe-imbalance 0.5") != std::string::npos);
  r = run_parsim(mixtral + "--moe-capacity-factor -1");
  CHECK(r.clean_error());
  CHECK(r.err.find("--moe-capacity-factor") != std::string::npos);
  CHECK(r.err.find("-1") != std::string::npos);
  CHECK(run_parsim(mixtral + "--moe-dispatcher ring").clean_error());
  CHECK(run_parsim(mixtral.substr(0, mixtral.find("--plan")) + "--plan tp1dp16ep3").clean_error());  // 8 % 3 != 0
}

TEST_CASE("validate and sweep take the same scenario options as predict (one table)") {
  const Run v = run_parsim("validate --help");
  const Run p = run_parsim("predict --help");
  for (const char* flag : {"--stack", "--attention", "--bucket-mb", "--no-overlap-grad-reduce",
                           "--no-overlap-param-gather", "--tp-comm-overlap", "--no-tp-comm-overlap", "--fsdp-no-sync",
                           "--scenario", "--gpus-per-node", "--schedule"}) {
    CAPTURE(flag);
    CHECK(v.out.find(flag) != std::string::npos);
    CHECK(p.out.find(flag) != std::string::npos);
  }
  const Run s = run_parsim("sweep --help");
  for (const char* flag : {"--stack", "--attention", "--bucket-mb", "--fsdp-no-sync", "--gpus", "--zero"})
    CHECK(s.out.find(flag) != std::string::npos);
  // A bad value reads the same whatever the command.
  const Run a = run_parsim("--model llama7b --plan tp8 --stack jax");
  const Run b = run_parsim("validate --profile x.json --model llama7b --plan tp8 --stack jax");
  CHECK(a.clean_error());
  CHECK(b.clean_error());
  CHECK(a.err == b.err);
  CHECK(a.err.find("--stack 'jax' is not valid (choose auto, megatron, megatron-legacy, pytorch)") != std::string::npos);
  CHECK(run_parsim("--model llama7b --plan tp8 --tp-comm-overlap --no-tp-comm-overlap").clean_error());
  // --adam-moments: a value outside its choices, and bf16 moments beside --bf16-optimizer (which holds bf16 moments
  // already), are one-line errors; the JSON scenario takes the same key.
  const Run m = run_parsim("--model llama7b --plan dp8zero1 --adam-moments fp16");
  CHECK(m.clean_error());
  CHECK(m.err.find("--adam-moments 'fp16' is not valid (choose fp32, bf16)") != std::string::npos);
  const Run mb = run_parsim("--model llama7b --plan dp8zero1 --adam-moments bf16 --bf16-optimizer");
  CHECK(mb.clean_error());
  CHECK(mb.err.find("--bf16-optimizer") != std::string::npos);
  CHECK(run_parsim("sweep --help").out.find("--adam-moments") != std::string::npos);
  // --recompute op (torchtitan's per-op checkpointing) is the PyTorch stack's: on the Megatron stack a one-line error;
  // --eager-loss without --compile says nothing and is refused.
  const Run op = run_parsim("--model llama7b --plan tp8pp2dp4 --recompute op");
  CHECK(op.clean_error());
  CHECK(op.err.find("--recompute op is torchtitan's per-op selective checkpointing (--stack pytorch)") != std::string::npos);
  CHECK(run_parsim("--model llama7b --plan dp8fsdp --recompute op").status == 0);
  CHECK(run_parsim("--model llama7b --plan dp8fsdp --eager-loss").clean_error());
  CHECK(run_parsim("--model llama7b --plan dp8fsdp --compile --eager-loss").status == 0);
  // A sweep asked for --recompute op without the PyTorch stack among its stacks says so instead of dropping them.
  const Run sop = run_parsim("sweep --model llama7b --gpus 8 --zero fsdp --recompute op --gbs 16");
  CHECK(sop.clean_error());
  CHECK(sop.err.find("add --stack pytorch") != std::string::npos);
}

TEST_CASE("predict --svg writes the picture of the step; an unwritable path is a one-line error") {
  const std::string path = "cli_step_" + std::to_string(getpid()) + ".svg";
  const Run r = run_parsim("--model llama7b --plan tp8pp2dp4 --gbs 16 --format json --svg " + path);
  CHECK(r.status == 0);
  CHECK(json::parse(r.out).contains("step_time_s"));  // stdout is still the JSON alone
  const std::string svg = slurp(path);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  std::remove(path.c_str());
  const Run bad = run_parsim("--model llama7b --plan tp8pp2dp4 --svg /nonexistent-dir/step.svg");
  CHECK(bad.clean_error());
  CHECK(bad.err.find("--svg '/nonexistent-dir/step.svg'") != std::string::npos);
}

TEST_CASE("compare: several plans side by side; predict with several plans is compare") {
  const Run a = run_parsim("compare --model llama7b --plan tp8pp2dp4 --plan tp4pp4dp4");
  const Run b = run_parsim("--model llama7b --plan tp8pp2dp4,tp4pp4dp4");
  const Run c = run_parsim("predict --model llama7b --plan tp8pp2dp4 --plan=tp4pp4dp4");
  CHECK(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(a.out == c.out);
  CHECK(a.out.find("where the time goes, against the best plan") != std::string::npos);
  // One line per plan under that heading: each plan's name starts one.
  CHECK(a.out.find("    tp8pp2dp4: ") != std::string::npos);
  CHECK(a.out.find("    tp4pp4dp4: ") != std::string::npos);
  const json j = json::parse(run_parsim("compare --model llama7b --plan tp8pp2dp4,tp4pp4dp4 --format json").out);
  CHECK(j["plans"].size() == 2);
  CHECK(j["plans"][0]["versus_best"].is_string());
  // Each plan with its regime's expected error (as predict): llama2-7b at TP 8 and micro-batch 1 issues kernels
  // shorter than their launches (host-bound, the headline); at TP 4 with four pipeline stages the GEMMs are twice
  // as wide and the host runs ahead (a GPU-bound Megatron step).
  CHECK(j["plans"][0]["expected_error"]["regime"] == "host_bound");
  CHECK(j["plans"][1]["expected_error"]["regime"] == "megatron");
  CHECK(a.out.find("expected error") != std::string::npos);
  // One plan is not a comparison; a bad plan is the predict error.
  CHECK(run_parsim("compare --model llama7b --plan tp8pp2dp4").clean_error());
  CHECK(run_parsim("compare --model llama7b --plan tp8pp2dp4,tp3").clean_error());
  CHECK(run_parsim("compare --model llama7b --plan tp8pp2dp4,,tp4").clean_error());
}

TEST_CASE("predict --advice adds the advice to the JSON; sweep --headroom-gib and profile --svg") {
  const json p = json::parse(run_parsim("--model llama7b --plan dp8 --gbs 8 --format json --advice").out);
  REQUIRE(p.contains("advice"));
  CHECK(p["advice"]["notes"][0].get<std::string>().rfind("does not fit by", 0) == 0);
  CHECK_FALSE(json::parse(run_parsim("--model llama7b --plan dp8 --gbs 8 --format json").out).contains("advice"));
  CHECK(run_parsim("--model llama7b --plan dp8 --gbs 8").out.find("advice (from the simulated numbers)") !=
        std::string::npos);
  CHECK(run_parsim("sweep --model llama7b --gpus 8 --headroom-gib -1").clean_error());
  CHECK(run_parsim("sweep --model llama7b --gpus 8 --headroom-gib lots").clean_error());
  const std::string svg = "cli_ranks_" + std::to_string(getpid()) + ".svg";
  const Run r = run_parsim(std::string("profile ") + PARSIM_TEST_DATA +
                           "/profiles/hta-nccl-meta-2rank-a100/nccl_data.json.gz --svg " + svg);
  CHECK(r.status == 0);
  CHECK(slurp(svg).find("parsim profile: 1 rank") != std::string::npos);
  std::remove(svg.c_str());
}

TEST_CASE("--compile: the PyTorch stack's compiled blocks are faster than its eager ops, and say so") {
  // llama2-7b FSDP on 8 H100 (PyTorch stack): eager ATen's unfused RMSNorm, RoPE and SwiGLU move more HBM bytes than
  // Inductor's fused kernels (tests/step/test_costs.cpp derives the bytes), so the compiled step is shorter.
  Run e = run_parsim("--model llama2-7b --plan dp8fsdp --seq 4096 --gbs 16 --format json");
  Run c = run_parsim("--model llama2-7b --plan dp8fsdp --seq 4096 --gbs 16 --format json --compile");
  REQUIRE(e.status == 0);
  REQUIRE(c.status == 0);
  const json je = json::parse(e.out), jc = json::parse(c.out);
  CHECK(je["settings"]["compile"].get<bool>() == false);
  CHECK(jc["settings"]["compile"].get<bool>() == true);
  CHECK(jc["step_time_s"].get<double>() < je["step_time_s"].get<double>());
  CHECK(run_parsim("--model llama2-7b --plan dp8fsdp --seq 4096 --gbs 16 --compile").out.find("torch.compile") !=
        std::string::npos);
  // The Megatron stack fuses through Transformer Engine: --compile changes nothing there.
  Run m0 = run_parsim("--model llama2-7b --plan tp8dp1 --seq 4096 --gbs 8 --format json");
  Run m1 = run_parsim("--model llama2-7b --plan tp8dp1 --seq 4096 --gbs 8 --format json --compile");
  CHECK(json::parse(m0.out)["step_time_s"] == json::parse(m1.out)["step_time_s"]);
}

TEST_CASE("--attention cudnn: NVIDIA only, said in the settings and the table") {
  Run r = run_parsim("--model llama2-7b --plan dp8fsdp --seq 4096 --gbs 16 --attention cudnn --format json");
  REQUIRE(r.status == 0);
  CHECK(json::parse(r.out)["settings"]["attention"] == "cudnn");
  CHECK(run_parsim("--model llama2-7b --plan dp8fsdp --seq 4096 --gbs 16 --attention cudnn").out.find("cudnn attention") !=
        std::string::npos);
  // cuDNN does not exist on AMD Instinct: one line naming the GPU and what to use instead, exit 2, nothing on stdout.
  Run bad = run_parsim("--model llama2-7b --plan dp8fsdp --gpu mi300x --attention cudnn");
  CHECK(bad.clean_error());
  CHECK(bad.err.rfind("parsim: error: --attention cudnn needs an NVIDIA GPU", 0) == 0);
  CHECK(bad.err.find("MI300X") != std::string::npos);
  // The sweep refuses it the same way (its reproduce lines would otherwise print commands predict rejects).
  Run sweep = run_parsim("sweep --model llama3-8b --gpus 8 --gpu mi300x --attention cudnn");
  CHECK(sweep.clean_error());
  CHECK(sweep.err == bad.err);
}
