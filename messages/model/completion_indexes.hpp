// Sets of an Indexed Job's completion indexes in Kubernetes' interval form ("0-3,5,7-9"): how
// successPolicy names them and status.completedIndexes / failedIndexes show them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/model/result.hpp"

namespace caldera {

using IndexIntervals = std::vector<std::pair<int32_t, int32_t>>;  // closed, increasing

// Closed intervals in increasing order, none overlapping the one before, each below
// `completions`. The intervals, or why the text is not that.
Result<IndexIntervals> parse_index_intervals(std::string_view text, int32_t completions);

// The interval form of `indexes`, adjacent ones joined ("" for none): {0,1,2,3,5} -> "0-3,5".
std::string format_index_intervals(const std::set<int32_t>& indexes);

}  // namespace caldera
