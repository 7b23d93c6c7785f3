// The record of an attempt's in-job restarts (in_job_record.hpp): it
// round-trips, status's words and report's time lost come from it and from
// where each restart's step resumed.
#include "catch.hpp"

#include <filesystem>

#include "runs/in_job_record.hpp"
#include "base/files.hpp"
#include "helpers.hpp"

using namespace ddpctl;

TEST_CASE("the record of in-job restarts round-trips and status's words come from it", "[in_job]") {
  InJobRecord r;
  r.attempt = 0;
  r.of = 3;
  InJobRestart x;
  x.number = 1;
  x.kind = StepFailureKind::TaskKilled;
  x.text = "rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken";
  x.nodes = {"g1", "g5"};
  x.decided_at = 10;
  r.restarts.push_back(x);
  auto back = parse_in_job_record(in_job_record_json(r).dump());
  REQUIRE(back);
  CHECK(back->restarts.at(0).kind == StepFailureKind::TaskKilled);
  CHECK(back->restarts.at(0).nodes == x.nodes);
  CHECK(describe_in_job(*back) ==
        "restart 1 of 3 in the job: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken (starting)");
  back->restarts[0].started_at = 12;
  back->fallback = "requeue";
  back->fallback_why = "rank 0 on g1 was killed (signal 9); in-job restarts used up (1 of 1); requeueing the job without g1";
  CHECK(describe_in_job(*back) ==
        "restart 1 of 3 in the job: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken; rank 0 on g1 was "
        "killed (signal 9); in-job restarts used up (1 of 1); requeueing the job without g1");
  CHECK_FALSE(parse_in_job_record("not json"));

  // Where restart 1 resumed, as its step's watchdog noted it beside the record.
  test::TempDir dir;
  std::string base = dir.path + "/demo_7";
  InJobRecord started = r;
  started.restarts[0].started_at = 12;
  write_file_atomic(in_job_record_path(base, 0), in_job_record_json(started).dump());
  write_file_atomic(in_job_resumed_path(base, 0, 1), R"({"epoch": 2, "step": 4200, "at": 13})");
  CHECK(describe_in_job(*read_in_job_record(base, 0)) ==
        "restart 1 of 3 in the job: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken; training again at epoch 2 "
        "step 4200");
  // The bundled trainer says which checkpoint it resumed.
  write_file_atomic(in_job_resumed_path(base, 0, 1),
                    R"j({"epoch": 2, "step": 4200, "at": 13, "from": "/ck/last.pt at epoch 2, sample 0 of 1600 (written by 2 ranks, now 2)"})j");
  CHECK(describe_in_job(*read_in_job_record(base, 0)) ==
        "restart 1 of 3 in the job: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken; training again at epoch 2 "
        "step 4200, resumed from /ck/last.pt at epoch 2, sample 0 of 1600 (written by 2 ranks, now 2)");
  // The report's time lost: from the failed step's end (decided_at 10) to training again (13).
  InJobHistory h = read_in_job_history(base);
  CHECK(h.count == 1);
  CHECK(h.lost_s == 3);
  REQUIRE(h.restarts.size() == 1);
  CHECK(h.restarts[0] == "restart 1 of 3: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken; training again "
                        "after 3.0 s (epoch 2 step 4200)");
  // Not seen training yet: to the new step's start (12).
  std::filesystem::remove(in_job_resumed_path(base, 0, 1));
  CHECK(read_in_job_history(base).restarts[0].find("new step after 2.0 s (not yet seen training)") != std::string::npos);

  // The failed step's last progress (4 s before it ended: Slurm noticing a
  // lost node) starts the time lost; one after the step's end is not its.
  write_file_atomic(in_job_resumed_path(base, 0, 1), R"({"epoch": 2, "step": 4200, "at": 13})");
  started.restarts[0].last_progress_at = 6;
  write_file_atomic(in_job_record_path(base, 0), in_job_record_json(started).dump());
  CHECK(read_in_job_record(base, 0)->restarts[0].last_progress_at == 6);
  h = read_in_job_history(base);
  CHECK(h.lost_s == 7);
  CHECK(h.restarts[0] == "restart 1 of 3: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken; training again "
                        "after 7.0 s (epoch 2 step 4200; 4.0 s of it from the last progress to the step's end)");
  started.restarts[0].last_progress_at = 11;
  write_file_atomic(in_job_record_path(base, 0), in_job_record_json(started).dump());
  CHECK(read_in_job_history(base).lost_s == 3);
}
