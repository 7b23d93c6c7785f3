// What Slurm 22.05 prints, read back: fixtures are real output of the local cluster.
#include <catch2/catch.hpp>

#include "files.hpp"
#include "helpers.hpp"
#include "slurm_parse.hpp"

using namespace ddpctl;

namespace {
std::string fixture(const std::string& name) { return read_file(test::source_dir() + "/tests/unit/data/" + name); }

CommandResult sbatch(int code, std::string out, std::string err = "") {
  CommandResult r;
  r.argv = {"sbatch"};
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}
}  // namespace

TEST_CASE("sbatch --parsable: a job id is a submission") {
  SbatchResult s = parse_sbatch_result(sbatch(0, "1234\n"));
  CHECK(s.kind == SbatchResult::Kind::Submitted);
  CHECK(s.job_id == "1234");
  CHECK(s.cluster.empty());
}

TEST_CASE("sbatch --parsable: jobid;cluster names the cluster") {
  SbatchResult s = parse_sbatch_result(sbatch(0, "987;gilbreth\n"));
  CHECK(s.kind == SbatchResult::Kind::Submitted);
  CHECK(s.job_id == "987");
  CHECK(s.cluster == "gilbreth");
}

TEST_CASE("sbatch success is judged by exit code and stdout, not by empty stderr") {
  SbatchResult s = parse_sbatch_result(
      sbatch(0, "55\n", "sbatch: error: Batch job submission failed: Resource temporarily unavailable\nsbatch: retrying\n"));
  CHECK(s.kind == SbatchResult::Kind::Submitted);
  CHECK(s.job_id == "55");
}

TEST_CASE("sbatch exiting 0 with garbage is unconfirmed, not a job") {
  SbatchResult s = parse_sbatch_result(sbatch(0, "<html>proxy error</html>\n"));
  CHECK(s.kind == SbatchResult::Kind::Unconfirmed);
  CHECK_THAT(s.reason, Catch::Contains("no job id"));
  CHECK(parse_sbatch_result(sbatch(0, "")).kind == SbatchResult::Kind::Unconfirmed);
  CHECK(parse_sbatch_result(sbatch(0, "12a\n")).kind == SbatchResult::Kind::Unconfirmed);
}

TEST_CASE("sbatch socket timeouts are unconfirmed: the job may exist") {
  SbatchResult s = parse_sbatch_result(
      sbatch(1, "", "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n"));
  CHECK(s.kind == SbatchResult::Kind::Unconfirmed);
  CHECK_THAT(s.reason, Catch::Contains("Socket timed out"));
}

TEST_CASE("sbatch refusals are rejections with Slurm's reason") {
  SbatchResult s = parse_sbatch_result(sbatch(
      1, "", "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"));
  CHECK(s.kind == SbatchResult::Kind::Rejected);
  CHECK(s.reason == "Invalid account or account/partition combination specified");
}

TEST_CASE("sbatch killed by its time limit is unconfirmed") {
  CommandResult r = sbatch(-1, "");
  r.timed_out = true;
  CHECK(parse_sbatch_result(r).kind == SbatchResult::Kind::Unconfirmed);
}

TEST_CASE("a missing sbatch is a rejection that says so") {
  CommandResult r = sbatch(-1, "");
  r.not_found = true;
  SbatchResult s = parse_sbatch_result(r);
  CHECK(s.kind == SbatchResult::Kind::Rejected);
  CHECK_THAT(s.reason, Catch::Contains("not found on PATH"));
}

TEST_CASE("squeue --json of 22.05 gives every job, with comment and GPUs") {
  auto jobs = parse_squeue_json(fixture("squeue-22.05.json"));
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].id == "2");
  CHECK(jobs[0].state == JobState::Pending);
  CHECK(jobs[0].reason == "BeginTime");
  CHECK(jobs[0].comment == "ddpctl:tok9");
  CHECK(jobs[0].time_limit_s == 7200);
  CHECK(jobs[0].start_time > jobs[0].submit_time);  // the estimated start
  CHECK(jobs[1].state == JobState::Completed);
  CHECK(jobs[1].nodes == "g[1-2]");
  CHECK(jobs[1].node_count == 2);
}

TEST_CASE("squeue --json with the controller down is an error, not an empty queue") {
  CHECK_THROWS_AS(parse_squeue_json(fixture("squeue-22.05-controller-down.json")), SlurmAnswerError);
  CHECK_THROWS_WITH(parse_squeue_json(fixture("squeue-22.05-controller-down.json")),
                    Catch::Contains("Failed while looking for jobs"));
}

