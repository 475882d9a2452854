// Golden outputs: small scenarios whose full JSON (every number, key and string) is kept in tests/data/golden/ and
// compared here — numbers to a relative 1e-9, everything else exactly, the key sets both ways. They catch drift far
// below the validation bounds (±10 % mean): a refactor that changes a number, or a key that appears or disappears,
// fails here and has to be regenerated on purpose (tests/data/golden/README.md):
//   PARSIM_REGENERATE_GOLDEN=1 build/tests/test_golden
#include "sim/api/api.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace parsim;
using nlohmann::json;

namespace {

constexpr double kRelTol = 1e-9;

std::string golden_dir() { return std::string(PARSIM_TEST_DATA) + "/golden"; }

// Differences between `want` and `got` as "path: …" lines (empty = the same).
void diff(const json& want, const json& got, const std::string& path, std::vector<std::string>& out) {
  if (out.size() > 20) return;
  if (want.is_object() && got.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it)
      if (!got.contains(it.key())) out.push_back(path + "." + it.key() + ": missing from the output");
      else diff(it.value(), got[it.key()], path + "." + it.key(), out);
    for (auto it = got.begin(); it != got.end(); ++it)
      if (!want.contains(it.key())) out.push_back(path + "." + it.key() + ": new key (regenerate the golden file?)");
    return;
  }
  if (want.is_array() && got.is_array()) {
    if (want.size() != got.size()) {
      out.push_back(path + ": " + std::to_string(got.size()) + " items, golden " + std::to_string(want.size()));
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i) diff(want[i], got[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    const double scale = std::max({std::fabs(a), std::fabs(b), 1e-300});
    if (std::fabs(a - b) > kRelTol * scale && !(a == 0 && std::fabs(b) < 1e-15))
      out.push_back(path + ": " + got.dump() + ", golden " + want.dump());
    return;
  }
  if (want != got) out.push_back(path + ": " + got.dump() + ", golden " + want.dump());
}

json run(const json& g) {
  const std::string command = g.at("command").get<std::string>();
  if (command == "predict") return api::predict(g.at("request"));
  if (command == "sweep") {
    json out = api::sweep(g.at("request"));
    out.erase("timing");  // wall and CPU time differ run to run
    return out;
  }
  throw std::runtime_error("golden file: unknown command '" + command + "'");
}

}  // namespace

TEST_CASE("golden outputs of predict and sweep") {
  const bool regenerate = std::getenv("PARSIM_REGENERATE_GOLDEN") != nullptr;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(golden_dir()))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    std::ifstream in(f);
    json g = json::parse(in);
    const json got = run(g);
    if (regenerate) {
      g["expected"] = got;
      std::ofstream(f) << g.dump(1) << "\n";
      continue;
    }
    REQUIRE(g.contains("expected"));
    std::vector<std::string> d;
    diff(g["expected"], got, "", d);
    std::string all;
    for (const auto& x : d) all += "\n  " + x;
    CAPTURE(all);
    CHECK(d.empty());
  }
}
