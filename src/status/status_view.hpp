#pragma once
// The rows of one run as status gathers them, and as the index of ended
// runs keeps them (runs.hpp's views: `status` shows an ended run's rows
// without reading it again).
#include <string>
#include <utility>
#include <vector>

#include "runs/run_store.hpp"
#include "runs/runs_index.hpp"
#include "status/status_rows.hpp"

namespace ddpctl {

// The rows of one run: its jobs' (a race's group row first), then the
// attempts that made no job, those shown only with --all or when named
// marked so.
struct RunRows {
  std::string created_at, id;
  std::vector<StatusRow> rows;
  std::vector<std::pair<StatusRow, bool>> attempts;  // (row, shown only with --all or named)
};

// What the index keeps of an ended run: its rows, as text (parsed only when
// shown).
std::string run_view(const RunRows& g);
// The rows back from a view; their JSON only `with_json`. Throws on a view
// this version cannot read.
RunRows rows_from_view(const IndexedRun& ix, bool with_json);

}  // namespace ddpctl
