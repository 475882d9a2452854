// Unit tests of the validation data reader (published_runs.hpp): CSV quoting, the parsim_args flag string, and the
// copied data file itself (every row parses; no simulation here, that is test_validation).
#include "published_runs.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using namespace parsim::validation;

TEST_CASE("csv: quoted fields keep commas, doubled quotes and newlines") {
  const std::string text =
      "a,b,c\n"
      "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
      "2,\"two\nlines\",\n"
      "3,,\"\"";  // last line: empty unquoted and empty quoted field, no trailing newline
  const auto rows = parse_csv(text, "t");
  REQUIRE(rows.size() == 4);
  CHECK(rows[1] == std::vector<std::string>{"1", "x, y", "say \"hi\""});
  CHECK(rows[2] == std::vector<std::string>{"2", "two\nlines", ""});
  CHECK(rows[3] == std::vector<std::string>{"3", "", ""});
}

TEST_CASE("csv: malformed quoting is an InputError") {
  CHECK_THROWS_AS(parse_csv("a,\"open\n", "t"), InputError);
  CHECK_THROWS_AS(parse_csv("a,\"closed\"x\n", "t"), InputError);
  CHECK_THROWS_AS(parse_csv("a,in\"side\n", "t"), InputError);
}

TEST_CASE("published runs: header and row shape are checked") {
  const std::string header =
      "row_id,source_id,model,gpu_type,derived_step_time_s,meas_memory_gb_per_gpu,parsim_args,parsim_model_json\n";
  const auto ok = parse_published_runs(header + "R1,S1,m,g,1.5,,--plan tp1pp1dp8,\"{\"\"layers\"\": 2}\"\n", "t");
  REQUIRE(ok.size() == 1);
  CHECK(ok[0].row_id() == "R1");
  CHECK(ok[0].at("parsim_model_json") == "{\"layers\": 2}");
  // 1.5 as written in derived_step_time_s.
  CHECK(ok[0].measured_step_s() == 1.5);
  // Empty meas_memory_gb_per_gpu = not published (< 0).
  CHECK(ok[0].measured_memory_gb() < 0);
  CHECK_THROWS_AS(parse_published_runs(header + "R1,S1,m,g,1.5\n", "t"), InputError);       // too few fields
  CHECK_THROWS_AS(parse_published_runs("row_id,source_id\nR1,S1\n", "t"), InputError);      // columns missing
  const auto bad = parse_published_runs(header + "R2,S1,m,g,-3,,--plan tp1pp1dp8,{}\n", "t");
  CHECK_THROWS_AS(bad[0].measured_step_s(), InputError);                                    // not positive
}

TEST_CASE("parsim_args: the flag string becomes a ScenarioInput") {
  const ScenarioInput a = parse_parsim_args(
      "--plan tp1pp1dp32 --gpu a100-80gb --seq 2048 --gbs 512 --mbs 16 --recompute full --precision fp16 --sp "
      "--gpus-per-node 8");
  CHECK(a.plan == "tp1pp1dp32");
  CHECK(a.gpu == "a100-80gb");
  CHECK(a.train.seq == 2048);
  CHECK(a.train.gbs == 512);
  CHECK(a.train.mbs == 16);
  CHECK(a.train.recompute == Recompute::Full);
  CHECK(a.train.precision == Precision::FP16);
  CHECK(a.train.sp);
  CHECK(a.gpus_per_node == 8);
  CHECK(a.model.empty());
  const ScenarioInput b =
      parse_parsim_args("--plan=tp2pp1dp4 --bucket-mb 40 --no-overlap-grad-reduce --schedule gpipe --stack pytorch");
  CHECK(b.plan == "tp2pp1dp4");
  CHECK(b.train.bucket_bytes == 40e6);  // 40 MB = 40·10⁶ bytes
  CHECK_FALSE(b.train.overlap_grad_reduce);
  CHECK(b.train.schedule == Schedule::GPipe);
  CHECK(b.train.stack == Stack::PyTorch);
  // Not given: the option table's defaults, "auto" values unresolved.
  CHECK(a.train.schedule == Schedule::Auto);
  CHECK(a.train.stack == Stack::Auto);
  CHECK(a.train.tp_comm_overlap_auto);
}

TEST_CASE("parsim_args: anything unexpected fails loudly") {
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --zero-stage 3"), InputError);  // unknown flag
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 stray"), InputError);          // value without a flag
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --model llama7b"), InputError);
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --seq 1 --seq 2"), InputError);  // repeated
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --seq"), InputError);            // missing value
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --seq --sp"), InputError);
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --seq 2k"), InputError);         // not an integer
  CHECK_THROWS_AS(parse_parsim_args("--plan tp1pp1dp8 --sp=1"), InputError);
  CHECK_THROWS_AS(parse_parsim_args("--gpu h100"), InputError);                        // no plan
}

TEST_CASE("the copied data: 134 rows, every one parses") {
  const auto runs = load_published_runs(default_data_path());
  // tests/data/validation/README.md: the 131 rows of the shared file with usable = yes and the 3 torchtitan rows with
  // per-op checkpointing (R0372, R0376, R0377) that --recompute op made usable.
  CHECK(runs.size() == 134);
  std::set<std::string> ids;
  for (const auto& r : runs) {
    INFO(r.row_id());
    CHECK(ids.insert(r.row_id()).second);
    CHECK_NOTHROW(scenario_args(r));
    CHECK(r.measured_step_s() > 0);
    CHECK_NOTHROW(r.measured_memory_gb());
    CHECK(r.at("parsim_model_json").front() == '{');
  }
}
