// PyTorch profiler / Kineto Chrome-trace JSON (FORMATS.md section 1), streamed: the
// top-level object is scanned by JsonStream and each element of "traceEvents" is parsed on
// its own with simdjson on-demand, so memory does not grow with the file.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "detail/byte_source.hpp"
#include "detail/comm_kernel.hpp"
#include "detail/excerpt.hpp"
#include "detail/json_stream.hpp"
#include "detail/kineto.hpp"
#include "detail/readers.hpp"
#include "detail/trace_finish.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

namespace od = simdjson::ondemand;

// ---------------------------------------------------------------------------------------
// Small text helpers

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' ||
                           text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// Found text in messages: printable and short.
std::string shorten(std::string_view text) { return excerpt(text, 40); }

bool parse_int64(std::string_view text, std::int64_t& out) {
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

// Ids written as strings ("Spans", "stream 7") get a stable FNV-1a hash, so events of one
// string id stay together without a crash or a lookup table.
std::uint64_t hash_id(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

// Names are interned once; a transparent hash lets lookups by string_view skip the
// allocation NameTable::intern would make per event.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept {
    return std::hash<std::string_view>{}(text);
  }
};

class Interner {
 public:
  std::uint32_t intern(std::string_view name) {
    if (const auto it = index_.find(name); it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(order_.size());
    order_.push_back(&index_.emplace(std::string(name), id).first->first);
    return id;
  }
  // Same ids, in the same order, in the trace's NameTable.
  void move_into(NameTable& names) const {
    for (const std::string* name : order_) names.intern(*name);
  }

 private:
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> index_;
  std::vector<const std::string*> order_;  // node-based map: the keys do not move
};

// Megatron-LM names per-rank files rank-<R>.json.gz: the fallback when distributedInfo
// does not give the rank.
std::int64_t rank_from_file_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  for (std::size_t at = name.find("rank-"); at != std::string::npos;
       at = name.find("rank-", at + 1)) {
    std::int64_t rank = -1;
    const char* const first = name.data() + at + 5;
    const auto [ptr, ec] = std::from_chars(first, name.data() + name.size(), rank);
    if (ec == std::errc() && ptr != first && rank >= 0) return rank;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------
// Events

enum class Category : std::uint8_t {
  Unknown,
  Other,
  Kernel,
  Memcpy,
  Memset,
  Launch,
  Annotation,
  Python,
  Memory  // cpu_instant_event: the profiler's `[memory]` events among others
};

Category category_of(std::string_view cat) {
  if (cat == "kernel") return Category::Kernel;
  if (cat == "gpu_memcpy") return Category::Memcpy;
  if (cat == "gpu_memset") return Category::Memset;
  if (cat == "cuda_runtime" || cat == "cuda_driver") return Category::Launch;
  if (cat == "user_annotation") return Category::Annotation;
  if (cat == "python_function") return Category::Python;
  if (cat == "cpu_instant_event") return Category::Memory;
  // gpu_user_annotation only covers launches from the annotating thread (FORMATS.md 1.6);
  // cpu_op, flows and bookkeeping are not needed.
  return Category::Other;
}

// Bytes per element of a PyTorch dtype as the profiler names it ("Float", "BFloat16", ...);
// 0 for a name not listed.
std::int64_t dtype_size(std::string_view dtype) {
  static constexpr std::pair<std::string_view, std::int64_t> kSizes[] = {
      {"Float", 4},
      {"Double", 8},
      {"Half", 2},
      {"BFloat16", 2},
      {"Int", 4},
      {"Long", 8},
      {"Short", 2},
      {"Char", 1},
      {"Byte", 1},
      {"Bool", 1},
      {"ComplexHalf", 4},
      {"ComplexFloat", 8},
      {"ComplexDouble", 16},
      {"Float8_e4m3fn", 1},
      {"Float8_e5m2", 1},
      {"Float8_e4m3fnuz", 1},
      {"Float8_e5m2fnuz", 1},
      {"UInt16", 2},
      {"UInt32", 4},
      {"UInt64", 8},
  };
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  return 0;
}

bool is_gpu(Category category) {
  return category == Category::Kernel || category == Category::Memcpy ||
         category == Category::Memset;
}

// A number kept as its JSON token until the event is known to matter.
struct Token {
  std::string_view text;
  od::json_type type = od::json_type::null;
  const char* at = nullptr;
  bool present = false;
};

struct Event {
  Category category = Category::Unknown;
  bool complete = true;  // ph is "X" (or not seen yet)
  bool has_ph = false;
  std::string_view name;
  const char* name_at = nullptr;
  bool has_name = false;
  std::optional<std::uint64_t> pid;
  std::optional<std::uint64_t> tid;
  Token ts;
  Token dur;
  std::optional<std::int64_t> device;
  std::optional<std::int64_t> stream;
  std::optional<std::int64_t> correlation;
  std::optional<std::int64_t> bytes;
  const char* device_at = nullptr;
  // NCCL kernels (record_param_comms args copied onto the kernel).
  std::optional<std::int64_t> elements;  // "In msg nelems"
  std::string_view dtype;                // "dtype", e.g. "Float", "BFloat16"
  std::optional<std::int64_t> group_size;
  // [memory] events.
  std::optional<std::int64_t> memory_bytes;  // "Bytes"
  std::optional<std::int64_t> device_type;   // "Device Type": 0 is the CPU
  bool instant = false;                      // ph is "i" or "I"
};

struct Pending {  // an error seen before the event's category was known
  const char* at = nullptr;
  std::string message;
};

class KinetoParser {
 public:
  KinetoParser(ByteSource& source, std::size_t chunk_bytes)
      : source_(source), stream_(source, chunk_bytes) {}

  KernelTrace run();

 private:
  // Top level
  void scan_trace_events();
  void parse_metadata();
  void parse_distributed_info(std::string_view text);
  void parse_device_properties(std::string_view text);
  void parse_base_time(std::string_view text);
  [[noreturn]] void fail_at(std::uint64_t offset, const std::string& message) const;
  [[noreturn]] void fail_top(std::string_view pointer, const std::string& message) const;

  // One event
  void parse_event(std::string_view text, std::uint64_t offset, std::int64_t index);
  void read_fields(od::object& object, Event& event);
  void read_args(od::value& value, Event& event);
  void note(Event& event, const char* at, std::string message);
  std::optional<std::uint64_t> read_id(od::value& value);
  std::optional<std::int64_t> read_integer(od::value& value, Event& event, std::string_view key);
  TimeNs time_of(const Token& token, std::string_view key);
  std::uint64_t at_offset(const char* at) const;
  [[noreturn]] void fail_event(const char* at, const std::string& message) const;
  std::string describe(od::value& value);

  void read_memory_event(const Event& event);
  void finish(KernelTrace& trace);

  ByteSource& source_;
  JsonStream stream_;
  od::parser parser_;
  Interner names_;
  std::vector<GpuOp> ops_;
  std::vector<Launch> launches_;
  std::vector<Range> ranges_;
  std::vector<MemoryEvent> memory_;
  bool saw_trace_events_ = false;
  std::vector<std::string> top_keys_;
  std::string distributed_info_;
  std::string device_properties_;
  std::string base_time_;
  std::optional<Pending> pending_;
  std::int64_t rank_ = -1;
  std::int64_t world_size_ = -1;
  std::string device_name_;

  // The event being parsed, for error locations.
  std::vector<char> event_buffer_;
  std::string_view event_text_;
  std::uint64_t event_offset_ = 0;
  std::int64_t event_index_ = 0;
};

void KinetoParser::fail_at(std::uint64_t offset, const std::string& message) const {
  throw ProfileError(source_.name(), fmt::format("byte {}", offset), message);
}

void KinetoParser::fail_top(std::string_view pointer, const std::string& message) const {
  throw ProfileError(source_.name(), std::string(pointer), message);
}

std::uint64_t KinetoParser::at_offset(const char* at) const {
  if (at == nullptr || at < event_text_.data() || at > event_text_.data() + event_text_.size()) {
    return event_offset_;
  }
  return event_offset_ + static_cast<std::uint64_t>(at - event_text_.data());
}

void KinetoParser::fail_event(const char* at, const std::string& message) const {
  fail_at(at_offset(at), fmt::format("/traceEvents/{}{}", event_index_, message));
}

std::string KinetoParser::describe(od::value& value) {
  od::json_type type{};
  if (value.type().get(type) != simdjson::SUCCESS) return "malformed JSON";
  const std::string token = shorten(trim_right(value.raw_json_token()));
  switch (type) {
    case od::json_type::object:
      return "an object";
    case od::json_type::array:
      return "an array";
    case od::json_type::string:
      return "the string " + token;
    case od::json_type::number:
      return "the number " + token;
    case od::json_type::boolean:
    case od::json_type::null:
      return token;
  }
  return token;
}

const char* location_of(od::value& value) {
  const char* at = nullptr;
  return value.current_location().get(at) == simdjson::SUCCESS ? at : nullptr;
}

// An error in a field of an event that may turn out not to matter (its category is not
// known yet) is kept until the category is; otherwise it is thrown at once.
void KinetoParser::note(Event& event, const char* at, std::string message) {
  if (event.category == Category::Unknown) {
    if (!pending_) pending_ = Pending{at, std::move(message)};
    return;
  }
  fail_event(at, message);
}

std::optional<std::uint64_t> KinetoParser::read_id(od::value& value) {
  od::json_type type{};
  if (value.type().get(type) != simdjson::SUCCESS) return std::nullopt;
  if (type == od::json_type::number) {
    const std::string_view token = trim_right(value.raw_json_token());
    std::int64_t number = 0;
    // Negative tids occur (Kineto prints some OS thread ids as int32); keep their bits.
    if (parse_int64(token, number)) return static_cast<std::uint64_t>(number);
    std::uint64_t unsigned_number = 0;
    const auto [ptr, ec] =
        std::from_chars(token.data(), token.data() + token.size(), unsigned_number);
    if (ec == std::errc() && ptr == token.data() + token.size()) return unsigned_number;
    return hash_id(token);
  }
  if (type == od::json_type::string) {
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
    std::int64_t number = 0;
    if (parse_int64(text, number)) return static_cast<std::uint64_t>(number);
    return hash_id(text);
  }
  return std::nullopt;
}

// Integers in args; ROCm builds quote some of them ("0x0", "18816"), so decimal and 0x-hex
// strings are read too.
std::optional<std::int64_t> KinetoParser::read_integer(od::value& value, Event& event,
                                                       std::string_view key) {
  const char* const at = location_of(value);
  od::json_type type{};
  std::int64_t number = 0;
  std::string_view text;
  if (value.type().get(type) == simdjson::SUCCESS) {
    if (type == od::json_type::number && parse_int64(trim_right(value.raw_json_token()), number)) {
      return number;
    }
    if (type == od::json_type::string && value.get_string().get(text) == simdjson::SUCCESS) {
      if (parse_int64(text, number)) return number;
      if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        std::uint64_t hex = 0;
        const char* const end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data() + 2, end, hex, 16);
        if (ec == std::errc() && ptr == end) return static_cast<std::int64_t>(hex);
      }
      note(event, at,
           fmt::format("/args/{}: expected an integer, found the string \"{}\"", key,
                       shorten(text)));
      return std::nullopt;
    }
  }
  note(event, at, fmt::format("/args/{}: expected an integer, found {}", key, describe(value)));
  return std::nullopt;
}

