// The invalid-input catalogue of issue 12, through the built binary. Each class is one row: a command on a prepared
// input, and the text its error must contain — the value or path at fault. Every row must end with exit status 2,
// exactly one line on stderr starting `parsim: error: `, and nothing on stdout (docs/cli.md, "Errors").
// Classes: numbers at and beyond their limits, NaN/inf, int64 overflow, empty / binary / truncated / deeply nested
// files, unknown and repeated keys, directories, unwritable outputs, files that never end, inconsistent plans — for
// predict (--model and --gpu files, flags, plans), profile, calibrate and merge.
#include "../cli/run.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace parsim::testing;

namespace {

struct Case {
  std::string name;     // the class
  std::string args;     // command line after the binary
  std::string expect;   // text the one-line error must contain
};

int checked = 0;

void run_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const Run r = run_parsim(c.args);
    INFO("class: " << c.name << "\n  args: " << c.args << "\n  status " << r.status << "\n  stdout: "
                   << r.out.substr(0, 300) << "\n  stderr: " << r.err.substr(0, 500));
    CHECK(r.clean_error());
    CHECK(r.err.find(c.expect) != std::string::npos);
    ++checked;
  }
}

std::string dir(const std::string& name) {
  std::filesystem::create_directories(name);
  return name;
}

std::string gz(const std::string& name, const std::string& text) {
  gzFile f = gzopen(name.c_str(), "wb9");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return name;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

std::string nested(int levels) { return std::string(static_cast<std::size_t>(levels), '[') + std::string(static_cast<std::size_t>(levels), ']'); }

const std::string kModel =
    R"({"name": "tiny", "layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1000, "seq_len": 512,)"
    R"( "activation": "swiglu"})";
const std::string kTrace = std::string(PARSIM_TEST_DATA) + "/profiles/hta-amd-mi250-toy/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
const std::string kNccl = std::string(PARSIM_TEST_DATA) + "/nccl/aws_p5_2node_16xH100_all_reduce.txt";

}  // namespace

TEST_CASE("catalogue: predict --model files") {
  const auto m = [](const std::string& name, const std::string& text) {
    return "--plan dp1 --model " + write_temp(name, text);
  };
  run_cases({
      {"empty file", m("empty.json", ""), "not valid JSON"},
      {"binary file", m("binary.json", std::string("\x7f" "ELF\x02\x01\x00\xff\xfe", 9)), "not valid JSON"},
      {"truncated JSON", m("trunc.json", kModel.substr(0, 40)), "unexpected end of file (truncated?)"},
      {"100,000 levels of nesting", m("deep.json", R"({"layers": )" + nested(100000) + "}"), "nested deeper than 64"},
      {"repeated key", m("dup.json", replace(kModel, R"("layers": 2,)", R"("layers": 2, "layers": 4,)")),
       "key 'layers' appears twice"},
      {"unknown key", m("unknown.json", replace(kModel, "\"ffn_hidden\"", "\"ffn_hiden\": 5, \"ffn_hidden\"")), "unknown key 'ffn_hiden'"},
      {"number beyond a double", m("e400.json", replace(kModel, "\"layers\": 2", "\"layers\": 1e400")), "'1e400'"},
      {"integer key beyond int64", m("e30.json", replace(kModel, "\"hidden\": 256", "\"hidden\": 1e30")), "got 1e+30"},
      {"2^64 as an integer", m("u64.json", replace(kModel, "\"vocab\": 1000", "\"vocab\": 18446744073709551616")),
       "'vocab' must be an integer"},
      {"int key beyond int32", m("i32.json", replace(kModel, "\"layers\": 2", "\"layers\": 2147483648")),
       "'layers' = 2147483648 is out of range"},
      {"fraction for an integer", m("frac.json", replace(kModel, "\"heads\": 4", "\"heads\": 4.5")), "got 4.5"},
      {"negative size", m("neg.json", replace(kModel, "\"hidden\": 256", "\"hidden\": -256")), "got -256"},
      {"zero layers", m("zero.json", replace(kModel, "\"layers\": 2", "\"layers\": 0")), "layers must be a positive integer, got 0"},
      {"NaN literal", m("nan.json", replace(kModel, "\"layers\": 2", "\"layers\": NaN")), "near 'NaN, \"hidden\""},
      {"string for a number", m("str.json", replace(kModel, "\"layers\": 2", "\"layers\": \"2\"")), "got \"2\""},
      {"array instead of object", m("arr.json", "[1, 2]"), "must hold a JSON object, got array"},
      {"heads do not divide hidden", m("div.json", replace(kModel, "\"heads\": 4", "\"heads\": 3")),
       "heads 3 does not divide hidden 256"},
      {"model beyond 1e15 parameters",
       m("huge.json", replace(kModel, "\"vocab\": 1000", "\"vocab\": 10000000000000")), "beyond what parsim models (at most 1e15)"},
      {"invalid UTF-8 in a string", m("utf8.json", replace(kModel, "\"tiny\"", "\"ti\xff\xfeny\"")), "not valid JSON"},
      {"HF config of an unsupported family", m("bert.json", R"({"model_type": "bert", "num_hidden_layers": 2})"),
       "model_type 'bert' is not supported"},
      // A directory is read as a Hugging Face checkpoint (its config.json); without one it says so — not
      // "unknown model", with or without a slash.
      {"directory without config.json", "--plan dp1 --model " + dir("cat_model_dir") + "/",
       "model directory 'cat_model_dir/' has no config.json"},
      {"directory named without a slash", "--plan dp1 --model " + dir("cat_adir"), "model directory 'cat_adir' has no config.json"},
      {"a file path that is a directory", "--plan dp1 --model " + dir("cat_dir.json"), "has no config.json"},
      {"missing file", "--plan dp1 --model no_such_model.json", "'no_such_model.json' does not exist"},
      {"a file that never ends", "--plan dp1 --model /dev/zero", "is larger than 16 MiB"},
  });
}

