// Plan grammar (docs/cli.md "Plan grammar"), canonical strings, batch defaults, layer split.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

using namespace parsim;
using parsim::test::error_of;

TEST_CASE("parse_plan reads every term, in any order, case-insensitively; a missing degree is 1") {
  const Plan p = parse_plan("DP4tp8Pp2");
  CHECK(p.tp == 8);
  CHECK(p.pp == 2);
  CHECK(p.dp == 4);
  CHECK(p.cp == 1);
  CHECK(p.vpp == 1);
  CHECK(p.sharding == Sharding::None);
  // world = tp·pp·dp·cp = 8·2·4·1
  CHECK(p.world() == 64);

  const Plan q = parse_plan("tp4pp8dp16vpp5zero1");
  CHECK(q.vpp == 5);
  CHECK(q.sharding == Sharding::Zero1);
  const Plan c = parse_plan("tp8pp16cp2dp8");
  CHECK(c.cp == 2);
  // 8·16·2·8
  CHECK(c.world() == 2048);
  const Plan h = parse_plan("dp128hsdp8");
  CHECK(h.sharding == Sharding::HSDP);
  CHECK(h.hsdp_group == 8);
  CHECK(h.tp == 1);
  CHECK(parse_plan("dp64fsdp").sharding == Sharding::FSDP);
  CHECK(parse_plan("zero3dp8").sharding == Sharding::Zero3);
  CHECK(parse_plan("dp8zero2").sharding == Sharding::Zero2);
  CHECK(parse_plan("dp8zero0").sharding == Sharding::None);
  // Only the pipeline term: every other degree defaults to 1.
  const Plan only_pp = parse_plan("pp2");
  CHECK(only_pp.world() == 2);
  CHECK(only_pp.tp == 1);
  CHECK(only_pp.dp == 1);
}

TEST_CASE("to_string is canonical and round-trips") {
  CHECK(parse_plan("dp4tp8pp2").to_string() == "tp8pp2dp4");
  CHECK(parse_plan("dp64fsdp").to_string() == "tp1pp1dp64fsdp");
  CHECK(parse_plan("tp8pp16cp2dp8").to_string() == "tp8pp16dp8cp2");
  CHECK(parse_plan("tp4pp8dp16vpp5zero1").to_string() == "tp4pp8dp16vpp5zero1");
  CHECK(parse_plan("dp128hsdp8").to_string() == "tp1pp1dp128hsdp8");
  CHECK(parse_plan("dp8zero0").to_string() == "tp1pp1dp8");  // zero0 = plain DDP, the default, not written
  for (const char* s : {"tp8pp2dp4", "tp1pp1dp64fsdp", "tp8pp16dp8cp2", "tp4pp8dp16vpp5zero1", "tp1pp1dp128hsdp8",
                        "tp2pp4dp2cp4vpp3zero3", "tp1pp1dp1", "tp1pp2dp8hsdp8", "tp1pp1dp8hsdp1", "tp2pp1dp4zero2"}) {
    CAPTURE(s);
    const Plan p = parse_plan(s);
    CHECK(p.to_string() == s);
    const Plan r = parse_plan(p.to_string());
    CHECK(r.tp == p.tp);
    CHECK(r.pp == p.pp);
    CHECK(r.dp == p.dp);
    CHECK(r.cp == p.cp);
    CHECK(r.vpp == p.vpp);
    CHECK(r.sharding == p.sharding);
    CHECK(r.hsdp_group == p.hsdp_group);
  }
}

