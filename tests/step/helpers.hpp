// Shared helpers for the simulator tests.
#pragma once
#include "sim/step/evaluate.hpp"

namespace parsim::testing {

// A Llama-style model with uniform layers and a tiny vocabulary, so that embedding and LM head are negligible and the
// pipeline stages are uniform (what the closed-form bubble assumes).
inline ModelSpec uniform_model(int layers = 32) {
  ModelSpec m;
  m.name = "uniform";
  m.layers = layers;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.head_dim = 128;
  m.ffn_hidden = 11008;
  m.vocab = 128;
  m.seq_len = 4096;
  return m;
}

// H100 whose network is free: no latency, practically infinite bandwidth (communication takes ~0 time).
inline Hardware free_network(Hardware hw) { return with_free_network(hw); }

inline Scenario scenario(const std::string& model, const std::string& plan, const std::string& gpu = "h100",
                         std::int64_t gbs = 0, std::int64_t mbs = 1, std::int64_t seq = 0) {
  ScenarioInput a;
  a.model = model;
  a.plan = plan;
  a.gpu = gpu;
  a.train.gbs = gbs;
  a.train.mbs = mbs;
  a.train.seq = seq;
  return resolve_scenario(a);
}

}  // namespace parsim::testing
