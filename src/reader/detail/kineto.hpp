#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "byte_source.hpp"
#include "perflow/core/time.hpp"
#include "perflow/reader/kernel_trace.hpp"

namespace perflow::reader::detail {

/// True if the head of a file looks like a PyTorch profiler / Kineto Chrome trace: a JSON
/// object that mentions "traceEvents" (or Kineto's own top-level keys), and not the
/// rocprofv3 JSON, whose top-level key is "rocprofiler-sdk-tool".
bool looks_like_kineto(std::string_view head);

/// Reads a Kineto trace from a stream of (decompressed) JSON text; errors name source.name().
/// `chunk_bytes` is the read size (small values let tests put chunk boundaries everywhere).
KernelTrace read_kineto(ByteSource& source, std::size_t chunk_bytes = 4U << 20);

enum class DecimalStatus : std::uint8_t { Ok, NotANumber, OutOfRange };

/// Converts a JSON number of microseconds ("4458677009853.422", "1682725897226747", "12.5",
/// "1e3") to integer nanoseconds with decimal arithmetic, never through double: a 16-digit
/// epoch time in µs with 3 decimals does not fit a double exactly. Digits finer than 1 ns
/// round half away from zero (Kineto's llround).
DecimalStatus microseconds_to_ns(std::string_view text, TimeNs& ns);

}  // namespace perflow::reader::detail