TEST_CASE("squeue format-string output is read field by field") {
  std::string sep = "\x1f";
  std::string line = "42" + sep + "train" + sep + "ddpctl:abc" + sep + "PENDING" + sep + "Resources" + sep +
                     "2026-11-22T08:11:57" + sep + "N/A" + sep + "N/A" + sep + "1:00:00" + sep + "" + sep + "2" +
                     sep + "gres:gpu:a100:4" + sep + "a100-80gb" + sep + "lusu" + sep + "/home/u\n";
  auto jobs = parse_squeue_format(line);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].id == "42");
  CHECK(jobs[0].comment == "ddpctl:abc");
  CHECK(jobs[0].time_limit_s == 3600);
  CHECK(jobs[0].gpus == 8);
  CHECK(jobs[0].start_time == 0);
  CHECK(jobs[0].submit_time > 0);
}

TEST_CASE("sacct -P rows are read, and 'CANCELLED by 0' is CANCELLED") {
  auto jobs = parse_sacct(
      "7|hello|ddpctl:t1|CANCELLED by 0|None|cpu|lusu|g[1-2]|2026-11-22T08:11:57|2026-11-22T08:11:58|"
      "2026-11-22T08:12:30|5|2|billing=2,cpu=2,gres/gpu=4,mem=512M,node=2||0:15|/tmp\n");
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].state == JobState::Cancelled);
  CHECK(jobs[0].gpus == 4);
  CHECK(jobs[0].time_limit_s == 300);
  CHECK(jobs[0].end_time - jobs[0].start_time == 32);
  CHECK(jobs[0].source == "sacct");
}

TEST_CASE("sinfo --json of 22.05: nodes with partitions, GPUs by type and features") {
  auto nodes = parse_sinfo_json(fixture("sinfo-22.05.json"));
  REQUIRE(nodes.size() == 6);
  const NodeInfo& a1 = nodes[0];
  CHECK(a1.name == "a1");
  CHECK(a1.partitions == std::vector<std::string>{"a100-80gb"});
  CHECK(a1.gpus_by_type.at("a100") == 4);
  CHECK(a1.cpus == 4);
  CHECK(a1.memory_mib == 2048);
  CHECK(a1.features == std::vector<std::string>{"a100", "a100-80gb"});
}

TEST_CASE("GRES strings: typed, untyped, socket annotations, several") {
  CHECK(parse_gres("gpu:a100:4(S:0-1)") == std::map<std::string, int>{{"a100", 4}});
  CHECK(parse_gres("gpu:2") == std::map<std::string, int>{{"", 2}});
  CHECK(parse_gres("gpu:a100:2,gpu:v100:1,shard:8") == std::map<std::string, int>{{"a100", 2}, {"v100", 1}});
  CHECK(parse_gres("(null)").empty());
  CHECK(parse_gres("gres:gpu:h100:8") == std::map<std::string, int>{{"h100", 8}});
}

TEST_CASE("TRES strings give the GPU count") {
  CHECK(gpus_in_tres("cpu=2,mem=512M,node=2,billing=2,gres/gpu=4") == 4);
  CHECK(gpus_in_tres("cpu=2,gres/gpu:a100=4,gres/gpu=4") == 4);
  CHECK(gpus_in_tres("cpu=1") == 0);
}

TEST_CASE("job states read from Slurm's names, and terminal states") {
  CHECK(parse_job_state("CANCELLED by 0") == JobState::Cancelled);
  CHECK(parse_job_state("OUT_OF_MEMORY") == JobState::OutOfMemory);
  CHECK_FALSE(parse_job_state("SOMETHING_NEW").has_value());
  for (JobState s : {JobState::Pending, JobState::NodeFail, JobState::RequeueHold, JobState::Unknown})
    CHECK(parse_job_state(state_name(s)) == s);
  CHECK(is_terminal(JobState::Completed));
  CHECK(is_terminal(JobState::Cancelled));
  CHECK(is_terminal(JobState::OutOfMemory));
  CHECK_FALSE(is_terminal(JobState::Running));
  CHECK_FALSE(is_terminal(JobState::Pending));
  CHECK_FALSE(is_terminal(JobState::Requeued));
  CHECK_FALSE(is_terminal(JobState::Unknown));
}

TEST_CASE("a state ddpctl does not know reads as UNKNOWN with Slurm's word in the reason") {
  auto jobs = parse_sacct("7|x|ddpctl:abc|SOMETHING_NEW|None|cpu|lusu|g1|2026-11-22T08:11:57|Unknown|Unknown|5|1|"
                          "cpu=1|cpu=1|0:0|/tmp\n");
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].state == JobState::Unknown);
  CHECK(jobs[0].reason == "Slurm reports state SOMETHING_NEW");
}

TEST_CASE("pending reasons in plain words") {
  CHECK(explain_reason("Resources") == "waiting for free nodes");
  CHECK(explain_reason("None").empty());
  CHECK(explain_reason("SomethingNew") == "SomethingNew");
}
