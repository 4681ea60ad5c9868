// rocprofv3 JSON (`--output-format json`): {"rocprofiler-sdk-tool": [one object per process]}
// with agents, kernel_symbols, strings and buffer_records (kernel_dispatch, memory_copy,
// marker_api, hip_api). Read with simdjson's on-demand API in one forward pass over the
// decompressed text, so no DOM is built; references (agents, kernel ids, operation names) are
// resolved after each process because the tool does not promise the key order. Times are the
// file's integer ns (CLOCK_BOOTTIME by default).
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "detail/comm_kernel.hpp"
#include "detail/decompressed_file.hpp"
#include "detail/readers.hpp"
#include "detail/trace_finish.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

namespace sj = simdjson::ondemand;

constexpr std::string_view kFormat = "rocprofv3-json";
constexpr std::string_view kToolKey = "rocprofiler-sdk-tool";

// The JSON pointer of the value being read. A scope appends a key or an index and removes it
// on exit, except while an exception unwinds, so the catch site still sees where it failed.
class JsonPath {
 public:
  class Scope {
   public:
    Scope(JsonPath& path, std::string_view step)
        : path_(path), length_(path.text_.size()), unwinding_(std::uncaught_exceptions()) {
      path_.text_ += '/';
      if (step.find_first_of("~/") == std::string_view::npos) {
        path_.text_.append(step);  // the common case, on every field of every record
        return;
      }
      for (const char c : step) {
        if (c == '~') {
          path_.text_ += "~0";
        } else if (c == '/') {
          path_.text_ += "~1";
        } else {
          path_.text_ += c;
        }
      }
    }
    Scope(JsonPath& path, std::size_t index)
        : path_(path), length_(path.text_.size()), unwinding_(std::uncaught_exceptions()) {
      std::array<char, 24> digits{};
      const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), index).ptr;
      path_.text_ += '/';
      path_.text_.append(digits.data(), end);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() {
      if (std::uncaught_exceptions() == unwinding_) path_.text_.resize(length_);
    }

   private:
    JsonPath& path_;
    std::size_t length_;
    int unwinding_;
  };

  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  std::string text_;
};

struct Agent {
  bool gpu = false;
  std::uint32_t device = 0;
  std::string product;
};

// One buffer record; which fields are required depends on its list.
struct Record {
  std::size_t index = 0;
  std::optional<std::uint64_t> kind;
  std::optional<std::uint64_t> operation;
  std::optional<std::uint64_t> thread;
  std::optional<std::uint64_t> correlation;
  std::optional<std::uint64_t> start;
  std::optional<std::uint64_t> end;
  std::optional<std::uint64_t> agent;
  std::optional<std::uint64_t> queue;
  std::optional<std::uint64_t> kernel_id;
  std::optional<std::uint64_t> source;
  std::optional<std::uint64_t> destination;
  std::optional<std::uint64_t> bytes;
  std::optional<std::uint64_t> stream;
};

// What one process element holds, gathered before its references are resolved.
struct Process {
  std::size_t index = 0;
  std::unordered_map<std::uint64_t, Agent> agents;
  std::unordered_map<std::uint64_t, std::string> kernels;
  std::vector<std::pair<std::string, std::vector<std::string>>> kinds;  // index == kind
  std::unordered_map<std::uint64_t, std::string> messages;              // marker text by id
  std::vector<Record> dispatches;
  std::vector<Record> copies;
  std::vector<Record> markers;
  std::vector<Record> calls;
};

std::string describe(sj::value& value) {
  sj::json_type type{};
  if (value.type().get(type) != simdjson::SUCCESS) return "invalid JSON";
  switch (type) {
    case sj::json_type::array:
      return "an array";
    case sj::json_type::object:
      return "an object";
    case sj::json_type::string:
      return "a string";
    case sj::json_type::boolean:
      return "a boolean";
    case sj::json_type::null:
      return "null";
    case sj::json_type::number:
      break;
  }
  return std::string(value.raw_json_token());
}