TEST_CASE("parse_plan errors name the offending term") {
  using doctest::Contains;
  CHECK(error_of([] { parse_plan("tp8xx2"); }) == Contains("unknown plan term 'xx2'"));
  CHECK(error_of([] { parse_plan("tp8-pp2"); }) == Contains("unknown plan term '-'"));
  CHECK(error_of([] { parse_plan("tp8ep2ep4"); }) == Contains("repeated plan term 'ep4'"));
  CHECK(error_of([] { parse_plan("tp8etp"); }) == Contains("'etp' in 'tp8etp' is missing its number"));
  CHECK(error_of([] { parse_plan("tp2tp4"); }) == Contains("repeated plan term 'tp4'"));
  CHECK(error_of([] { parse_plan("zero1zero1dp2"); }) == Contains("repeated plan term 'zero1'"));
  CHECK(error_of([] { parse_plan("tp0pp2"); }) == Contains("'tp0'"));
  CHECK(error_of([] { parse_plan("tp0pp2"); }) == Contains("degree 0"));
  CHECK(error_of([] { parse_plan("dp8hsdp0"); }) == Contains("degree 0"));
  CHECK(error_of([] { parse_plan("tppp2"); }) == Contains("'tp'"));
  CHECK(error_of([] { parse_plan("tppp2"); }) == Contains("missing its number"));
  CHECK(error_of([] { parse_plan("dp8zero"); }) == Contains("missing its number"));
  CHECK(error_of([] { parse_plan("dp8hsdp"); }) == Contains("missing its number"));
  CHECK(error_of([] { parse_plan("dp8zero1fsdp"); }) == Contains("two sharding terms 'zero1' and 'fsdp'"));
  CHECK(error_of([] { parse_plan("dp8hsdp4zero2"); }) == Contains("two sharding terms"));
  CHECK(error_of([] { parse_plan("dp8zero4"); }) == Contains("'zero4'"));
  CHECK(error_of([] { parse_plan("dp8fsdp2"); }) == Contains("takes no number"));
  // hsdp N must divide dp: 6 % 4 = 2 ≠ 0.
  CHECK(error_of([] { parse_plan("dp6hsdp4"); }) == Contains("hsdp4"));
  CHECK(error_of([] { parse_plan("dp6hsdp4"); }) == Contains("does not divide dp6"));
  CHECK(error_of([] { parse_plan(""); }) == Contains("empty plan"));
  CHECK(error_of([] { parse_plan("tp99999999999"); }) == Contains("too large"));
  // 2^20 · 2^20 = 2^40 GPUs > 2^24.
  CHECK(error_of([] { parse_plan("tp1048576dp1048576"); }) == Contains("world size"));
}

TEST_CASE("hsdp edge cases: N == dp and N == 1 are accepted and reported") {
  // hsdp8 with dp8: one shard group holding every DP rank, i.e. fsdp.
  const Plan whole = parse_plan("dp8hsdp8");
  CHECK(whole.hsdp_group == 8);
  const auto w = plan_warnings(whole, test::llama2_7b(), test::node_of(8), test::train(4096, 64));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("same as fsdp") != std::string::npos);
  // hsdp1: shard groups of one rank, nothing sharded.
  const auto w1 = plan_warnings(parse_plan("dp8hsdp1"), test::llama2_7b(), test::node_of(8), test::train(4096, 64));
  REQUIRE(w1.size() == 1);
  CHECK(w1[0].find("shards nothing") != std::string::npos);
}

TEST_CASE("schedule and sharding names") {
  CHECK(parse_schedule("GPipe") == Schedule::GPipe);
  CHECK(parse_schedule("1F1B") == Schedule::OneFOneB);
  CHECK(parse_schedule("interleaved") == Schedule::Interleaved);
  CHECK(to_string(Schedule::OneFOneB) == "1f1b");
  CHECK(parse_schedule("ZB-H1") == Schedule::ZBH1);
  CHECK(parse_schedule("zbv") == Schedule::ZBV);
  CHECK(to_string(Schedule::DualPipeV) == "dualpipev");
  CHECK(error_of([] { parse_schedule("zb-h3"); }) == doctest::Contains("'zb-h3'"));
  CHECK(parse_sharding("2") == Sharding::Zero2);
  CHECK(parse_sharding("ZERO3") == Sharding::Zero3);
  CHECK(parse_sharding("fsdp") == Sharding::FSDP);
  CHECK(to_string(Sharding::None) == "zero0");
  CHECK(error_of([] { parse_sharding("4"); }) == doctest::Contains("'4'"));
}

