// Slurm's job array task lists: what squeue and sacct print read back, and
// the shortest --array= value written for a set of cells.
#include "catch.hpp"

#include <random>

#include "slurm/job_array.hpp"

using namespace ddpctl;

namespace {
std::vector<int> range(int first, int last, int step = 1) {
  std::vector<int> out;
  for (int i = first; i <= last; i += step) out.push_back(i);
  return out;
}
}  // namespace

TEST_CASE("array task lists as squeue and sacct print them, with or without brackets", "[job_array]") {
  auto t = parse_array_tasks("4-19%4");
  REQUIRE(t);
  CHECK(t->indices == range(4, 19));
  CHECK(t->max_parallel == 4);
  auto bracketed = parse_array_tasks("[4-19%4]");
  REQUIRE(bracketed);
  CHECK(bracketed->indices == t->indices);
  CHECK(bracketed->max_parallel == 4);

  t = parse_array_tasks("1,3,5-7");
  REQUIRE(t);
  CHECK(t->indices == std::vector<int>{1, 3, 5, 6, 7});
  CHECK_FALSE(t->max_parallel);
  t = parse_array_tasks("0-9:2");
  REQUIRE(t);
  CHECK(t->indices == std::vector<int>{0, 2, 4, 6, 8});
  t = parse_array_tasks("7");
  REQUIRE(t);
  CHECK(t->indices == std::vector<int>{7});
  // As Slurm writes a stepped list with a throttle, and a list of several kinds.
  t = parse_array_tasks("[0-15:4%2]");
  REQUIRE(t);
  CHECK(t->indices == std::vector<int>{0, 4, 8, 12});
  CHECK(t->max_parallel == 2);
  t = parse_array_tasks("9,1-3,2");  // a list given out of order reads as the set it names
  REQUIRE(t);
  CHECK(t->indices == std::vector<int>{1, 2, 3, 9});
}

TEST_CASE("anything else is not a task list, and nothing throws", "[job_array]") {
  for (const char* bad : {"", "[]", "[", "[4-19", "4-19]", "%4", "4-19%", "4-19%0", "4-19%x", "-3", "3-", "5-2",
                          "1,,3", ",1", "1,", "0-9:0", "0-9:", "5:2", "a", "1 ,2", " 1", "1-2-3", "0x10", "+1",
                          "1%2%3", "N/A", "(null)", "4_[2-5]", "99999999999", "1-4:2:3"}) {
    INFO(bad);
    CHECK_FALSE(parse_array_tasks(bad));
  }
  // squeue and sacct cut a long list at 64 characters unless SLURM_BITSTR_LEN=0
  // (24.11's real words for an array of 33 scattered tasks, throttled to 3).
  CHECK_FALSE(parse_array_tasks("1,3-4,7,9,12,15-16,20,23,27,30-31,35,38,41,44,46,50,53,57,61...%3"));
  // Absurd ranges are refused before anything is expanded.
  CHECK_FALSE(parse_array_tasks("0-999999999"));
  CHECK_FALSE(parse_array_tasks("0-5000000,6000000-11000000"));
  auto big = parse_array_tasks("0-9999999:1");
  REQUIRE(big);
  CHECK(big->indices.size() == static_cast<size_t>(kMaxArrayIndices));
}

TEST_CASE("the shortest --array= value", "[job_array]") {
  CHECK(format_array({0, 1, 2, 3}, 2) == "0-3%2");
  CHECK(format_array({3, 7, 9}, std::nullopt) == "3,7,9");
  CHECK(format_array({0, 1, 2, 5, 6}, std::nullopt) == "0-2,5-6");
  CHECK(format_array({7}, 1) == "7%1");
  CHECK(format_array({}, 4).empty());
  CHECK(format_array({0, 2, 4, 6, 8}, std::nullopt) == "0-8:2");
  CHECK(format_array({10, 20}, std::nullopt) == "10,20");  // shorter than 10-20:10
  // A progression's last index starts the next piece when that is shorter.
  CHECK(format_array({0, 2, 4, 5, 6, 7}, std::nullopt) == "0,2,4-7");
  CHECK(format_array({0, 3, 6, 9, 10, 11, 12, 13}, 5) == "0-6:3,9-13%5");
  // Not sorted, or twice: sorted first.
  CHECK(format_array({5, 1, 3, 3}, std::nullopt) == "1-5:2");
  CHECK(format_array({1, 2}, std::nullopt) == "1-2");
  CHECK(format_array(range(0, 199), 8) == "0-199%8");
  CHECK(format_array({0}, 0) == "0");  // no throttle below 1
}

TEST_CASE("formatting then parsing gives back the same indices and throttle", "[job_array]") {
  std::mt19937 rng(38);  // fixed seed: the same lists on every run
  for (int round = 0; round < 500; ++round) {
    std::vector<int> indices;
    std::uniform_int_distribution<int> pick(0, 3);
    int at = static_cast<int>(rng() % 5);
    int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      indices.push_back(at);
      // Runs, steps and gaps in every mixture.
      int kind = pick(rng);
      at += kind == 0 ? 1 : kind == 1 ? 2 : kind == 2 ? 3 + static_cast<int>(rng() % 7) : 1000;
    }
    std::optional<int> throttle;
    if (round % 3 == 0) throttle = 1 + static_cast<int>(rng() % 16);
    std::string text = format_array(indices, throttle);
    INFO(text);
    auto back = parse_array_tasks(text);
    REQUIRE(back);
    CHECK(back->indices == indices);
    CHECK(back->max_parallel == throttle);
    // Never longer than the plain list Slurm would also take.
    std::string plain;
    for (int i : indices) plain += (plain.empty() ? "" : ",") + std::to_string(i);
    if (throttle) plain += "%" + std::to_string(*throttle);
    CHECK(text.size() <= plain.size());
  }
  // A large whole array, in one piece.
  auto all = range(0, 100000);
  CHECK(format_array(all, 100) == "0-100000%100");
  CHECK(parse_array_tasks("0-100000%100")->indices == all);
}