class RocprofJsonReader {
 public:
  explicit RocprofJsonReader(const std::filesystem::path& path) : file_(path.string()) {
    trace_.path = file_;
    trace_.format = std::string(kFormat);
  }

  KernelTrace read() {
    const DecompressedFile content = read_decompressed(file_, simdjson::SIMDJSON_PADDING);
    sj::parser parser;
    try {
      sj::document document = parser.iterate(
          simdjson::padded_string_view(content.bytes.data(), content.size, content.bytes.size()));
      sj::object root;
      if (document.get_object().get(root) != simdjson::SUCCESS) {
        fail("", fmt::format("expected a JSON object with key {}, found another value", kToolKey));
      }
      bool found = false;
      for (auto member : root) {
        // simdjson_result<field> forwards unescaped_key() and value() with error checks.
        const std::string key(member.unescaped_key().value());
        if (key != kToolKey) continue;
        found = true;
        const JsonPath::Scope scope(path_, key);
        sj::value value = member.value();
        std::size_t index = 0;
        for (auto element : array_of(value)) {
          Process process;
          process.index = index;
          {
            const JsonPath::Scope item(path_, index);
            sj::value process_value = element.value();
            read_process(process_value, process);
          }
          resolve(process);
          ++index;
        }
      }
      if (!found) fail("", fmt::format("expected key {}, found none", kToolKey));
      // Past the root object only the end may follow (current_location is then out of bounds).
      if (const auto rest = document.current_location(); rest.error() == simdjson::SUCCESS) {
        fail("", fmt::format("expected the end of the file after the JSON object, found more "
                             "text at byte {}",
                             rest.value_unsafe() - content.bytes.data()));
      }
    } catch (const simdjson::simdjson_error& e) {
      fail(path_.text(), fmt::format("expected valid JSON, found {}", e.what()));
    }
    finish_trace(trace_);
    trace_.device_name = fmt::format("{}", fmt::join(device_names_, ", "));
    return std::move(trace_);
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw ProfileError(file_, where, message);
  }
  [[noreturn]] void fail(const std::string& message) const { fail(path_.text(), message); }

