// Runs a fuzz target over every file in the directories (or files) given on the command
// line, so the corpus and every crash ever found are replayed in each build, with any
// compiler. Exits non-zero if a path cannot be read; a crash fails the test by itself.
//
// With `--mutate N --seed S` it then fuzzes without libFuzzer: N inputs made from the corpus
// by byte mutations (flip, replace, insert, delete, duplicate, splice, dictionary tokens,
// long runs of one byte, numbers at their limits, whole JSON values), drawn from std::mt19937_64
// seeded with S alone, so a seed always makes the same inputs (their digest is printed). Options:
//   --skip K        make and drop the first K inputs (`--mutate 1 --seed S --skip K` is input K)
//   --timeout-ms T  an input running longer is a hang: reported, then abort (default 10000)
//   --save FILE     write each input to FILE before running it (to keep a reproduced input)
// A crash, a hang, an abort or a sanitizer report prints the input's index and the command
// that makes it again, and writes the input to $PERFLOW_FUZZ_CRASH_FILE when that is set.
// The last line sums up: inputs run, how many ended in a perflow::Error (targets that count
// them define perflow_fuzz_errors()) and how many succeeded, and the slowest input.
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Inputs that ended in a perflow::Error, from targets that count them.
extern "C" std::uint64_t perflow_fuzz_errors() __attribute__((weak));
// Called by ASan before it ends the process with its report.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));
// UBSan (a runtime of its own with g++) ends the process with abort(), which is reported
// like any abort, and prints the stack of what it found.
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