void KinetoParser::read_args(od::value& value, Event& event) {
  const char* const at = location_of(value);
  od::object args;
  if (value.get_object().get(args) != simdjson::SUCCESS) {
    note(event, at, fmt::format("/args: expected an object, found {}", describe(value)));
    return;
  }
  for (auto field_result : args) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) {
      note(event, at, "/args: expected a valid JSON object, found malformed JSON");
      return;
    }
    const od::raw_json_string key = field.key();
    od::value& child = field.value();
    if (key == "correlation") {
      event.correlation = read_integer(child, event, "correlation");
    } else if (event.category == Category::Launch) {
      // A launch needs only its correlation id; runtime calls put other things here.
    } else if (key == "device") {
      event.device_at = location_of(child);
      event.device = read_integer(child, event, "device");
    } else if (key == "stream") {
      event.stream = read_integer(child, event, "stream");
    } else if (key == "bytes") {
      event.bytes = read_integer(child, event, "bytes");
    } else if (event.category == Category::Memory) {
      if (key == "Bytes") {
        event.memory_bytes = read_integer(child, event, "Bytes");
      } else if (key == "Device Type") {
        event.device_type = read_integer(child, event, "Device Type");
      } else if (key == "Device Id") {
        event.device = read_integer(child, event, "Device Id");
      }
    } else if (key == "In msg nelems") {
      event.elements = read_integer(child, event, "In msg nelems");
    } else if (key == "Group size") {
      event.group_size = read_integer(child, event, "Group size");
    } else if (key == "dtype") {
      if (child.get_string().get(event.dtype) != simdjson::SUCCESS) event.dtype = {};
    }
  }
}