  sj::object object_of(sj::value& value) {
    sj::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) {
      fail(fmt::format("expected an object, found {}", describe(value)));
    }
    return object;
  }

  sj::array array_of(sj::value& value) {
    sj::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) {
      fail(fmt::format("expected an array, found {}", describe(value)));
    }
    return array;
  }

  std::uint64_t unsigned_of(sj::value& value) {
    std::uint64_t number = 0;
    if (value.get_uint64().get(number) != simdjson::SUCCESS) {
      fail(fmt::format("expected an integer >= 0, found {}", describe(value)));
    }
    return number;
  }

  std::int64_t signed_of(sj::value& value) {
    std::int64_t number = 0;
    if (value.get_int64().get(number) != simdjson::SUCCESS) {
      fail(fmt::format("expected an integer, found {}", describe(value)));
    }
    return number;
  }

  std::string string_of(sj::value& value) {
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) {
      fail(fmt::format("expected a string, found {}", describe(value)));
    }
    return std::string(text);
  }

  // {"handle": N}
  std::uint64_t handle_of(sj::value& value) {
    std::optional<std::uint64_t> handle;
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      if (key == "handle") handle = unsigned_of(member);
    });
    if (!handle) fail("expected key handle, found none");
    return *handle;
  }

  template <class Visit>
  void for_each_field(sj::value& value, Visit&& visit) {
    for (auto member : object_of(value)) {
      // Unescaped strings stay valid for the whole document: no copy.
      const std::string_view key = member.unescaped_key().value();
      const JsonPath::Scope scope(path_, key);
      sj::value child = member.value();
      visit(key, child);
    }
  }

  template <class Visit>
  void for_each_element(sj::value& value, Visit&& visit) {
    std::size_t index = 0;
    for (auto element : array_of(value)) {
      const JsonPath::Scope scope(path_, index);
      sj::value child = element.value();
      visit(index, child);
      ++index;
    }
  }

  void read_process(sj::value& value, Process& process) {
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      if (key == "agents") {
        for_each_element(member,
                         [&](std::size_t, sj::value& agent) { read_agent(agent, process); });
      } else if (key == "kernel_symbols") {
        for_each_element(member,
                         [&](std::size_t, sj::value& symbol) { read_symbol(symbol, process); });
      } else if (key == "strings") {
        read_strings(member, process);
      } else if (key == "buffer_records") {
        read_buffer_records(member, process);
      }
    });
  }

  void read_agent(sj::value& value, Process& process) {
    std::optional<std::uint64_t> handle;
    std::optional<std::int64_t> gpu_index;
    std::optional<std::int64_t> logical_node;
    std::optional<std::int64_t> node;
    Agent agent;
    std::string name;
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      if (key == "id") {
        handle = handle_of(member);
      } else if (key == "type") {
        agent.gpu = unsigned_of(member) == 2;  // 1 CPU, 2 GPU
      } else if (key == "gpu_index") {
        gpu_index = signed_of(member);
      } else if (key == "logical_node_id") {
        logical_node = signed_of(member);
      } else if (key == "node_id") {
        node = signed_of(member);
      } else if (key == "product_name") {
        agent.product = string_of(member);
      } else if (key == "name") {
        name = string_of(member);
      }
    });
    if (!handle) fail("expected key id, found none");
    // The type-relative GPU index (0 for the first GPU) when the tool writes it; older
    // releases only have node ids, which count CPU agents first.
    const std::int64_t device =
        gpu_index && *gpu_index >= 0 ? *gpu_index : logical_node.value_or(node.value_or(0));
    agent.device = static_cast<std::uint32_t>(std::clamp<std::int64_t>(device, 0, UINT32_MAX));
    if (agent.product.empty()) agent.product = std::move(name);
    process.agents[*handle] = std::move(agent);
  }

  void read_symbol(sj::value& value, Process& process) {
    std::optional<std::uint64_t> id;
    std::string formatted;
    std::string demangled;
    std::string mangled;
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      if (key == "kernel_id") {
        id = unsigned_of(member);
      } else if (key == "formatted_kernel_name") {
        formatted = string_of(member);
      } else if (key == "demangled_kernel_name") {
        demangled = string_of(member);
      } else if (key == "kernel_name") {
        mangled = string_of(member);
      }
    });
    if (!id) fail("expected key kernel_id, found none");
    // The formatted name is demangled without the ".kd" descriptor suffix, as in the CSV.
    process.kernels[*id] = !formatted.empty()   ? formatted
                           : !demangled.empty() ? demangled
                                                : mangled;
  }

  void read_strings(sj::value& value, Process& process) {
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      if (key == "buffer_records") {
        for_each_element(member, [&](std::size_t, sj::value& kind) {
          // Plain references: clang before 16 cannot capture structured bindings.
          auto& entry = process.kinds.emplace_back();
          std::string& name = entry.first;
          std::vector<std::string>& operations = entry.second;
          for_each_field(kind, [&](std::string_view field, sj::value& item) {
            if (field == "kind") {
              name = string_of(item);
            } else if (field == "operations") {
              for_each_element(item, [&](std::size_t, sj::value& operation) {
                operations.push_back(string_of(operation));
              });
            }
          });
        });
      } else if (key == "marker_api") {
        for_each_element(member, [&](std::size_t, sj::value& entry) {
          std::optional<std::uint64_t> id;
          std::string text;
          for_each_field(entry, [&](std::string_view field, sj::value& item) {
            if (field == "key") {
              id = unsigned_of(item);
            } else if (field == "value") {
              text = string_of(item);
            }
          });
          if (!id) fail("expected key key, found none");
          process.messages[*id] = std::move(text);
        });
      }
    });
  }

  void read_buffer_records(sj::value& value, Process& process) {
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      std::vector<Record>* records = key == "kernel_dispatch" ? &process.dispatches
                                     : key == "memory_copy"   ? &process.copies
                                     : key == "marker_api"    ? &process.markers
                                     : key == "hip_api"       ? &process.calls
                                                              : nullptr;
      if (records == nullptr) return;
      for_each_element(member, [&](std::size_t index, sj::value& record) {
        records->push_back(read_record(record, index));
      });
    });
  }

  Record read_record(sj::value& value, std::size_t index) {
    Record record;
    record.index = index;
    for_each_field(value, [&](std::string_view key, sj::value& member) {
      if (key == "kind") {
        record.kind = unsigned_of(member);
      } else if (key == "operation") {
        record.operation = unsigned_of(member);
      } else if (key == "thread_id") {
        record.thread = unsigned_of(member);
      } else if (key == "correlation_id") {
        for_each_field(member, [&](std::string_view field, sj::value& item) {
          if (field == "internal") record.correlation = unsigned_of(item);
        });
      } else if (key == "start_timestamp") {
        record.start = unsigned_of(member);
      } else if (key == "end_timestamp") {
        record.end = unsigned_of(member);
      } else if (key == "dispatch_info") {
        for_each_field(member, [&](std::string_view field, sj::value& item) {
          if (field == "agent_id") {
            record.agent = handle_of(item);
          } else if (field == "queue_id") {
            record.queue = handle_of(item);
          } else if (field == "kernel_id") {
            record.kernel_id = unsigned_of(item);
          }
        });
      } else if (key == "src_agent_id") {
        record.source = handle_of(member);
      } else if (key == "dst_agent_id") {
        record.destination = handle_of(member);
      } else if (key == "bytes") {
        record.bytes = unsigned_of(member);
      } else if (key == "stream_id") {
        record.stream = handle_of(member);
      }
    });
    // Checked here, while the path still names the record.
    if (!record.start) fail("expected key start_timestamp, found none");
    if (!record.end) fail("expected key end_timestamp, found none");
    if (*record.start > static_cast<std::uint64_t>(INT64_MAX) ||
        *record.end > static_cast<std::uint64_t>(INT64_MAX) || *record.end < *record.start) {
      fail(fmt::format("expected 0 <= start_timestamp <= end_timestamp < 2^63, found {} and {}",
                       *record.start, *record.end));
    }
    return record;
  }

  std::string record_path(const Process& process, std::string_view list, const Record& record,
                          std::string_view field) const {
    return fmt::format("/{}/{}/buffer_records/{}/{}{}", kToolKey, process.index, list, record.index,
                       field);
  }

  const Agent& agent_of(const Process& process, std::string_view list, const Record& record,
                        std::optional<std::uint64_t> handle, std::string_view field) const {
    if (!handle) {
      fail(record_path(process, list, record, ""),
           fmt::format("expected key {}, found none", field.substr(field.rfind('/') + 1)));
    }
    const auto it = process.agents.find(*handle);
    if (it == process.agents.end()) {
      fail(record_path(process, list, record, field),
           fmt::format("expected the handle of an agent listed in agents, found {}", *handle));
    }
    return it->second;
  }

  std::string operation_name(const Process& process, const Record& record,
                             std::string_view fallback) const {
    if (record.kind && record.operation && *record.kind < process.kinds.size()) {
      const auto& operations = process.kinds[*record.kind].second;
      if (*record.operation < operations.size()) return operations[*record.operation];
    }
    return std::string(fallback);
  }

  void add_op(GpuOp op, const Agent& agent) {
    op.device = agent.device;
    if (!agent.product.empty() && std::find(device_names_.begin(), device_names_.end(),
                                            agent.product) == device_names_.end()) {
      device_names_.push_back(agent.product);
    }
    trace_.ops.push_back(op);
  }

  static std::uint64_t correlation_of(const Record& record) {
    return record.correlation && *record.correlation != 0 ? *record.correlation : kNoCorrelation;
  }

  void resolve(const Process& process) {
    std::unordered_set<std::uint64_t> launched;
    for (const Record& record : process.dispatches) {
      const Agent& agent =
          agent_of(process, "kernel_dispatch", record, record.agent, "/dispatch_info/agent_id");
      if (!record.kernel_id) {
        fail(record_path(process, "kernel_dispatch", record, "/dispatch_info"),
             "expected key kernel_id, found none");
      }
      const auto kernel = process.kernels.find(*record.kernel_id);
      if (kernel == process.kernels.end()) {
        fail(record_path(process, "kernel_dispatch", record, "/dispatch_info/kernel_id"),
             fmt::format("expected a kernel_id listed in kernel_symbols, found {}",
                         *record.kernel_id));
      }
      GpuOp op;
      op.kind = classify_kernel(kernel->second);
      op.name = trace_.names.intern(kernel->second);
      op.start = static_cast<TimeNs>(*record.start);
      op.end = static_cast<TimeNs>(*record.end);
      op.stream = record.queue.value_or(0);  // the queue, as in the CSV reader
      op.correlation = correlation_of(record);
      add_op(op, agent);
      launched.insert(op.correlation);
    }
    for (const Record& record : process.copies) {
      const Agent& source =
          agent_of(process, "memory_copy", record, record.source, "/src_agent_id");
      const Agent& destination =
          agent_of(process, "memory_copy", record, record.destination, "/dst_agent_id");
      GpuOp op;
      op.kind = GpuOpKind::Memcpy;
      op.name = trace_.names.intern(operation_name(process, record, "MEMORY_COPY"));
      op.start = static_cast<TimeNs>(*record.start);
      op.end = static_cast<TimeNs>(*record.end);
      op.stream = record.stream.value_or(0);
      op.correlation = correlation_of(record);
      if (record.bytes) {
        op.bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(*record.bytes, INT64_MAX));
      }
      add_op(op, destination.gpu ? destination : source);  // the device side of the copy
      launched.insert(op.correlation);
    }
    std::vector<Range> ranges;
    for (const Record& record : process.markers) {
      const auto message =
          record.correlation ? process.messages.find(*record.correlation) : process.messages.end();
      Range range;
      range.source = RangeSource::Roctx;
      range.name = trace_.names.intern(message != process.messages.end()
                                           ? message->second
                                           : operation_name(process, record, "ROCTx"));
      range.thread = record.thread.value_or(0);
      range.start = static_cast<TimeNs>(*record.start);
      range.end = static_cast<TimeNs>(*record.end);
      ranges.push_back(range);
    }
    assign_nesting_depths(ranges);
    trace_.ranges.insert(trace_.ranges.end(), ranges.begin(), ranges.end());
    // HIP calls whose correlation id reached the GPU are this process's launches.
    for (const Record& record : process.calls) {
      const std::uint64_t correlation = correlation_of(record);
      if (correlation == kNoCorrelation || !launched.contains(correlation)) continue;
      trace_.launches.push_back(Launch{record.thread.value_or(0),
                                       static_cast<TimeNs>(*record.start),
                                       static_cast<TimeNs>(*record.end), correlation});
    }
  }

  std::string file_;
  JsonPath path_;
  KernelTrace trace_;
  std::vector<std::string> device_names_;
};

KernelTrace read_rocprof_json(const std::filesystem::path& path) {
  return RocprofJsonReader(path).read();
}

// By content: the document is an object whose first key is "rocprofiler-sdk-tool".
bool accepts_rocprof_json(const FileSniff& sniff) {
  std::string_view head = sniff.head;
  const auto skip_blanks = [&] {
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    head.remove_prefix(first == std::string_view::npos ? head.size() : first);
  };
  skip_blanks();
  if (!head.starts_with('{')) return false;
  head.remove_prefix(1);
  skip_blanks();
  return head.starts_with(fmt::format("\"{}\"", kToolKey));
}

}  // namespace

ProfileReader rocprof_json_reader() {
  return {std::string(kFormat),
          "rocprofv3 JSON (--output-format json, key \"rocprofiler-sdk-tool\"), plain or gzip",
          &accepts_rocprof_json, &read_rocprof_json};
}

}  // namespace perflow::reader::detail