TEST_CASE("catalogue: predict --gpu files, flags and plans") {
  const auto g = [](const std::string& name, const std::string& text) {
    return "--model llama7b --plan dp8 --gpu " + write_temp(name, text);
  };
  run_cases({
      {"hardware: repeated key", g("hw_dup.json", R"({"base": "h100", "base": "a100"})"), "key 'base' appears twice"},
      {"hardware: nested repeated key",
       g("hw_dup2.json", R"({"base": "h100", "gpu": {"compute": {"num_sms": 10, "num_sms": 12}}})"),
       "key 'gpu.compute.num_sms' appears twice"},
      {"hardware: number beyond a double", g("hw_e400.json", R"({"base": "h100", "gpu": {"hbm_gib": 1e400}})"), "'1e400'"},
      {"hardware: zero where a positive number belongs", g("hw_zero.json", R"({"base": "h100", "gpu": {"hbm_gib": 0}})"),
       "gpu.hbm_gib must be a number > 0, got 0"},
      {"hardware: peak that overflows to inf", g("hw_inf.json", R"({"base": "h100", "gpu": {"peak_bf16_tflops": 1e300}})"),
       "gpu.peak_bf16_tflops"},
      {"hardware: integer key beyond int64", g("hw_sms.json", R"({"base": "h100", "gpu": {"compute": {"num_sms": 1e30}}})"),
       "got 1e+30"},
      {"hardware: integer at its limit + 1", g("hw_gpn.json", R"({"base": "h100", "node": {"gpus_per_node": 1000001}})"),
       "got 1000001"},
      {"hardware: unknown base", g("hw_base.json", R"({"base": "h900"})"), "unknown GPU 'h900'"},
      {"hardware: truncated", g("hw_trunc.json", R"({"base": "h1)"), "unexpected end of file"},
      {"hardware: directory", "--model llama7b --plan dp8 --gpu " + dir("cat_hw_dir") + "/", "is a directory"},
      {"flag: int64 overflow", "--model llama7b --plan dp8 --seq 99999999999999999999", "'99999999999999999999'"},
      {"flag: zero", "--model llama7b --plan dp8 --mbs 0", "--mbs must be a positive integer, got '0'"},
      {"flag: NaN", "--model llama7b --plan dp8 --goodput nan", "got 'nan'"},
      {"flag: infinity", "--model llama7b --plan dp8 --goodput inf", "got 'inf'"},
      {"flag: beyond a double", "--model llama7b --plan dp8 --bucket-mb 1e400", "got '1e400'"},
      {"flag: finite number, infinite once its suffix applies", "--model llama7b --plan dp8 --tokens 1e308T",
       "got '1e308T'"},
      {"unwritable --trace (a directory)", "--model llama7b --plan dp8 --trace " + dir("cat_trace_dir"), "cat_trace_dir"},
      {"unwritable --trace (no such directory)", "--model llama7b --plan dp8 --trace no/such/dir/t.json", "no/such/dir/t.json"},
      {"unwritable --svg (a directory)", "--model llama7b --plan dp8 --svg " + dir("cat_svg_dir"), "cat_svg_dir"},
      {"unwritable sweep --svg (no such directory)", "sweep --model llama7b --gpus 8 --tp 8 --svg no/such/dir/s.svg",
       "no/such/dir/s.svg"},
      {"compare: one plan", "compare --model llama7b --plan dp8", "compare needs at least two plans"},
      {"sweep: negative headroom", "sweep --model llama7b --gpus 8 --headroom-gib -4", "--headroom-gib"},
      {"plan: tp does not divide the heads", "--model llama7b --plan tp3", "tp3 does not divide the 32 attention heads"},
      {"plan: more stages than layers", "--model llama7b --plan pp64", "pp64 = 64 pipeline chunks exceed the 32 layers"},
      {"plan: degree beyond 2^20", "--model llama7b --plan dp99999999", "'dp99999999' in 'dp99999999' is too large"},
      {"plan: unknown term", "--model llama7b --plan tp8xx2", "unknown plan term 'xx2'"},
      // dp × mbs beyond int64 was signed overflow in plan validation (found by fuzz_plan; the library guard is kept
      // and replayed in tests/fuzz/regressions/plan); the flags now stop at 2^40 before it.
      {"flag beyond its limit: --mbs 18 digits", "--model llama7b --plan dp1048576 --mbs 999999999999999999",
       "--mbs 999999999999999999 is too large (at most 1099511627776)"},
      {"flag beyond its limit: --gbs 18 digits", "--model llama7b --plan dp8 --gbs 999999999999999999",
       "--gbs 999999999999999999 is too large (at most 1099511627776)"},
      // Round 2 (issue 12, "next round" of tests/fuzz/README.md):
      // 8192 micro-batches with per-layer slices: ~2.2 million events (tests/hardening/test_scale.cpp derives it).
      {"--trace beyond 2,000,000 events", "--model llama7b --plan pp2 --gbs 8192 --seq 128 --trace cat_big_trace.json",
       "--trace 'cat_big_trace.json' would hold"},

      {"plan: tp does not divide the FFN (tp40 on llama2-13b: 40 heads, ffn 13,824)", "--model llama2-13b --plan tp40",
       "tp40 does not divide the FFN hidden size 13824 of llama2-13b (tensor parallelism splits it evenly; valid tp: 1, 2, 4, 8)"},
      {"micro-batches beyond 2^20 (gbs 2^40 on dp8)", "--model llama7b --plan dp8 --gbs 1099511627776",
       "= 137438953472 micro-batches per step is beyond what parsim simulates (at most 1048576)"},
      {"--bucket-mb below 1 kB (overflowed the clock)", "--model llama7b --plan dp8 --bucket-mb 1e-300",
       "--bucket-mb 1e-300 is out of range (1e-3 to 1e9 MB"},
      {"--bucket-mb beyond 1 PB (an out-of-range cast)", "--model llama7b --plan dp8 --bucket-mb 1e300",
       "--bucket-mb 1e+300 is out of range"},
      // 10^12 tokens: one forward takes ~7e14 s, beyond the int64-nanosecond clock (was exit 3 "negative duration").
      {"a step beyond the int64-ns clock (--seq 10^12)", "--model llama7b --plan dp8 --seq 1000000000000",
       "the simulated step is beyond parsim's clock: a forward pass takes "},
      {"a step beyond the clock (hardware efficiency 1e-300)",
       "--model llama7b --plan dp8 --gpu " + write_temp("hw_eff.json", R"({"base": "h100", "gpu": {"compute": {"gemm_ceiling": 1e-300, "hbm_efficiency": 1e-300}}})"),
       "the simulated step is beyond parsim's clock"},
      // The sweep fails when a plan cannot be simulated (it used to exit 0 with every plan counted as "error").
      {"sweep: plans beyond the clock", "sweep --model llama7b --gpus 8 --top 2 --gpu " +
       write_temp("hw_eff2.json", R"({"base": "h100", "gpu": {"compute": {"gemm_ceiling": 1e-300, "hbm_efficiency": 1e-300}}})"),
       "plans could not be simulated; the first, tp1pp1dp8zero1 mbs 1 recompute none: the simulated step is beyond parsim's clock"},
      {"plan: gbs not a multiple of dp x mbs", "--model llama7b --plan dp2 --gbs 3", "global batch 3 is not divisible"},
      // Schedule preconditions (plans/schedule.cpp schedule_precondition_error).
      {"schedule: dualpipe on an odd pp", "--model llama7b --plan pp3 --gbs 12 --schedule dualpipe",
       "it needs an even pp, got pp3"},
      {"schedule: dualpipe with fewer than 2 pp micro-batches", "--model llama7b --plan pp4 --gbs 6 --schedule dualpipe",
       "at least 2 × pp = 8 micro-batches"},
      {"schedule: dualpipe with an odd micro-batch count", "--model llama7b --plan pp4 --gbs 9 --schedule dualpipe",
       "even micro-batch count"},
      {"schedule: zb-v without vpp2", "--model llama7b --plan pp4 --schedule zb-v", "it needs vpp2 in the plan"},
      {"schedule: zb-h1 with vpp", "--model llama7b --plan pp4vpp2 --schedule zb-h1", "not zb-h1"},
      {"schedule: unknown name", "--model llama7b --plan pp4 --schedule zb-h3", "'zb-h3' is not valid"},
      {"flag: unknown optimizer sync", "--model llama7b --plan pp4 --optimizer-sync sometimes", "'sometimes'"},
  });
}

TEST_CASE("catalogue: profile") {
  const std::string real = slurp(kTrace);  // a real gzip trace, cut in half below
  run_cases({
      {"trace: directory", "profile " + dir("cat_trace_in_dir"), "'cat_trace_in_dir' is a directory"},
      {"trace: missing", "profile no_such_trace.json", "'no_such_trace.json' does not exist"},
      {"trace: empty", "profile " + write_temp("t_empty.json", ""), "t_empty.json"},
      {"trace: binary", "profile " + write_temp("t_bin.json", std::string("\x00\x01\xff\xfe", 4)), "t_bin.json"},
      {"trace: truncated gzip", "profile " + write_temp("t_trunc.json.gz", real.substr(0, real.size() / 2)), "corrupt or truncated gzip"},
      {"trace: 100,000 levels of nesting", "profile " + write_temp("t_deep.json", "{\"traceEvents\": " + nested(100000) + "}"),
       "nested deeper than 64 levels"},
      {"trace: no traceEvents", "profile " + write_temp("t_other.json", R"({"schema": 1})"), "no 'traceEvents' list"},
      {"trace: one 65 MiB string (bounded memory)",
       "profile " + gz("t_long.json.gz", "{\"traceEvents\": [{\"name\": \"" + std::string(65u << 20, 'k') + "\"}]}"),
       "longer than 64 MiB"},
  });
}

TEST_CASE("catalogue: calibrate") {
  run_cases({
      {"directory", "calibrate " + dir("cat_nccl_dir"), "'cat_nccl_dir' is a directory"},
      {"one line of 60,000 spaces", "calibrate " + write_temp("n_spaces.txt", std::string(60000, ' ') + "\n"),
       "no nccl-tests result table"},
      {"one line of 60,000 digits", "calibrate " + write_temp("n_digits.txt", std::string(60000, '7') + "\n"),
       "no nccl-tests result table"},
      {"19-digit element count",
       "calibrate " + write_temp("n_count.txt", "#  size count type redop root time algbw busbw #wrong time algbw busbw\n"
                                                "   1024 9999999999999999999 float sum -1 10.0 0.1 0.2 0 10.0 0.1 0.2\n"),
       "'9999999999999999999'"},
      {"message size beyond 2^53",
       "calibrate " + write_temp("n_size.txt", "#  size count type redop root time algbw busbw #wrong time algbw busbw\n"
                                               "   99999999999999999 4 float sum -1 10.0 0.1 0.2 0 10.0 0.1 0.2\n"),
       "'99999999999999999'"},
      {"--ranks at INT_MAX", "calibrate " + kNccl + " --ranks 2147483647", "--ranks 2147483647"},
      {"--ranks 1 (no bus bandwidth on one rank)", "calibrate " + kNccl + " --ranks 1", "ran on 1 rank (--ranks)"},
      {"binary file", "calibrate " + write_temp("n_bin.txt", std::string("\x00\xff\x01", 3)), "no nccl-tests result table"},
      {"unwritable --out (a directory)", "calibrate " + kNccl + " --out " + dir("cat_out_dir"),
       "cannot write --out file 'cat_out_dir': it is a directory"},
      {"unwritable --out (no such directory)", "calibrate " + kNccl + " --out no/such/dir/hw.json",
       "'no/such/dir/hw.json': No such file or directory"},
      {"a file that never ends", "calibrate /dev/zero", "is larger than 64 MiB"},
  });
}

TEST_CASE("catalogue: merge") {
  const Run json_run = run_parsim("sweep --model llama7b --gpus 8 --top 2 --format json");
  const Run csv_run = run_parsim("sweep --model llama7b --gpus 8 --top 2 --format csv");
  REQUIRE(json_run.status == 0);
  REQUIRE(csv_run.status == 0);
  const std::string j = json_run.out, c = csv_run.out;
  const auto lines = [&] {  // the CSV's header and first row, with one column of the row replaced
    const auto nl = c.find('\n');
    return std::make_pair(c.substr(0, nl + 1), c.substr(nl + 1, c.find('\n', nl + 1) - nl));
  }();
  auto csv_with = [&](const std::string& col, const std::string& value) {
    // Replace the value of column `col` in the first data row.
    std::vector<std::string> head, row;
    std::string cur;
    for (char ch : lines.first) {
      if (ch == ',' || ch == '\n') head.push_back(cur), cur.clear();
      else cur += ch;
    }
    for (char ch : lines.second) {
      if (ch == ',' || ch == '\n') row.push_back(cur), cur.clear();
      else cur += ch;
    }
    std::string out = lines.first;
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + (head[i] == col ? value : row[i]);
    return out + "\n";
  };
  run_cases({
      {"shard: repeated key", "merge " + write_temp("m_dup.json", replace(j, "\"evaluated\":", "\"evaluated\": 1, \"evaluated\":")),
       "key 'evaluated' appears twice"},
      {"shard: 100,000 levels of nesting", "merge " + write_temp("m_deep.json", "{\"sweep\": " + nested(100000) + "}"),
       "nested deeper than 64"},
      {"shard: number beyond a double", "merge " + write_temp("m_e400.json", replace(j, "\"step_time_s\":", "\"step_time_s\": 1e400, \"x\":")),
       "'1e400'"},
      {"shard: negative count", "merge " + write_temp("m_neg.json", replace(j, "\"evaluated\":", "\"evaluated\": -2, \"_\":")),
       "key 'evaluated' must be an integer from 0 to"},
      {"shard: sweep.predict_flags missing (was undefined behaviour: operator[] on a const object)",
       "merge " + write_temp("m_flags.json", replace(j, "\"predict_flags\"", "\"Gredict_flags\"")),
       "sweep.predict_flags and sweep.shards must be arrays"},
      {"shard: unknown key", "merge " + write_temp("m_unk.json", replace(j, "\"evaluated\":", "\"evaluatd\": 3, \"evaluated\":")),
       "unknown key 'evaluatd'"},
      {"CSV: mbs 1e30", "merge " + write_temp("m_mbs.csv", csv_with("mbs", "1e30")), "'1e30' is not an integer"},
      {"CSV: NaN step time", "merge " + write_temp("m_nan.csv", csv_with("step_time_s", "nan")), "'nan' is not a finite number"},
      {"CSV: invalid UTF-8", "merge " + write_temp("m_utf8.csv", csv_with("model", "llama\xff")), "not valid UTF-8"},
      {"CSV: empty", "merge " + write_temp("m_empty.csv", ""), "empty CSV"},
      {"shard: directory", "merge " + dir("cat_merge_dir"), "'cat_merge_dir' is a directory"},
  });
  // Round 2: a merge must be the whole sweep, or say it is not (issue 12: 2 of 3 shards, or a plain CSV, merged
  // silently into a ranking that had lost plans).
  std::vector<std::string> shard;
  for (int i = 0; i < 3; ++i) {
    const Run s = run_parsim("sweep --model llama7b --gpus 8 --top 2 --format json --shard " + std::to_string(i) + "/3");
    REQUIRE(s.status == 0);
    shard.push_back(write_temp("m_shard" + std::to_string(i) + ".json", s.out));
  }
  const std::string csv = write_temp("m_plain.csv", c);
  run_cases({
      {"merge: 2 of 3 shards", "merge " + shard[0] + " " + shard[2],
       "the inputs hold 2 of the 3 shards of this sweep: shard 1/3 is missing"},
      {"merge: 1 of 3 shards", "merge " + shard[1], "the inputs hold 1 of the 3 shards of this sweep: shard 0/3 and 1 more are missing"},
      {"merge: a plain sweep CSV", "merge " + csv, "is a sweep CSV: it holds result rows but not its shard or its plan counts"},
  });
  // With --partial the merge ranks what it has and says what it is.
  const Run all3 = run_parsim("merge --format json " + shard[0] + " " + shard[1] + " " + shard[2]);
  REQUIRE(all3.status == 0);
  const Run part = run_parsim("merge --partial --format json " + shard[0] + " " + shard[2]);
  INFO(part.err);
  REQUIRE(part.status == 0);
  const auto pj = nlohmann::json::parse(part.out);
  CHECK(pj["complete"] == false);
  CHECK(pj["sweep"]["shards"] == nlohmann::json::array({0, 2}));
  const Run pcsv = run_parsim("merge --partial --format json " + csv);
  REQUIRE(pcsv.status == 0);
  const auto cj = nlohmann::json::parse(pcsv.out);
  CHECK(cj["counts_known"] == false);
  CHECK(cj["sweep"]["model"] == "llama7b");  // the CSV's rows carry model and GPU
}

TEST_CASE("catalogue: the command line (CLI11's own texts never reach the user)") {
  run_cases({
      {"mistyped command", "predcit --model llama7b --plan dp8", "unknown command 'predcit' (did you mean 'predict'?)"},
      {"unknown command, nothing close", "xyzzy --gpus 8", "unknown command 'xyzzy'; commands: predict (the default)"},
      {"mistyped option", "--modle llama7b --plan dp8", "unknown option '--modle' for `parsim predict` (did you mean '--model'?)"},
      {"option of another command", "--model llama7b --plan dp8 --all", "unknown option '--all' for `parsim predict`"},
      {"mistyped option before a file argument", "calibrate --fromat json " + kNccl,
       "unknown option '--fromat' for `parsim calibrate` (did you mean '--format'?)"},
      {"stray word", "--model llama7b --plan dp8 extra", "unexpected argument 'extra' for `parsim predict`"},
      {"two files where calibrate reads one", "calibrate " + kNccl + " " + kNccl, "unexpected argument"},
      {"option without its value", "sweep --model llama7b --gpus", "--gpus needs a value (INT)"},
      {"option given twice", "--model llama7b --plan dp8 --mbs 2 --mbs 3", "--mbs is given 2 times; give it once"},
      {"empty value (was: the default)", "--model llama7b --plan dp8 --gbs ''", "--gbs must be a positive integer, got ''"},
      {"empty value for sweep (--gbs=)", "sweep --model llama7b --gpus 8 --gbs=", "--gbs needs a value (INT)"},
      {"integer option beyond its limit", "calibrate " + kNccl + " --ranks 99999999999", "--ranks 99999999999 is too large"},
  });
}

TEST_CASE("sweep --gbs 2^40 ends at once (it enumerated every micro-batch size up to gbs/dp: a hang)") {
  // Micro-batch sizes are powers of two (or the listed --mbs), ≤ 41 per configuration; plans beyond 2^20
  // micro-batches are refused by validation, and the rest do not fit in memory: 2^40 / dp sequences per replica of
  // at least 2^17 sequences each hold terabytes of activations.
  const Run r = run_parsim("sweep --model llama7b --gpus 8 --gbs 1099511627776 --top 1 --threads 1");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("no plan fits in memory") != std::string::npos);
}