namespace {

// ---- What the signal handlers report (async-signal-safe: write(), open(), no allocation).

struct Current {
  const char* data = nullptr;  // the input being run
  std::size_t size = 0;
  const char* path = nullptr;  // corpus mode: its file
  std::uint64_t index = 0;     // mutation mode: its index from the seed's first input
  bool mutated = false;
  std::string repro;  // the command making input `index` again, without the index
  const char* crash_file = nullptr;
  long timeout_ms = 10'000;
};
Current current;
volatile std::sig_atomic_t reported = 0;

void put(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

void put_number(std::uint64_t n) {
  char digits[24];
  char* end = digits + sizeof(digits);
  char* at = end;
  do {
    *--at = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  (void)!::write(STDERR_FILENO, at, static_cast<std::size_t>(end - at));
}

void report(const char* what) {
  if (reported) return;
  reported = 1;
  put("\nfuzz: ");
  put(what);
  if (current.mutated) {
    put(" on input ");
    put_number(current.index);
    put("\nfuzz: make it again with: ");
    put(current.repro.c_str());
    put_number(current.index);
    put(" --save input.bin\n");
  } else if (current.path != nullptr) {
    put(" on ");
    put(current.path);
    put("\n");
  } else {
    put("\n");
  }
  if (current.crash_file != nullptr && current.data != nullptr) {
    const int fd = ::open(current.crash_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, current.data, current.size);
      ::close(fd);
      put("fuzz: the input is in ");
      put(current.crash_file);
      put("\n");
    }
  }
}

void on_alarm(int) {
  report("hang: an input ran longer than --timeout-ms");
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

void on_fatal_signal(int signal) {
  report(signal == SIGABRT ? "abort" : "fatal signal");
  // SA_RESETHAND restored the default action: raised again, it ends the process (and dumps
  // core) when this handler returns.
  std::raise(signal);
}

void on_sanitizer_death() { report("sanitizer report"); }

void install_handlers() {
  struct sigaction action = {};
  action.sa_handler = on_alarm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, nullptr);
  if (__sanitizer_set_death_callback != nullptr) {
    __sanitizer_set_death_callback(on_sanitizer_death);
  }
  // ASan handles SIGSEGV, SIGBUS and SIGFPE itself (and calls the death callback); without it
  // they are ours, on a stack of their own so that a stack overflow is reported too.
  std::vector<int> signals = {SIGABRT};
#ifndef __SANITIZE_ADDRESS__
  static std::array<char, 1 << 16> alternate_stack;
  stack_t stack = {};
  stack.ss_sp = alternate_stack.data();
  stack.ss_size = alternate_stack.size();
  sigaltstack(&stack, nullptr);
  signals.insert(signals.end(), {SIGSEGV, SIGBUS, SIGFPE, SIGILL});
#endif
  for (const int signal : signals) {
    action = {};
    action.sa_handler = on_fatal_signal;
    action.sa_flags = static_cast<int>(SA_RESETHAND | SA_ONSTACK);
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
  }
}

void arm_timer(long ms) {
  itimerval timer = {};
  timer.it_value.tv_sec = ms / 1000;
  timer.it_value.tv_usec = (ms % 1000) * 1000;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

// ---- Running one input.

struct Totals {
  std::uint64_t inputs = 0;
  double slowest_ms = 0;
  std::string slowest;
};

void run_one(const std::string& bytes, Totals& totals, const std::string& name) {
  current.data = bytes.data();
  current.size = bytes.size();
  const auto start = std::chrono::steady_clock::now();
  arm_timer(current.timeout_ms);
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  arm_timer(0);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ++totals.inputs;
  if (ms > totals.slowest_ms) {
    totals.slowest_ms = ms;
    totals.slowest = name;
  }
}

// ---- Mutations.

// Tokens of the formats the targets read (JSON, CSV, JSON pointers) and values at limits.
// clang-format off
constexpr std::string_view kTokens[] = {
    "{", "}", "[", "]", "\"", ",", ":", "-1", "1e309", "18446744073709551616", "null", "true",
    "false", "\\u0000", "\xff", "~1", "~0", "/", "-", "0", "-0", "\"\"", "\n", "\r\n", "{}", "[]",
    "=", "/-", "/0", "\\ud800", "NaN", "1e-400", "9223372036854775808", "4294967296", "0.5",
    "\"a\":", "\\\"", "\t", " "};
constexpr std::string_view kNumbers[] = {
    "-1", "0", "-0", "1", "2", "3", "8", "1e309", "18446744073709551616", "9223372036854775807",
    "9223372036854775808", "4294967295", "4294967296", "1e-400", "0.5", "1e18", "65536", "1.0"};
// Whole JSON values, to put where a value was and keep the text JSON.
constexpr std::string_view kValues[] = {
    "null", "true", "false", "0", "-1", "1", "2", "1e309", "18446744073709551616", "0.5", "\"\"",
    "\"zbv\"", "\"1f1b\"", "\"1ms\"", "\"2GB\"", "{}", "[]", "[0]", "\"\\u0000\"", "\"\xff\"",
    "\"~1\"", "\"/\"", "\"-\"", "\"h100-sxm\"", "{\"a\": 1}", "[1, 2, 3]"};
// clang-format on
constexpr char kRunBytes[] = {'a', '[', '{', '"', '9', ' ', '\n', ',', '\0', '\xff', '\\', '/'};
constexpr std::size_t kMaxInput = std::size_t{1} << 17;

class Mutator {
 public:
  Mutator(const std::vector<std::string>& corpus, std::uint64_t seed)
      : corpus_(corpus), rng_(seed) {}

  std::string next() {
    std::string data = corpus_[below(corpus_.size())];
    // Half of the inputs differ from a corpus input by one mutation: most stay readable.
    const std::uint64_t count = below(2) == 0 ? 1 : 2 + below(4);
    for (std::uint64_t i = 0; i < count; ++i) mutate(data);
    if (data.size() > kMaxInput) data.resize(kMaxInput);
    return data;
  }

 private:
  // Uniform enough below `n` (n >= 1); `%` keeps the inputs the same with every library.
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  std::size_t position(const std::string& data) { return below(data.size() + 1); }

  void mutate(std::string& data) {
    const std::uint64_t op = below(11);
    if (data.empty() && op != 2 && op != 6 && op != 7) {
      data.insert(0, kTokens[below(std::size(kTokens))]);
      return;
    }
    switch (op) {
      case 0: {  // flip a bit
        data[below(data.size())] ^= static_cast<char>(1u << below(8));
        break;
      }
      case 1: {  // replace a byte
        data[below(data.size())] = static_cast<char>(rng_());
        break;
      }
      case 2: {  // insert a run of random bytes
        const std::size_t at = position(data);
        std::string run(1 + below(8), '\0');
        for (char& c : run) c = static_cast<char>(rng_());
        data.insert(at, run);
        break;
      }
      case 3: {  // delete a run
        const std::size_t at = below(data.size());
        data.erase(at, 1 + below(std::min<std::size_t>(64, data.size() - at)));
        break;
      }
      case 4: {  // duplicate a span
        const std::size_t from = below(data.size());
        const std::size_t length = 1 + below(std::min<std::size_t>(256, data.size() - from));
        const std::string span = data.substr(from, length);
        data.insert(position(data), span);
        break;
      }
      case 5: {  // splice: this input's head, another's tail
        const std::string& other = corpus_[below(corpus_.size())];
        data = data.substr(0, position(data)) + other.substr(below(other.size() + 1));
        break;
      }
      case 6: {  // insert a token, or replace a few bytes with it
        const std::string_view token = kTokens[below(std::size(kTokens))];
        const std::size_t at = position(data);
        data.replace(at, below(2) == 0 ? 0 : below(8), token);
        break;
      }
      case 7: {  // insert a long run of one byte
        const char byte = kRunBytes[below(std::size(kRunBytes))];
        data.insert(position(data), std::size_t{16} << below(11), byte);
        break;
      }
      case 8: {  // replace the next number with one at a limit
        std::size_t at = below(data.size());
        while (at < data.size() && (data[at] < '0' || data[at] > '9')) ++at;
        std::size_t end = at;
        while (end < data.size() && ((data[end] >= '0' && data[end] <= '9') || data[end] == '.' ||
                                     data[end] == 'e' || data[end] == '-' || data[end] == '+')) {
          ++end;
        }
        data.replace(at, end - at, kNumbers[below(std::size(kNumbers))]);
        break;
      }
      case 9: {  // replace the value after the next ':', ',' or '[' with another
        std::size_t at = below(data.size());
        while (at < data.size() && data[at] != ':' && data[at] != ',' && data[at] != '[') ++at;
        if (at == data.size()) break;
        ++at;
        while (at < data.size() && data[at] == ' ') ++at;
        std::size_t end = at;
        if (end < data.size() && data[end] == '"') {
          end = data.find('"', end + 1);
          end = end == std::string::npos ? data.size() : end + 1;
        } else {
          while (end < data.size() &&
                 std::string_view(",}]\n").find(data[end]) == std::string_view::npos) {
            ++end;
          }
        }
        data.replace(at, end - at, kValues[below(std::size(kValues))]);
        break;
      }
      default: {  // copy a span over another place
        const std::size_t from = below(data.size());
        const std::size_t to = below(data.size());
        const std::size_t length =
            1 + below(std::min<std::size_t>({64, data.size() - from, data.size() - to}));
        const std::string span = data.substr(from, length);
        data.replace(to, length, span);
        break;
      }
    }
  }

  const std::vector<std::string>& corpus_;
  std::mt19937_64 rng_;
};

// FNV-1a over the inputs made, so two runs can be compared.
void digest(std::uint64_t& hash, std::string_view bytes) {
  for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  hash = (hash ^ bytes.size()) * 0x100000001b3ULL;
}

std::string shell_quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::optional<std::uint64_t> number(const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return std::nullopt;
  return value;
}

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s PATH... [--mutate N --seed S [--skip K] [--timeout-ms T] "
               "[--save FILE]]\n",
               program);
  return 2;
}

void print_summary(const char* what, const Totals& totals, std::optional<std::uint64_t> errors) {
  std::printf("%s %llu inputs: ", what, static_cast<unsigned long long>(totals.inputs));
  if (errors) {
    std::printf("%llu ended in a perflow::Error, %llu succeeded",
                static_cast<unsigned long long>(*errors),
                static_cast<unsigned long long>(totals.inputs - *errors));
  } else {
    std::printf("none crashed (this target does not count its errors)");
  }
  std::printf("; slowest %.0f ms (%s)\n", totals.slowest_ms, totals.slowest.c_str());
}

std::optional<std::uint64_t> errors_so_far() {
  if (perflow_fuzz_errors == nullptr) return std::nullopt;
  return perflow_fuzz_errors();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> paths;
  std::optional<std::uint64_t> mutate, seed;
  std::uint64_t skip = 0;
  const char* save = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--")) {
      paths.emplace_back(argv[i]);
      continue;
    }
    if (i + 1 >= argc) return usage(argv[0]);
    const char* value = argv[++i];
    const std::optional<std::uint64_t> n = number(value);
    if (arg == "--save") {
      save = value;
    } else if (!n) {
      return usage(argv[0]);
    } else if (arg == "--mutate" && *n > 0) {
      mutate = n;
    } else if (arg == "--seed") {
      seed = n;
    } else if (arg == "--skip") {
      skip = *n;
    } else if (arg == "--timeout-ms" && *n > 0 && *n < 86'400'000) {
      current.timeout_ms = static_cast<long>(*n);
    } else {
      return usage(argv[0]);
    }
  }
  if (mutate.has_value() != seed.has_value()) return usage(argv[0]);