Token token_of(od::value& value) {
  Token token;
  token.present = true;
  token.at = location_of(value);
  if (value.type().get(token.type) != simdjson::SUCCESS) token.type = od::json_type::null;
  token.text = trim_right(value.raw_json_token());
  return token;
}

// Visits the fields once, in file order, and stops as soon as the event cannot matter
// (Kineto writes "ph" and "cat" first, so cpu_ops and flows cost two fields each).
void KinetoParser::read_fields(od::object& object, Event& event) {
  for (auto field_result : object) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) {
      note(event, nullptr, ": expected a valid JSON object, found malformed JSON");
      return;
    }
    const od::raw_json_string key = field.key();
    od::value& value = field.value();
    if (key == "ph") {
      std::string_view ph;
      event.has_ph = true;
      event.complete = value.get_string().get(ph) == simdjson::SUCCESS && ph == "X";
      event.instant = ph == "i" || ph == "I";
    } else if (key == "cat") {
      std::string_view cat;
      event.category =
          value.get_string().get(cat) == simdjson::SUCCESS ? category_of(cat) : Category::Other;
    } else if (key == "name") {
      event.name_at = location_of(value);
      if (value.get_string().get(event.name) == simdjson::SUCCESS) {
        event.has_name = true;
      } else {
        note(event, event.name_at,
             fmt::format("/name: expected a string, found {}", describe(value)));
      }
    } else if (key == "pid") {
      event.pid = read_id(value);
    } else if (key == "tid") {
      event.tid = read_id(value);
    } else if (key == "ts") {
      event.ts = token_of(value);
    } else if (key == "dur") {
      event.dur = token_of(value);
    } else if (key == "args") {
      if (event.category == Category::Unknown || is_gpu(event.category) ||
          event.category == Category::Launch || event.category == Category::Memory) {
        read_args(value, event);
      }
    }
    if (event.category == Category::Other) return;
    // Only [memory] instants matter besides complete events; the category may come later.
    if (!event.complete && !(event.instant && (event.category == Category::Unknown ||
                                               event.category == Category::Memory))) {
      return;
    }
  }
}

