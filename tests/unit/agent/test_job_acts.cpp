// The agent's acts on its own job (job_acts.cpp) through a scripted runner.
#include <algorithm>
#include "catch.hpp"

#include "agent/job_acts.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;

TEST_CASE("requeue_job: a plain requeue, or hold, exclude, release", "[job_agent]") {
  FakeRunner runner;
  std::vector<std::string> failing;  // scontrol subcommands that fail
  runner.on("scontrol", {}, [&](const std::vector<std::string>& argv) {
    if (std::find(failing.begin(), failing.end(), argv[1]) != failing.end())
      return exits(1, "", "scontrol: error: Job is no longer pending execution for job 42\n");
    if (argv[1] == "show") return exits(0, "JobId=42 JobName=train ReqNodeList=(null) ExcNodeList=g3 NodeList=g[1-2]\n");
    return exits(0);
  });
  using Calls = std::vector<std::vector<std::string>>;

  SECTION("nothing to exclude") {
    CHECK_FALSE(requeue_job(runner, "42", {}));
    CHECK(runner.calls == Calls{{"scontrol", "requeue", "42"}});
  }
  SECTION("excluding nodes: Slurm takes ExcNodeList only from a pending job") {
    CHECK_FALSE(requeue_job(runner, "42", {"g2"}));
    CHECK(runner.calls == Calls{{"scontrol", "requeuehold", "42"},
                                {"scontrol", "show", "job", "-o", "42"},
                                {"scontrol", "update", "JobId=42", "ExcNodeList=g3,g2"},
                                {"scontrol", "release", "42"}});
  }
  SECTION("the hold refused: a plain requeue, and why the nodes stay") {
    failing = {"requeuehold"};
    auto why = requeue_job(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK(*why ==
          "the nodes could not be excluded (scontrol exited with status 1: scontrol: error: Job is no longer pending "
          "execution for job 42)");
    CHECK(runner.calls == Calls{{"scontrol", "requeuehold", "42"}, {"scontrol", "requeue", "42"}});
  }
  SECTION("the update refused: released all the same") {
    failing = {"update"};
    auto why = requeue_job(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK_THAT(*why, Catch::StartsWith("scontrol exited with status 1"));
    CHECK(runner.calls.back() == std::vector<std::string>{"scontrol", "release", "42"});
  }
  SECTION("the release refused: the user is told to release it") {
    failing = {"release"};
    auto why = requeue_job(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK_THAT(*why, Catch::StartsWith("scontrol release failed: scontrol exited with status 1"));
    CHECK_THAT(*why, Catch::EndsWith("; release the job by hand"));
  }
}
