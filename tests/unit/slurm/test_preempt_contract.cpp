// The site's preemption contract (slurm/preempt_contract.hpp) from Slurm's
// own answers: `scontrol show config`, `scontrol -o show partition` (lines
// as the local 26.05 cluster of scripts/local-slurm gives them, trimmed to
// the fields read) and `sacctmgr show qos`. What each version really says
// is checked on all three in tests/slurm/test_doctor_drafts_a_usable_profile.sh.
#include "catch.hpp"

#include "slurm/preempt_contract.hpp"

using namespace ddpctl;

namespace {

const char* kPartitionsPrio =
    "PartitionName=cpu AllowGroups=ALL Default=YES QoS=N/A GraceTime=0 Hidden=NO MaxTime=02:00:00 Nodes=g[1-4] "
    "PriorityJobFactor=1 PriorityTier=1 RootOnly=NO PreemptMode=OFF State=UP TotalNodes=4\n"
    "PartitionName=a100-80gb AllowGroups=ALL Default=NO QoS=N/A GraceTime=0 Nodes=a[1-2] PriorityTier=1 "
    "PreemptMode=REQUEUE State=UP\n"
    "PartitionName=scavenger AllowGroups=ALL Default=NO QoS=N/A GraceTime=30 Hidden=NO MaxTime=02:00:00 "
    "Nodes=g[1-4] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO PreemptMode=REQUEUE State=UP TotalNodes=4\n"
    "PartitionName=urgent AllowGroups=ALL Default=NO QoS=N/A GraceTime=0 Hidden=NO MaxTime=02:00:00 Nodes=g[1-4] "
    "PriorityJobFactor=1 PriorityTier=10 RootOnly=NO PreemptMode=OFF State=UP TotalNodes=4\n";

std::map<std::string, std::string> prio_config(const std::string& params, const std::string& ctld) {
  return {{"PreemptMode", "REQUEUE"},     {"PreemptParameters", params}, {"PreemptType", "preempt/partition_prio"},
          {"PreemptExemptTime", "00:05:00"}, {"SlurmctldParameters", ctld}};
}

}  // namespace

TEST_CASE("preemption by partition tier: a lower tier's jobs on shared nodes, with its mode and grace") {
  PreemptContract c = read_preempt_contract(prio_config("(null)", "(null)"), kPartitionsPrio, "");
  CHECK(c.preempts());
  CHECK(c.type == "preempt/partition_prio");
  CHECK(c.exempt_s == 300);
  CHECK_FALSE(c.user_signal);
  CHECK(c.unread.empty());
  // cpu says OFF; a100-80gb shares no node with urgent; urgent is the top tier.
  REQUIRE(c.preemptible.size() == 1);
  const Preemptible* s = c.find("partition", "scavenger");
  REQUIRE(s);
  CHECK(s->mode == "REQUEUE");
  CHECK(s->grace_s == 30);
  CHECK(s->by == std::vector<std::string>{"urgent"});
  CHECK(describe_preemption(c, *s) == "preempted by a job of urgent with SIGTERM, 30 s grace, then requeued");
}

TEST_CASE("preemption: whether the job's own --signal is sent, as each Slurm version names it") {
  // 23.02 and later: PreemptParameters; 22.05: SlurmctldParameters.
  PreemptContract now = read_preempt_contract(prio_config("send_user_signal,strict_order", "(null)"), kPartitionsPrio, "");
  CHECK(now.user_signal);
  CHECK(now.user_signal_setting == "PreemptParameters=send_user_signal");
  PreemptContract old =
      read_preempt_contract(prio_config("", "enable_configless,preempt_send_user_signal"), kPartitionsPrio, "");
  CHECK(old.user_signal);
  CHECK(old.user_signal_setting == "SlurmctldParameters=preempt_send_user_signal");
  CHECK(describe_preemption(old, *old.find("partition", "scavenger")) ==
        "preempted by a job of urgent with its --signal (the site sends the user signal), 30 s grace, then requeued");
}

TEST_CASE("no preemption: preempt/none, or PreemptMode=OFF, preempts nobody") {
  CHECK_FALSE(read_preempt_contract({{"PreemptType", "preempt/none"}, {"PreemptMode", "OFF"}}, kPartitionsPrio, "")
                  .preempts());
  PreemptContract off = read_preempt_contract({{"PreemptType", "preempt/partition_prio"}, {"PreemptMode", "OFF"}},
                                              kPartitionsPrio, "");
  CHECK_FALSE(off.preempts());
  CHECK(off.preemptible.empty());
  // A config that cannot be read is said, not taken for "no preemption" in silence.
  CHECK_FALSE(read_preempt_contract({}, "", "").unread.empty());
}

TEST_CASE("preemption by QOS: the QOS another's Preempt list names, its mode (or the cluster's) and grace") {
  std::map<std::string, std::string> config = {
      {"PreemptType", "preempt/qos"}, {"PreemptMode", "CANCEL"}, {"PreemptExemptTime", "00:00:00"}};
  const char* qos = "normal||cluster|00:00:00|\n"
                    "high|low,scav|cluster|00:00:00|\n"
                    "low||requeue|00:02:00|00:10:00\n"
                    "scav||cluster|00:00:30|\n"
                    "broken|x\n";
  PreemptContract c = read_preempt_contract(config, "", qos);
  REQUIRE(c.preemptible.size() == 2);
  const Preemptible* low = c.find("qos", "low");
  REQUIRE(low);
  CHECK(low->mode == "REQUEUE");
  CHECK(low->grace_s == 120);
  CHECK(low->exempt_s == 600);
  CHECK(low->by == std::vector<std::string>{"high"});
  const Preemptible* scav = c.find("qos", "scav");
  REQUIRE(scav);
  CHECK(scav->mode == "CANCEL");  // "cluster": the cluster's PreemptMode
  CHECK(scav->grace_s == 30);
  CHECK(describe_preemption(c, *scav) == "preempted by a job of high with SIGTERM, 30 s grace, then cancelled");
  REQUIRE(c.unread.size() == 1);
  CHECK_THAT(c.unread[0], Catch::Matchers::Contains("line 5") && Catch::Matchers::Contains("2 field(s), 5 expected"));
}