TimeNs KinetoParser::time_of(const Token& token, std::string_view key) {
  if (!token.present) {
    fail_event(nullptr, fmt::format(": expected a \"{}\" member (microseconds), found none", key));
  }
  std::string_view text = token.text;
  // Numbers written as JSON strings are read too; some exporters quote them.
  const bool quoted = token.type == od::json_type::string;
  if (quoted) text = text.substr(1, text.size() >= 2 ? text.size() - 2 : 0);
  TimeNs ns = 0;
  const DecimalStatus status = token.type == od::json_type::number || quoted
                                   ? microseconds_to_ns(text, ns)
                                   : DecimalStatus::NotANumber;
  if (status == DecimalStatus::Ok) return ns;
  const std::string found =
      token.type == od::json_type::string   ? "the string " + shorten(token.text)
      : token.type == od::json_type::number ? "the number " + shorten(token.text)
      : token.type == od::json_type::object ? std::string("an object")
      : token.type == od::json_type::array  ? std::string("an array")
                                            : shorten(token.text);
  fail_event(token.at, fmt::format("/{}: expected {}, found {}", key,
                                   status == DecimalStatus::OutOfRange
                                       ? "a time in microseconds within the int64 nanosecond range"
                                       : "a number (microseconds)",
                                   found));
}