TEST_CASE("default_gbs: ⌈4,194,304 / seq⌉ rounded up to a multiple of dp × mbs (cli.md)") {
  // seq 4096: 4,194,304 / 4096 = 1024 exactly, already a multiple of dp·mbs = 4.
  CHECK(default_gbs(4096, 4, 1) == 1024);
  // dp·mbs = 3·2 = 6: 1024 → 1026 (= 171·6).
  CHECK(default_gbs(4096, 3, 2) == 1026);
  // seq 3000: 4,194,304 / 3000 = 1398.1 → 1399 → multiple of 8: 1400.
  CHECK(default_gbs(3000, 8, 1) == 1400);
  // seq 8192: 512 sequences; dp 1024 → 1024.
  CHECK(default_gbs(8192, 1024, 1) == 1024);
  CHECK(sweep_default_gbs(8192) == 512);
  CHECK(error_of([] { default_gbs(0, 1, 1); }) == doctest::Contains("sequence length"));
  CHECK(error_of([] { default_gbs(4096, 1, 0); }) == doctest::Contains("--mbs"));
}

TEST_CASE("layers_per_chunk: Megatron-Core uneven split, lighter ends") {
  // Llama-3.1-405B: 126 layers on pp8 × vpp8 = 64 chunks. ⌊126/64⌋ = 1, 126 mod 64 = 62: 62 chunks hold 2 layers,
  // 64 − 62 = 2 chunks hold 1 — chunk 0 (stage 0, embedding) and chunk 63 (stage 7, LM head): Megatron-Core's
  // account-for-embedding/loss split, (126 + 2) / 64 = 2 slots per chunk.
  const auto c405 = layers_per_chunk(126, 8, 8);
  REQUIRE(c405.size() == 64);
  CHECK(c405.front() == 1);
  CHECK(c405.back() == 1);
  for (std::size_t i = 1; i + 1 < c405.size(); ++i) CHECK(c405[i] == 2);
  CHECK(std::accumulate(c405.begin(), c405.end(), 0) == 126);
  // Per stage: stage 0 holds chunks 0, 8, …, 56 → 1 + 7·2 = 15; stage 7 holds 7, …, 63 → 7·2 + 1 = 15; others 16.
  const auto s405 = layers_per_stage(126, 8, 8);
  CHECK(s405 == std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15});

  // BLOOM-176B: 70 layers on pp12 (Megatron-DeepSpeed, embeddings counted as layers): ⌊70/12⌋ = 5, remainder 10:
  // ten middle stages of 6, first and last 5 → 5 + 60 + 5 = 70.
  CHECK(layers_per_chunk(70, 12, 1) == std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5});
  // Even split: 32 layers on pp4 → 8 each.
  CHECK(layers_per_chunk(32, 4, 1) == std::vector<int>{8, 8, 8, 8});
  // 33 on 8: ⌊33/8⌋ = 4, remainder 1; lighter chunks from the ends inwards 0,7,1,6,2,5,3 → chunk 4 gets 5.
  CHECK(layers_per_chunk(33, 8, 1) == std::vector<int>{4, 4, 4, 4, 5, 4, 4, 4});
  // Every chunk ≥ 1 and the sum is the layer count, for many shapes.
  for (int L : {1, 7, 32, 61, 80, 96, 126})
    for (int pp : {1, 2, 3, 4, 8, 16})
      for (int v : {1, 2, 3, 5, 8}) {
        if (pp * v > L) continue;
        const auto c = layers_per_chunk(L, pp, v);
        CHECK(std::accumulate(c.begin(), c.end(), 0) == L);
        CHECK(*std::min_element(c.begin(), c.end()) >= 1);
        // as even as possible: max − min ≤ 1
        CHECK(*std::max_element(c.begin(), c.end()) - *std::min_element(c.begin(), c.end()) <= 1);
      }
  // 8 × 8 = 64 chunks > 32 layers.
  CHECK(error_of([] { layers_per_chunk(32, 8, 8); }) == doctest::Contains("64 pipeline chunks exceed the 32 layers"));
}