TEST_CASE("output to a full disk is an error, not exit 0") {
  // `parsim … > /dev/full`: every write fails with ENOSPC; main() checks stdout after the command (issue 12).
  for (const std::string args : {"--model llama7b --plan dp8", "--model llama7b --plan dp8 --format json",
                                 "sweep --model llama7b --gpus 8 --top 1 --format csv"}) {
    const std::string err = "cat_full_" + std::to_string(getpid()) + ".err";
    const int rc = std::system((std::string(PARSIM_BIN) + " " + args + " >/dev/full 2>" + err).c_str());
    const std::string text = slurp(err);
    std::remove(err.c_str());
    INFO(args << "\n" << text);
    CHECK(WIFEXITED(rc));
    CHECK(WEXITSTATUS(rc) == 2);
    CHECK(text == "parsim: error: cannot write the output to standard output: No space left on device\n");
  }
}

TEST_CASE("--gpu h100 is the preset even when ./h100 exists (a path needs a slash or .json)") {
  dir("h100");  // a directory of the preset's name in the working directory
  const Run r = run_parsim("--model llama7b --plan dp8 --gpu h100 --format json");
  INFO(r.err);
  CHECK(r.status == 0);
  const Run p = run_parsim("--model llama7b --plan dp8 --gpu ./h100");
  CHECK(p.clean_error());
  CHECK(p.err.find("'./h100' is a directory") != std::string::npos);
  std::filesystem::remove("h100");
}

TEST_CASE("paths and flags that are not UTF-8 still give valid JSON output (exit 0, not 'internal error')") {
  // nlohmann::json refuses to serialise invalid UTF-8 (type_error 316): a directory named in Latin-1 reached the user
  // as exit 3. Names derived from paths are sanitised and output is serialised with U+FFFD for bad bytes.
  const std::string d = dir("cat_bad\xff\xfe_dir");
  const std::string model = d + "/config.json", hw = d + "/hw.json";
  std::filesystem::copy_file(std::string(PARSIM_TEST_DATA) + "/models/gpt2.config.json", model,
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream(hw) << R"({"base": "h100"})";
  }
  for (const std::string& args : {"--model " + model + " --plan dp1 --format json",
                                  "--model llama7b --plan dp8 --gpu " + hw + " --format json",
                                  "sweep --model " + model + " --gpus 8 --top 1 --format json",
                                  "sweep --model llama7b --gpus 8 --gpu " + hw + " --top 1 --format json"}) {
    const Run r = run_parsim(args);
    INFO(args << "\n" << r.err);
    CHECK(r.status == 0);
    CHECK(nlohmann::json::accept(r.out));
  }
}

TEST_CASE("the catalogue holds at least 40 classes") { CHECK(checked >= 40); }