void KinetoParser::parse_event(std::string_view text, std::uint64_t offset, std::int64_t index) {
  // A padded copy: simdjson reads the padding, and on malformed input what it finds there
  // can change the outcome, so it must be the same blanks wherever the chunks ended.
  event_buffer_.assign(text.begin(), text.end());
  event_buffer_.resize(text.size() + simdjson::SIMDJSON_PADDING, ' ');
  event_text_ = std::string_view(event_buffer_.data(), text.size());
  event_offset_ = offset;
  event_index_ = index;
  pending_.reset();
  od::document document;
  od::object object;
  Event event;
  const auto error =
      parser_.iterate(event_buffer_.data(), text.size(), event_buffer_.size()).get(document);
  if (error != simdjson::SUCCESS || document.get_object().get(object) != simdjson::SUCCESS) {
    fail_event(nullptr, fmt::format(": expected a valid JSON object, found malformed JSON ({})",
                                    simdjson::error_message(error)));
  }
  read_fields(object, event);
  if (event.category == Category::Memory) {
    read_memory_event(event);
    return;
  }
  if (event.category == Category::Unknown || event.category == Category::Other || !event.complete ||
      !event.has_ph) {
    return;
  }
  if (pending_) fail_event(pending_->at, pending_->message);
  if (!event.has_name) fail_event(nullptr, ": expected a \"name\" member, found none");
  const TimeNs start = time_of(event.ts, "ts");
  TimeNs dur = time_of(event.dur, "dur");
  // A negative duration is a profiler glitch in one event; an empty interval keeps the
  // rest of a multi-GB trace usable.
  dur = std::max<TimeNs>(dur, 0);
  TimeNs end = 0;
  if (__builtin_add_overflow(start, dur, &end)) {
    fail_event(event.dur.at,
               "/dur: expected ts + dur within the int64 nanosecond range, found "
               "an overflow");
  }
  switch (event.category) {
    case Category::Kernel:
    case Category::Memcpy:
    case Category::Memset: {
      GpuOp op;
      op.kind = event.category == Category::Memcpy   ? GpuOpKind::Memcpy
                : event.category == Category::Memset ? GpuOpKind::Memset
                                                     : classify_kernel(event.name);
      if (event.device) {
        if (*event.device < 0 || *event.device > std::numeric_limits<std::uint32_t>::max()) {
          fail_event(event.device_at,
                     fmt::format("/args/device: expected a device index, found {}", *event.device));
        }
        op.device = static_cast<std::uint32_t>(*event.device);
      } else if (event.pid) {
        // Without args.device the GPU's pid is its local index (FORMATS.md 1.2).
        op.device = static_cast<std::uint32_t>(*event.pid);
      } else {
        fail_event(nullptr, ": expected args.device or a pid for a GPU event, found neither");
      }
      if (event.stream) {
        op.stream = static_cast<std::uint64_t>(*event.stream);
      } else if (event.tid) {
        op.stream = *event.tid;
      } else {
        fail_event(nullptr, ": expected args.stream or a tid for a GPU event, found neither");
      }
      op.start = start;
      op.end = end;
      op.name = names_.intern(event.name);
      if (event.correlation) op.correlation = static_cast<std::uint64_t>(*event.correlation);
      if (event.bytes && *event.bytes >= 0) op.bytes = *event.bytes;
      if (op.kind == GpuOpKind::Collective || op.kind == GpuOpKind::P2P) {
        const std::int64_t size = dtype_size(event.dtype);
        if (event.elements && *event.elements >= 0 && size > 0 &&
            *event.elements <= std::numeric_limits<std::int64_t>::max() / size) {
          op.bytes = *event.elements * size;
        }
        if (event.group_size && *event.group_size > 0 &&
            *event.group_size <= std::numeric_limits<std::uint32_t>::max()) {
          op.group_size = static_cast<std::uint32_t>(*event.group_size);
        }
      }
      ops_.push_back(op);
      break;
    }
    case Category::Launch: {
      // Runtime calls without a correlation id launch nothing that can be linked.
      if (!event.correlation) return;
      if (!event.tid) fail_event(nullptr, ": expected a \"tid\" member, found none");
      launches_.push_back(
          Launch{*event.tid, start, end, static_cast<std::uint64_t>(*event.correlation)});
      break;
    }
    case Category::Annotation:
    case Category::Python: {
      if (!event.tid) fail_event(nullptr, ": expected a \"tid\" member, found none");
      Range range;
      range.source =
          event.category == Category::Python ? RangeSource::Python : RangeSource::Annotation;
      range.name = names_.intern(event.name);
      range.thread = *event.tid;
      range.start = start;
      range.end = end;
      ranges_.push_back(range);
      break;
    }
    case Category::Unknown:
    case Category::Other:
    case Category::Memory:
      break;
  }
}

// ---------------------------------------------------------------------------------------
// The top level

