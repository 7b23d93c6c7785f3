// A grid's cells past the site's MaxArraySize (grid_array_submit.hpp):
// split into further arrays, each task running its cell at an offset.
#include "catch.hpp"

#include "grid_run.hpp"
#include "helpers.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "explain/status_grid.hpp"
#include "sweep/grid_array_submit.hpp"

using namespace ddpctl;
using test::fixture;
using test::grid_run;

TEST_CASE("sweep_grid: cells past the site's MaxArraySize go in further arrays, task N running cell N + offset") {
  auto parts = split_array({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 4);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].offset == 0);
  CHECK(parts[0].tasks == std::vector<int>{0, 1, 2, 3});
  CHECK(parts[1].offset == 4);
  CHECK(parts[1].tasks == std::vector<int>{0, 1, 2, 3});
  CHECK(parts[2].offset == 8);
  CHECK(parts[2].tasks == std::vector<int>{0, 1});
  // A retry's scattered cells: each part's tasks stay below the limit.
  parts = split_array({3, 9, 1500}, 1001);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].tasks == std::vector<int>{3, 9});
  CHECK(parts[1].offset == 1001);
  CHECK(parts[1].tasks == std::vector<int>{499});
  // No limit known: one array.
  CHECK(split_array({0, 5000}, 0).size() == 1);
}
