// A job array's submission found by its token (submit_attempt.hpp): an
// unclear sbatch whose array appeared after all is adopted once, by the
// array's id, from the real answers of 24.11 (tests/unit/data/24.11/array-*).
#include "catch.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "fake_runner.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "submit/submit.hpp"
#include "submit/submit_attempt.hpp"

using namespace ddpctl;

namespace {

std::string submit_fixture(const std::string& version, const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/" + version + "/" + name);
}

}  // namespace

TEST_CASE("an array's records found by their token are its submission: adopted once, by the array's id",
          "[job_array]") {
  test::SubmitFixture f("24.11");
  f.slurm.sbatch = test::FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  Run run = f.runs().at(0);
  const std::string token = run.attempts.at(0).token;
  // Tasks first, as squeue may list them, then the collapsed rest.
  std::vector<Job> queue = parse_squeue_json(submit_fixture("24.11", "array-running-squeue.json"));
  std::reverse(queue.begin(), queue.end());
  for (auto& j : queue) j.comment = job_comment(token);
  REQUIRE(queue.front().id != queue.front().array_job_id);
  CHECK(adopt_found_jobs(run, queue) == 1);
  Attempt adopted = load_run(run.dir).attempts.at(0);
  CHECK(adopted.outcome == Outcome::Submitted);
  CHECK(adopted.job_id == queue.front().array_job_id);
}

TEST_CASE("an unclear submission whose array appeared later is settled by the array's id, not submitted again",
          "[job_array]") {
  test::SubmitFixture f("24.11");
  f.slurm.sbatch = test::FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  const std::string token = f.runs().at(0).attempts.at(0).token;
  // The controller made the array after all: squeue lists its tasks first.
  nlohmann::json doc = nlohmann::json::parse(submit_fixture("24.11", "array-running-squeue.json"));
  std::reverse(doc["jobs"].begin(), doc["jobs"].end());
  for (auto& j : doc["jobs"]) j["comment"] = job_comment(token);
  const std::string array = std::to_string(doc["jobs"][0]["array_job_id"]["number"].get<long long>());
  REQUIRE(std::to_string(doc["jobs"][0]["job_id"].get<long long>()) != array);
  f.slurm.runner.on("squeue", {"--json"}, test::exits(0, doc.dump()));
  f.slurm.sbatch = test::FakeSlurm::Sbatch::Ok;
  SubmitResult r = f.submit();
  CHECK(r.kind == SubmitResult::Kind::AlreadySubmitted);
  CHECK(r.active.job_id == array);
  CHECK(f.slurm.runner.count("sbatch") == 1);
  CHECK(load_run(f.runs().at(0).dir).attempts.at(0).job_id == array);
}