void KinetoParser::scan_trace_events() {
  if (stream_.peek() != '[') {
    fail_at(stream_.offset(), "/traceEvents: expected an array ('['), found " + stream_.found());
  }
  stream_.advance();
  saw_trace_events_ = true;
  std::int64_t index = 0;
  if (stream_.peek() == ']') {
    stream_.advance();
    return;
  }
  for (;; ++index) {
    const int c = stream_.peek();
    if (c != '{') {
      fail_at(stream_.offset(),
              fmt::format("/traceEvents/{}: expected an event object ('{{'), found {}", index,
                          stream_.found()));
    }
    const JsonStream::Value value = stream_.value(true, "/traceEvents", index);
    parse_event(value.text, value.offset, index);
    const int next = stream_.peek();
    if (next == ',') {
      stream_.advance();
      continue;
    }
    if (next == ']') {
      stream_.advance();
      return;
    }
    fail_at(stream_.offset(),
            fmt::format("/traceEvents: expected ',' or ']' after event {}, found {}{}", index,
                        stream_.found(), next == JsonStream::kEnd ? " (is it truncated?)" : ""));
  }
}

KernelTrace KinetoParser::run() {
  KernelTrace trace;
  trace.path = source_.name();
  trace.format = "kineto";
  int c = stream_.peek();
  // A UTF-8 byte order mark is not JSON, but editors write it.
  if (c == 0xEF) {
    stream_.advance();
    if (stream_.peek() == 0xBB) stream_.advance();
    if (stream_.peek() == 0xBF) stream_.advance();
    c = stream_.peek();
  }
  if (c != '{') {
    fail_at(stream_.offset(), "expected a JSON object ('{'), found " + stream_.found());
  }
  stream_.advance();
  bool first = true;
  for (;;) {
    c = stream_.peek();
    if (first && c == '}') {
      stream_.advance();
      break;
    }
    if (c != '"') {
      fail_at(stream_.offset(),
              "expected a member name of the top-level object, found " + stream_.found());
    }
    const JsonStream::Value key_value = stream_.value(true, "");
    const std::string key(key_value.text.substr(1, key_value.text.size() - 2));
    if (top_keys_.size() < 12) top_keys_.push_back(key);
    const std::string pointer = "/" + key;
    if (stream_.peek() != ':') {
      fail_at(stream_.offset(), fmt::format("{}: expected ':' after the member name, found {}",
                                            pointer, stream_.found()));
    }
    stream_.advance();
    if (stream_.peek() == JsonStream::kEnd) {
      fail_at(stream_.offset(),
              fmt::format("{}: expected a value, found the end of the file (is it truncated?)",
                          pointer));
    }
    if (key == "traceEvents") {
      scan_trace_events();
    } else {
      std::string* keep = key == "distributedInfo"       ? &distributed_info_
                          : key == "deviceProperties"    ? &device_properties_
                          : key == "baseTimeNanoseconds" ? &base_time_
                                                         : nullptr;
      const JsonStream::Value value = stream_.value(keep != nullptr, pointer);
      if (keep != nullptr) keep->assign(value.text);
    }
    first = false;
    c = stream_.peek();
    if (c == ',') {
      stream_.advance();
      continue;
    }
    if (c == '}') {
      stream_.advance();
      break;
    }
    fail_at(stream_.offset(),
            fmt::format("expected ',' or '}}' after the top-level member \"{}\", found {}{}", key,
                        stream_.found(), c == JsonStream::kEnd ? " (is it truncated?)" : ""));
  }
  if (stream_.peek() != JsonStream::kEnd) {
    fail_at(stream_.offset(),
            "expected the end of the file after the top-level object, found " + stream_.found());
  }
  if (!saw_trace_events_) {
    std::string keys;
    for (const std::string& key : top_keys_) keys += (keys.empty() ? "" : ", ") + key;
    throw ProfileError(
        source_.name(), "",
        fmt::format("expected a top-level \"traceEvents\" array (a PyTorch "
                    "profiler trace), found {}",
                    keys.empty() ? std::string("an empty object") : "only other members: " + keys));
  }
  parse_metadata();
  finish(trace);
  return trace;
}

// The rank and device from the small top-level members, parsed once the stream is done.
void KinetoParser::parse_metadata() {
  if (!base_time_.empty()) parse_base_time(base_time_);
  if (!distributed_info_.empty()) parse_distributed_info(distributed_info_);
  if (!device_properties_.empty()) parse_device_properties(device_properties_);
}

