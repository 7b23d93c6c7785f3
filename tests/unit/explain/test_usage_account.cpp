// What a run used (usage_account.cpp): Slurm's allocation over every
// attempt split into its parts in the order an attempt spends its time,
// adding up to Slurm's figures; spares idle beside the step; the energy
// where gathered, else said not recorded; the notes in words.
#include "catch.hpp"

#include <fmt/format.h>

#include "helpers.hpp"
#include "base/files.hpp"
#include "explain/usage_account.hpp"
#include "runs/job_files.hpp"

using namespace ddpctl;

namespace {

AttemptFacts attempt(int n, long long start, long long end, int nodes, int cpus) {
  AttemptFacts a;
  a.attempt = n;
  a.start = start;
  a.end = end;
  a.alloc_nodes = nodes;
  a.cpus = cpus;
  a.metrics_anywhere = true;
  return a;
}

double part_s(const UsageAccount& a, const std::string& key) {
  for (const auto& p : a.parts)
    if (p.key == key) return p.node_s;
  return 0;
}

}  // namespace

TEST_CASE("a run's account: a preempted attempt and one with an in-job restart add up to Slurm's allocation",
          "[usage_account]") {
  // Attempt 1: 3 nodes (2 + a spare), 100 s: checks 4 s, start 6 s,
  // training to 70 s, preempted at 100 s. Attempt 2: 3 nodes, 200 s:
  // checks 5, start 5, 150 s to the last epoch with a restart losing 20 s,
  // then 40 s after it.
  AttemptFacts a1 = attempt(0, 1000, 1100, 3, 6);
  a1.checks_s = 4;
  a1.first_step = 1010;
  a1.last_epoch_end = 1070;
  AttemptFacts a2 = attempt(1, 1300, 1500, 3, 6);
  a2.checks_s = 5;
  a2.first_step = 1310;
  a2.last_epoch_end = 1460;
  a2.in_job_lost_s = 20;
  a2.energy_j = 7.2e6;
  UsageAccount a = account_usage({a1, a2}, 2);
  CHECK(a.attempts == 2);
  CHECK(a.elapsed_s == 300);
  CHECK(a.node_s == 900);  // Slurm's: (100 + 200) s x 3 nodes
  CHECK(a.cpu_s == 1800);
  double sum = 0, cpu = 0;
  for (const auto& p : a.parts) sum += p.node_s, cpu += p.cpu_s;
  CHECK(sum == Approx(a.node_s));
  CHECK(cpu == Approx(a.cpu_s));
  CHECK(part_s(a, "checks") == 2 * (4 + 5));
  CHECK(part_s(a, "start") == 2 * (6 + 5));
  CHECK(part_s(a, "training") == 2 * (60 + 130));
  CHECK(part_s(a, "restarts") == 2 * 20);
  CHECK(part_s(a, "interrupted") == 2 * 30);
  CHECK(part_s(a, "after") == 2 * 40);
  CHECK(part_s(a, "idle") == 300);  // the spare, both attempts
  // One attempt's energy is not the run's.
  CHECK_FALSE(a.energy_kwh);
  CHECK_THAT(a.energy_note, Catch::Matchers::StartsWith("not recorded by this site"));
  a1.energy_j = 3.6e6;
  CHECK(*account_usage({a1, a2}, 2).energy_kwh == Approx(3.0));
  std::string text = describe_account(a);
  CHECK_THAT(text, Catch::Matchers::StartsWith("0.250 node-h, 0.500 CPU-h over 2 attempt(s): 42% training, 2% node and "
                                               "fabric checks, 2% start: processes, rendezvous, first step, 4% in-job "
                                               "restarts, 7% interrupted attempts after their last epoch"));
}

TEST_CASE("a run's account: a program without metrics is one part, a stall its own", "[usage_account]") {
  AttemptFacts a1 = attempt(0, 0, 600, 2, 4);
  a1.metrics_anywhere = false;
  a1.checks_s = 2;
  a1.stalled_s = 300;
  UsageAccount a = account_usage({a1}, 2);
  CHECK(part_s(a, "checks") == 4);
  CHECK(part_s(a, "stalled") == 600);
  CHECK(part_s(a, "unsplit") == 2 * 298);
  CHECK(a.share("training") == 0);
}

TEST_CASE("a run's account: notes in words from what the agent sampled", "[usage_account]") {
  UsageAccount a = account_usage({attempt(0, 0, 100, 3, 6)}, 2);
  add_usage_notes(a, {40.0, 50.0, 256LL << 20, 8192, 6});
  REQUIRE(a.notes.size() == 4);
  CHECK(a.notes[0] == "GPUs idle 60% of the time (mean utilisation 40%): the input pipeline, the host or "
                      "communication keeps them waiting");
  CHECK_THAT(a.notes[1], Catch::Matchers::StartsWith("memory peak 3% of what was asked (256 MiB of 8.0 GiB)"));
  CHECK_THAT(a.notes[2], Catch::Matchers::StartsWith("CPUs 8% busy on average"));
  CHECK(a.notes[3] == "33% of the node-hours went to spares and nodes left out, idle beside the step");
}

TEST_CASE("a run's facts: each attempt's checks, metrics lines, restarts from the job's files", "[usage_account]") {
  test::TempDir dir;
  std::string base = dir.path + "/job_7";
  write_file_atomic(job_files::node_check(base, 1, "g1"), R"({"node": "g1", "ok": true, "seconds": 1.5})");
  write_file_atomic(job_files::node_check(base, 1, "g2"), R"({"node": "g2", "ok": true, "seconds": 2.5})");
  write_file_atomic(job_files::fabric(base, 1), R"({"nodes": ["g1", "g2"], "seconds": 3.0})");
  std::string metrics = dir.path + "/job_7.metrics.jsonl";
  write_file_atomic(metrics, R"({"epoch": 1, "time": 1050, "epoch_s": 30, "first_step_unix": 1019.5})" "\n"
                             R"({"epoch": 2, "time": 1080, "epoch_s": 30})" "\n"
                             R"({"epoch": 2, "time": 1250, "epoch_s": 30, "first_step_unix": 1215})" "\n");
  Job j1, j2;
  j1.start_time = 1000, j1.end_time = 1100, j1.node_count = 2, j1.cpus = 4;
  j2.start_time = 1200, j2.end_time = 1260, j2.node_count = 2, j2.cpus = 4, j2.nodes = "g[1-2]";
  auto facts = attempt_facts(base, metrics, {j1, j2});
  REQUIRE(facts.size() == 2);
  CHECK(facts[0].checks_s == 0);
  CHECK(*facts[0].first_step == 1019.5);
  CHECK(*facts[0].last_epoch_end == 1080);
  CHECK(facts[1].checks_s == Approx(5.5));  // the slowest node's 2.5 s, then the fabric's 3 s
  CHECK(*facts[1].first_step == 1215);
  CHECK(*facts[1].last_epoch_end == 1250);
}
