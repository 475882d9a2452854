// Broken inputs made from a real trace: each must give one InputError line naming the file, never a crash.
#include "helpers.hpp"

#include "sim/core/error.hpp"
#include "sim/measure/kineto.hpp"
#include "sim/measure/profile.hpp"

#include <doctest/doctest.h>

using namespace parsim;

namespace {
const std::string kReal = "profiles/hta-amd-mi250-toy/mi250_minitoy_train_ROCm6_2_kineto.json.gz";

std::string error_of(const std::string& path) {
  try {
    profile_traces({path}, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void check_one_line_naming(const std::string& msg, const std::string& path) {
  INFO(msg);
  CHECK_FALSE(msg.empty());
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(msg.find(path) != std::string::npos);
}
}  // namespace

TEST_CASE("the real trace reads the same plain and gzip-compressed") {
  const std::string text = measure_test::gunzip(measure_test::data(kReal));
  const auto plain = measure_test::write_text("mi250_plain.json", text);
  const auto a = profile_rank(kineto::read_trace(plain), {});
  const auto b = profile_rank(kineto::read_trace(measure_test::data(kReal)), {});
  CHECK(a.total_s == b.total_s);
  CHECK(a.compute_s == b.compute_s);
  CHECK(a.counted_events == b.counted_events);
}

TEST_CASE("truncated gzip") {
  const std::string bytes = measure_test::read_bytes(measure_test::data(kReal));
  const auto path = measure_test::write_text("truncated.json.gz", bytes.substr(0, bytes.size() / 2));
  check_one_line_naming(error_of(path), path);
}

TEST_CASE("corrupt gzip (bytes overwritten in the middle of the deflate stream)") {
  std::string bytes = measure_test::read_bytes(measure_test::data(kReal));
  for (std::size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  const auto path = measure_test::write_text("corrupt.json.gz", bytes);
  check_one_line_naming(error_of(path), path);
}

TEST_CASE("truncated plain JSON") {
  const std::string text = measure_test::gunzip(measure_test::data(kReal));
  const auto path = measure_test::write_text("truncated.json", text.substr(0, text.size() * 2 / 3));
  const auto msg = error_of(path);
  check_one_line_naming(msg, path);
  CHECK(msg.find("truncated") != std::string::npos);
}

TEST_CASE("not JSON, empty, JSON without traceEvents, a bare list of lists, a missing file") {
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"binary.json", std::string("\x01\x02garbage\xff", 11)},
           {"empty.json", ""},
           {"other.json", R"({"workload_graph": []})"},
           {"lists.json", R"([[1, 2, 3, 4], [5, 6, 7, 8]])"}}) {
    const auto path = measure_test::write_text(name, text);
    check_one_line_naming(error_of(path), path);
  }
  const auto missing = (measure_test::temp_dir() / "does_not_exist.json").string();
  check_one_line_naming(error_of(missing), missing);
}