  std::vector<std::filesystem::path> inputs;
  for (const auto& path : paths) {
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.push_back(path);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  current.crash_file = std::getenv("PERFLOW_FUZZ_CRASH_FILE");
  install_handlers();

  // The corpus, replayed as is.
  std::vector<std::string> corpus;
  Totals totals;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    current.path = path.c_str();
    run_one(corpus.back(), totals, path.filename().string());
  }
  current.path = nullptr;
  print_summary("replayed", totals, errors_so_far());
  if (corpus.empty()) return 2;
  if (!mutate) return 0;

  // Inputs made from the corpus.
  current.repro = shell_quoted(argv[0]);
  for (const auto& path : paths) current.repro += " " + shell_quoted(path.string());
  current.repro += " --mutate 1 --seed " + std::to_string(*seed) + " --timeout-ms " +
                   std::to_string(current.timeout_ms) + " --skip ";
  const std::optional<std::uint64_t> errors_before = errors_so_far();
  Mutator mutator(corpus, *seed);
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::uint64_t k = 0; k < skip; ++k) (void)mutator.next();
  Totals mutated;
  const auto start = std::chrono::steady_clock::now();
  current.mutated = true;
  for (std::uint64_t k = 0; k < *mutate; ++k) {
    const std::string bytes = mutator.next();
    digest(hash, bytes);
    current.index = skip + k;
    if (save != nullptr) {
      std::ofstream(save, std::ios::binary | std::ios::trunc)
          .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    run_one(bytes, mutated, "input " + std::to_string(skip + k));
  }
  current.mutated = false;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz: seed %llu, inputs %llu to %llu, digest %016llx, %.1f s\n",
              static_cast<unsigned long long>(*seed), static_cast<unsigned long long>(skip),
              static_cast<unsigned long long>(skip + *mutate - 1),
              static_cast<unsigned long long>(hash), seconds);
  std::optional<std::uint64_t> errors = errors_so_far();
  if (errors) *errors -= *errors_before;
  print_summary("mutated", mutated, errors);
  return 0;
}
