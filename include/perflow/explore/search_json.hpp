#pragma once

#include <string>

#include "perflow/explore/search.hpp"

namespace perflow::explore {

/// A search's result as JSON text (docs/search-and-sweeps.md "Search"): the counts, then `best` and
/// `pareto`, each plan with its rank, choices, figures and config. Byte for byte what `perflow
/// search -o PLANS.json` writes and `--format json` prints; Python's perflow.search reads the same
/// text.
std::string search_result_text(const SearchResult& result);

/// The plans of `best` then `pareto` as CSV (`perflow search --format csv`): a `list` column
/// (best or pareto), then each plan's fields as in the JSON but its config; a field without a
/// value (tokens_per_s without /model) is an empty cell.
std::string search_result_csv(const SearchResult& result);

}  // namespace perflow::explore