void KinetoParser::parse_base_time(std::string_view text) {
  std::int64_t base = 0;
  std::string_view digits = trim_right(text);
  if (digits.size() >= 2 && digits.front() == '"') digits = digits.substr(1, digits.size() - 2);
  if (!parse_int64(digits, base) || base < 0) {
    fail_top("/baseTimeNanoseconds",
             "expected a non-negative integer (ns), found " + shorten(trim_right(text)));
  }
  const auto shift = [&](TimeNs& t, std::string_view what) {
    if (__builtin_add_overflow(t, base, &t)) {
      fail_top("/baseTimeNanoseconds",
               fmt::format("expected a base that keeps {} times within the int64 nanosecond "
                           "range, found an overflow",
                           what));
    }
  };
  for (GpuOp& op : ops_) {
    shift(op.start, "GPU op");
    shift(op.end, "GPU op");
  }
  for (Launch& launch : launches_) {
    shift(launch.start, "launch");
    shift(launch.end, "launch");
  }
  for (Range& range : ranges_) {
    shift(range.start, "range");
    shift(range.end, "range");
  }
  for (MemoryEvent& event : memory_) shift(event.time, "memory event");
}

void KinetoParser::parse_distributed_info(std::string_view text) {
  const simdjson::padded_string padded(text);
  od::parser parser;
  od::document document;
  od::object object;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS ||
      document.get_object().get(object) != simdjson::SUCCESS) {
    fail_top("/distributedInfo", "expected an object, found " + shorten(trim_right(text)));
  }
  for (auto field_result : object) {
    od::field field;
    if (std::move(field_result).get(field) != simdjson::SUCCESS) {
      fail_top("/distributedInfo", "expected a valid JSON object, found malformed JSON");
    }
    const od::raw_json_string key = field.key();
    const bool is_rank = key == "rank";
    if (!is_rank && !(key == "world_size")) continue;
    od::value& value = field.value();
    std::int64_t number = 0;
    od::json_type type{};
    if (value.type().get(type) != simdjson::SUCCESS || type != od::json_type::number ||
        !parse_int64(trim_right(value.raw_json_token()), number) || number < 0) {
      fail_top(is_rank ? "/distributedInfo/rank" : "/distributedInfo/world_size",
               "expected a non-negative integer, found " + describe(value));
    }
    (is_rank ? rank_ : world_size_) = number;
  }
}

void KinetoParser::parse_device_properties(std::string_view text) {
  const simdjson::padded_string padded(text);
  od::parser parser;
  od::document document;
  od::array array;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS ||
      document.get_array().get(array) != simdjson::SUCCESS) {
    fail_top("/deviceProperties", "expected an array, found " + shorten(trim_right(text)));
  }
  // The first entry: AMD traces put the GPU at an offset pid, so the trace's device index
  // does not index this list (FORMATS.md 1.6).
  for (auto element : array) {
    od::value entry;
    od::object device;
    if (element.get(entry) != simdjson::SUCCESS) {
      fail_top("/deviceProperties", "expected a valid JSON array, found malformed JSON");
    }
    if (entry.get_object().get(device) != simdjson::SUCCESS) {
      fail_top("/deviceProperties/0", "expected an object, found " + describe(entry));
    }
    std::string_view name;
    od::value value;
    if (device.find_field_unordered("name").get(value) == simdjson::SUCCESS) {
      if (value.get_string().get(name) != simdjson::SUCCESS) {
        fail_top("/deviceProperties/0/name", "expected a string, found " + describe(value));
      }
      device_name_ = std::string(name);
    }
    break;
  }
}

// A `[memory]` instant of a device (Device Type other than 0, the CPU) is kept; the rest of
// cpu_instant_event is profiler bookkeeping.
void KinetoParser::read_memory_event(const Event& event) {
  if (!event.instant || !event.has_name || event.name != "[memory]") return;
  if (!event.memory_bytes || !event.device_type || *event.device_type == 0) return;
  if (pending_) fail_event(pending_->at, pending_->message);
  MemoryEvent memory;
  memory.time = time_of(event.ts, "ts");
  memory.bytes = *event.memory_bytes;
  memory.device = event.device.value_or(-1);
  memory_.push_back(memory);
}

void KinetoParser::finish(KernelTrace& trace) {
  names_.move_into(trace.names);
  // Depth is the nesting per source on each thread, so that turning on with_stack (Python
  // frames) does not change the depth of record_function ranges.
  const auto python = std::stable_partition(ranges_.begin(), ranges_.end(), [](const Range& r) {
    return r.source != RangeSource::Python;
  });
  assign_nesting_depths(std::span<Range>(ranges_.begin(), python));
  assign_nesting_depths(std::span<Range>(python, ranges_.end()));
  trace.ops = std::move(ops_);
  trace.launches = std::move(launches_);
  trace.ranges = std::move(ranges_);
  trace.memory = std::move(memory_);
  finish_trace(trace);
  trace.rank = rank_;
  trace.world_size = world_size_;
  trace.device_name = device_name_;
  if (trace.rank < 0) trace.rank = rank_from_file_name(trace.path);
}

bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

DecimalStatus microseconds_to_ns(std::string_view text, TimeNs& ns) {
  // Grammar: JSON's number, with leading zeros tolerated.
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  const std::size_t int_begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  const std::string_view int_digits = text.substr(int_begin, i - int_begin);
  if (int_digits.empty()) return DecimalStatus::NotANumber;
  std::string_view frac_digits;
  if (i < text.size() && text[i] == '.') {
    const std::size_t frac_begin = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    frac_digits = text.substr(frac_begin, i - frac_begin);
    if (frac_digits.empty()) return DecimalStatus::NotANumber;
  }
  std::int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    const std::size_t exp_begin = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      // Beyond 10^6 every non-zero value over- or underflows anyway.
      if (exponent < 1'000'000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (i == exp_begin) return DecimalStatus::NotANumber;
    if (exponent_negative) exponent = -exponent;
  }
  if (i != text.size()) return DecimalStatus::NotANumber;

  // value_ns = digits * 10^(exponent - |frac| + 3), digits = int_digits frac_digits.
  const auto digit_count = static_cast<std::int64_t>(int_digits.size() + frac_digits.size());
  const auto digit_at = [&](std::int64_t k) {
    const auto index = static_cast<std::size_t>(k);
    return index < int_digits.size() ? int_digits[index] - '0'
                                     : frac_digits[index - int_digits.size()] - '0';
  };
  const std::int64_t scale = exponent - static_cast<std::int64_t>(frac_digits.size()) + 3;
  // The digits left of the nanosecond point, then the first one right of it for rounding.
  const std::int64_t kept = std::clamp<std::int64_t>(digit_count + scale, -1, digit_count);
  constexpr std::uint64_t kLimit = std::numeric_limits<std::int64_t>::max();
  std::uint64_t magnitude = 0;
  for (std::int64_t k = 0; k < kept; ++k) {
    const auto digit = static_cast<std::uint64_t>(digit_at(k));
    if (magnitude > (kLimit - digit) / 10) return DecimalStatus::OutOfRange;
    magnitude = magnitude * 10 + digit;
  }
  if (kept >= 0 && kept < digit_count && digit_at(kept) >= 5) {
    if (magnitude == kLimit) return DecimalStatus::OutOfRange;
    ++magnitude;
  }
  for (std::int64_t k = digit_count; k < digit_count + scale && magnitude != 0; ++k) {
    if (magnitude > kLimit / 10) return DecimalStatus::OutOfRange;
    magnitude *= 10;
  }
  ns = negative ? -static_cast<TimeNs>(magnitude) : static_cast<TimeNs>(magnitude);
  return DecimalStatus::Ok;
}

bool looks_like_kineto(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  std::size_t i = 0;
  while (i < head.size() && is_json_space(head[i])) ++i;
  if (i == head.size() || head[i] != '{') return false;
  ++i;
  while (i < head.size() && is_json_space(head[i])) ++i;
  // rocprofv3's JSON is also one object, but its only member is "rocprofiler-sdk-tool".
  if (head.substr(i).starts_with("\"rocprofiler-sdk-tool\"")) return false;
  for (const std::string_view key :
       {"\"traceEvents\"", "\"schemaVersion\"", "\"deviceProperties\"", "\"distributedInfo\""}) {
    if (head.find(key) != std::string_view::npos) return true;
  }
  return false;
}

KernelTrace read_kineto(ByteSource& source, std::size_t chunk_bytes) {
  return KinetoParser(source, chunk_bytes).run();
}

ProfileReader kineto_reader() {
  ProfileReader reader;
  reader.name = "kineto";
  reader.description = "PyTorch profiler / Kineto Chrome-trace JSON (.json, .json.gz)";
  reader.accepts = [](const FileSniff& sniff) { return looks_like_kineto(sniff.head); };
  reader.read = [](const std::filesystem::path& path) {
    GzFileSource source(path);
    return read_kineto(source);
  };
  return reader;
}

}  // namespace perflow::reader::detail
