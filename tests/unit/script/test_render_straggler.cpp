// The straggler watch's spec fields (watchdog.slow_after, exclude_slow) and
// what the rendered script passes the watchdog and the requeue; the watch
// itself: tests/unit/agent/test_straggler.cpp.
#include "catch.hpp"

#include <string>

#include "helpers.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/cluster.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

namespace {

std::string spec_error(const std::string& yaml) {
  return test::user_error_of([&] { parse_run_spec("s.yaml", yaml); });
}

const std::string kSpec = "name: r\ncluster: local\npartition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [hostname]\n";

std::string render_spec(const std::string& yaml) {
  ResolvedRun run = resolve_run(parse_run_spec("s.yaml", kSpec + yaml),
                                load_cluster_profile(test::source_dir() + "/configs/clusters/local.yaml"));
  auto scripts = render_scripts(run, test::source_dir() + "/templates");
  REQUIRE(scripts.size() >= 1);
  return scripts[0].text;
}

}  // namespace

TEST_CASE("watchdog.slow_after and exclude_slow: read, or an error naming file, line and field", "[straggler]") {
  RunSpec s = parse_run_spec("s.yaml", kSpec + "requeue: {max_restarts: 1}\nwatchdog: {slow_after: 10m, exclude_slow: true}\n");
  CHECK(s.watchdog.slow_after_s == 600);
  CHECK(s.watchdog.exclude_slow);
  RunSpec d = parse_run_spec("s.yaml", kSpec);
  CHECK(d.watchdog.slow_after_s == 300);
  CHECK_FALSE(d.watchdog.exclude_slow);

  CHECK_THAT(spec_error(kSpec + "watchdog: {exclude_slow: true}\n"),
             Catch::Contains("s.yaml:7:26: watchdog.exclude_slow: leaves a slow node out of the job's next attempt "
                             "or in-job restart, which needs a requeue: section (max_restarts) or a restart: section"));
  CHECK_THAT(spec_error(kSpec + "watchdog: {slow_after: 10s}\n"),
             Catch::Contains("s.yaml:7:24: watchdog.slow_after: must be at least 30s (six monitor intervals, and 30s)"));
  CHECK_THAT(spec_error(kSpec + "monitor: {interval: 20s}\nwatchdog: {slow_after: 1m}\n"),
             Catch::Contains("watchdog.slow_after: must be at least 120s"));
  CHECK_THAT(spec_error(kSpec + "requeue: {max_restarts: 1}\nwatchdog: {exclude_slow: maybe}\n"),
             Catch::Contains("s.yaml:8:26: watchdog.exclude_slow: 'maybe' must be true or false"));
}

TEST_CASE("the script passes slow_after and exclude_slow to the watchdog and the requeue", "[straggler]") {
  std::string plain = render_spec("requeue: {max_restarts: 1}\n");
  CHECK(plain.find("--slow-after") == std::string::npos);  // the watchdog's default
  CHECK(plain.find("--exclude-slow") == std::string::npos);
  CHECK(plain.find("--slow-of") == std::string::npos);

  std::string script = render_spec("requeue: {max_restarts: 1}\nwatchdog: {slow_after: 2m, exclude_slow: true}\n");
  CHECK(script.find("--epoch-base 1 --slow-after 120s --exclude-slow --step-pid") != std::string::npos);
  // The requeue at the time limit (no nodes of its own to leave out) asks
  // the agent, which adds the slow ranks' nodes.
  size_t begin = script.find("ddpctl_requeue() {");
  REQUIRE(begin != std::string::npos);
  std::string function = script.substr(begin, script.find("\n}\n", begin) + 3 - begin);
  auto requeue = [&](const std::string& agent, const std::string& args) {
    return test::run_bash("agent() { echo \"agent $*\"; }\nscontrol() { echo \"scontrol $*\"; }\n"
                          "ddpctl_attempt=0 SLURM_JOB_ID=42 ddpctl_log_base=/logs/r_42 ddpctl_agent=" + agent + "\n" +
                          function + "(ddpctl_requeue " + args + ") 2>/dev/null");
  };
  // Each requeue is first the run's event, with why and the nodes left out.
  CHECK(requeue("agent", "''") == "agent job event requeued reason= nodes=\nagent job requeue --exclude  --slow-of /logs/r_42\n");
  CHECK(requeue("agent", "'by the node check' g2") ==
        "agent job event requeued reason=by the node check nodes=g2\nagent job requeue --exclude g2 --slow-of /logs/r_42\n");
  // Where the agent cannot run, a plain requeue.
  CHECK(requeue("''", "''") == "scontrol requeue 42\n");
  // After preemption: the preemption first, then the requeue.
  CHECK(requeue("agent", "'after preemption: SIGTERM'") ==
        "agent job event preempted reason=after preemption: SIGTERM\nagent job event requeued reason=after preemption: "
        "SIGTERM nodes=\nagent job requeue --exclude  --slow-of /logs/r_42\n");
}
