#pragma once

#include <span>

#include "perflow/reader/kernel_trace.hpp"

namespace perflow::reader::detail {

/// Sets each range's depth from its nesting on its thread: ranges sorted by start (longest
/// first on ties) and a stack of open ends; a range that starts at or after the end of the
/// innermost open one closes it. For formats that do not write the level themselves.
void assign_nesting_depths(std::span<Range> ranges);

/// Puts ops, launches and ranges in the order KernelTrace documents, with full tie-breaks so
/// that equal inputs give identical traces.
void finish_trace(KernelTrace& trace);

}  // namespace perflow::reader::detail
