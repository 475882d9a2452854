// parsim — entry point. A thin layer over the libraries: parse, dispatch, turn errors into the contract's one line.
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

int fail(const std::string& message) {
  std::cerr << "parsim: error: " << message << "\n";
  return 2;
}

// CLI11 messages sometimes span lines; the contract wants one.
std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions: `predcit` is 1 from `predict`).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// " (did you mean 'x'?)" for the closest candidate within a third of the word's length (at least 1, at most 3 edits).
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() > 64) return "";  // a pasted blob is no typo
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_d) best_d = dist, best = c;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// Shown verbatim (quoted) in a message: at most 60 bytes, control characters and non-ASCII bytes as '?'.
std::string shown_arg(const std::string& s) {
  std::string out = s.substr(0, 60);
  for (auto& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return "'" + out + (s.size() > 60 ? "…'" : "'");
}

// The first argument CLI11 could not place (allow_extras keeps them), as the contract's one line: an unknown option
// with the closest option of that command, or a stray word.
std::string extras_message(const CLI::App& cmd, const std::vector<std::string>& extras) {
  std::vector<std::string> flags;
  for (const CLI::Option* o : cmd.get_options())
    for (const auto& l : o->get_lnames()) flags.push_back("--" + l);
  const std::string where = "parsim " + cmd.get_name();
  for (const auto& e : extras)  // an unknown option first: its value is the next stray word
    if (e.size() > 1 && e[0] == '-' && !(e[1] >= '0' && e[1] <= '9')) {
      const std::string name = e.substr(0, e.find('='));
      return "unknown option " + shown_arg(name) + " for `" + where + "`" + did_you_mean(name, flags) +
             "; see `" + where + " --help`";
    }
  return "unexpected argument " + shown_arg(extras.front()) + " for `" + where + "` (it takes " +
         (cmd.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty()
              ? std::string("no positional arguments")
              : std::string("only the file arguments of its usage line")) +
         "; a value with spaces needs quotes); see `" + where + " --help`";
}

// CLI11's own words for a bad count of values, in the contract's form.
std::string parse_error_message(const CLI::ParseError& e) {
  const std::string what = one_line(e.what());
  static const std::regex missing(R"(^(\S+): \d+ required (\S+) missing$)");
  static const std::regex at_most(R"(^(\S+): At Most 1 required but received (\d+)$)");
  std::smatch m;
  if (std::regex_match(what, m, missing)) return m[1].str() + " needs a value (" + m[2].str() + ")";
  if (std::regex_match(what, m, at_most))
    return m[1].str() + " is given " + m[2].str() + " times; give it once";
  return what;
}

// What the action printed must have reached its destination: `parsim … > /dev/full` exited 0 (issue 12). std::cout
// writes through C stdio here (synced), so the error shows on fflush/ferror, not always on the stream's state.
int finish_output(int status) {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return status;
  int e = errno;
  if (e == 0) {
    // The write failed earlier, while the output was printed (an output larger than the stdio buffer): the stream
    // kept only its error flag. One more byte written and flushed gets the reason from the system again.
    std::clearerr(stdout);
    errno = 0;
    std::fputc('\n', stdout);
    if (std::fflush(stdout) != 0) e = errno;
  }
  return fail(std::string("cannot write the output to standard output: ") + (e ? std::strerror(e) : "write error"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"parsim — predict the step time, memory and bottlenecks of a parallel LLM training plan", "parsim"};
  app.set_version_flag("--version", std::string("parsim ") + PARSIM_VERSION);
  app.require_subcommand(0, 1);
  app.allow_extras();  // inherited by the subcommands: stray words are reported below in the contract's form
  app.footer("`parsim --model M --plan P` is `parsim predict --model M --plan P`. See README.md and docs in the repo.");

  parsim::cli::Action action;
  parsim::cli::add_predict(app, action);
  parsim::cli::add_sweep(app, action);
  parsim::cli::add_merge(app, action);
  parsim::cli::add_profile(app, action);
  parsim::cli::add_calibrate(app, action);
  parsim::cli::add_validate(app, action);
  parsim::cli::add_compare(app, action);

  // `predict` is the default subcommand: insert it when the first argument is an option that is not global.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  static const std::set<std::string> subcommands{"predict", "sweep",    "merge",  "profile",
                                                 "calibrate", "validate", "compare"};
  static const std::set<std::string> global{"--help", "-h", "--version"};
  // A first word that is neither a command nor an option is a mistyped command (`parsim predcit …`).
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !subcommands.count(args[0]))
    return fail("unknown command " + shown_arg(args[0]) +
                did_you_mean(args[0], std::vector<std::string>(subcommands.begin(), subcommands.end())) +
                "; commands: predict (the default), sweep, merge, profile, calibrate, validate, compare");
  if (!args.empty() && !subcommands.count(args[0]) && !global.count(args[0])) args.insert(args.begin(), "predict");
  // `predict` with several plans (--plan repeated, or a comma list) is `compare`.
  if (!args.empty() && args[0] == "predict") {
    int plans = 0;
    for (std::size_t i = 1; i < args.size(); ++i) {
      std::string v;
      if (args[i] == "--plan" && i + 1 < args.size()) v = args[i + 1];
      else if (args[i].rfind("--plan=", 0) == 0) v = args[i].substr(7);
      else continue;
      plans += 1 + static_cast<int>(std::count(v.begin(), v.end(), ','));
    }
    if (plans > 1) args[0] = "compare";
  }
  if (args.empty()) {
    std::cout << app.help();
    return 0;
  }

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(parse_error_message(e));
  } catch (const parsim::InputError& e) {
    return fail(one_line(e.what()));
  }
  for (const CLI::App* cmd : app.get_subcommands()) {
    const std::vector<std::string> extras = cmd->remaining();
    if (!extras.empty()) return fail(extras_message(*cmd, extras));
  }
  if (!action) {
    std::cout << app.help();
    return 0;
  }
  try {
    return finish_output(action());
  } catch (const parsim::InputError& e) {
    return fail(one_line(e.what()));
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    std::cerr << "parsim: internal error: " << one_line(e.what()) << "\n";
    return 3;
  }
}
