// The culprit by the bundled trainer's collective counters: its SIGQUIT
// answers, as recorded from ddp-train runs (tests/unit/data/stacks/README.md),
// read, compared across ranks, and weighed against the stacks.
#include "catch.hpp"
#include "agent/culprit.hpp"
#include "agent/culprit_collectives.hpp"
#include "agent/stack_parse.hpp"
#include "agent/stacks_file.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "spec/trainer_state.hpp"

using namespace ddpctl;

namespace {

// Recorded from tests/trainer/test_state_dump_collectives.sh (2 ranks, rank 1
// hung by --test-hang-at 1:3), with the Reducer and with flat buckets.
const std::string kReducerRank0 =
    "ddp-train: rank 0: epoch 1, step 3 of 1562: backward and the gradient allreduce for 0 s; collectives: entered "
    "#11 backward with the Reducer's gradient all_reduce, left #10 all_reduce (the step's start)";
const std::string kReducerRank1 =
    "ddp-train: rank 1: epoch 1, step 3 of 1562: loading a batch for 1 s; collectives: entered #10 all_reduce (the "
    "step's start), left #10 all_reduce (the step's start)";
const std::string kFlatRank0 =
    "ddp-train: rank 0: epoch 1, step 3 of 1562: backward and the gradient allreduce for 0 s; collectives: entered "
    "#10 all_reduce (gradients), left #9 all_reduce (the step's start)";
const std::string kFlatRank1 =
    "ddp-train: rank 1: epoch 1, step 3 of 1562: loading a batch for 0 s; collectives: entered #9 all_reduce (the "
    "step's start), left #9 all_reduce (the step's start)";

RankEvidence said(int rank, const std::string& node, const std::string& line) {
  RankEvidence e;
  e.task = rank;
  e.rank = rank;
  e.node = node;
  e.no_stacks_why = "no py-spy or gdb on " + node;
  auto s = parse_trainer_state(line);
  REQUIRE(s);
  e.trainer = *s;
  return e;
}

// A line as a rank in its phase would write it (the numbers are what vary).
std::string line(int rank, const std::string& phase, unsigned e, const std::string& en, unsigned l,
                 const std::string& ln) {
  return "ddp-train: rank " + std::to_string(rank) + ": " + phase + " for 31 s; collectives: entered #" +
         std::to_string(e) + " " + en + ", left #" + std::to_string(l) + " " + ln;
}

const std::string kGrad = "backward with the Reducer's gradient all_reduce";
const std::string kStart = "all_reduce (the step's start)";

std::string recorded_stacks(const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/stacks/" + name);
}

}  // namespace

TEST_CASE("the trainer's SIGQUIT answer is read: rank, phase, time, collectives", "[culprit]") {
  auto r0 = parse_trainer_state(kReducerRank0);
  REQUIRE(r0);
  CHECK(r0->rank == 0);
  CHECK(r0->phase == "epoch 1, step 3 of 1562: backward and the gradient allreduce");
  CHECK(r0->for_s == 0);
  CHECK(r0->counted);
  CHECK(r0->entered.seq == 11);
  CHECK(r0->entered.name == "backward with the Reducer's gradient all_reduce");
  CHECK(r0->left.seq == 10);
  CHECK(r0->left.name == "all_reduce (the step's start)");
  CHECK(r0->in_collective());

  auto r1 = parse_trainer_state(kReducerRank1);
  REQUIRE(r1);
  CHECK(r1->rank == 1);
  CHECK(r1->phase == "epoch 1, step 3 of 1562: loading a batch");
  CHECK(r1->for_s == 1);
  CHECK_FALSE(r1->in_collective());

  auto rdv = parse_trainer_state("ddp-train: rank 0 of 4: in the rendezvous for 3 s; collectives: none yet");
  REQUIRE(rdv);
  CHECK(rdv->rank == 0);
  CHECK(rdv->phase == "in the rendezvous");
  CHECK(rdv->counted);
  CHECK(rdv->entered.seq == 0);
  CHECK_FALSE(rdv->in_collective());

  auto starting = parse_trainer_state("ddp-train: starting (before the rendezvous); collectives: none yet\n");
  REQUIRE(starting);
  CHECK_FALSE(starting->rank);
  CHECK(starting->phase == "starting (before the rendezvous)");
  CHECK_FALSE(starting->for_s);

  // An older ddp-train's line says no collectives: read, but not counted.
  auto old =
      parse_trainer_state("ddp-train: rank 1: epoch 2, step 17 of 120: backward and the gradient allreduce for 612 s");
  REQUIRE(old);
  CHECK_FALSE(old->counted);
  CHECK(old->for_s == 612);
  CHECK(old->phase == "epoch 2, step 17 of 120: backward and the gradient allreduce");

  CHECK_FALSE(parse_trainer_state("no answer within 2 s"));
  CHECK_FALSE(parse_trainer_state("epoch 1"));
  // Left one it never entered: not the trainer's.
  CHECK_FALSE(parse_trainer_state(line(0, "x", 3, kStart, 4, kStart)));
}

TEST_CASE("the rank that never entered the collective the others wait in is named", "[culprit]") {
  SECTION("the Reducer, two ranks (recorded)") {
    auto v = decide_by_collectives({said(0, "g1", kReducerRank0), said(1, "g1", kReducerRank1)});
    REQUIRE(v);
    CHECK(v->kind == CulpritKind::Named);
    CHECK(v->evidence == CulpritEvidence::TrainerCounters);
    REQUIRE(v->culprits.size() == 1);
    CHECK(v->culprits[0].rank == 1);
    CHECK(v->culprits[0].where == "epoch 1, step 3 of 1562: loading a batch");
    CHECK(v->text ==
          "rank 1 (g1) never entered collective #11 backward with the Reducer's gradient all_reduce — it "
          "left #10, at \"epoch 1, step 3 of 1562: loading a batch\" for 1 s; rank 0 (g1) waits in #11");
  }
  SECTION("flat buckets (recorded)") {
    auto v = decide_by_collectives({said(0, "g1", kFlatRank0), said(1, "g1", kFlatRank1)});
    REQUIRE(v);
    CHECK(v->text ==
          "rank 1 (g1) never entered collective #10 all_reduce (gradients) — it left #9, at \"epoch 1, step "
          "3 of 1562: loading a batch\" for 0 s; rank 0 (g1) waits in #10");
  }
  SECTION("four ranks on two nodes, the culprit among them") {
    std::string wait = "epoch 1, step 3 of 50: backward and the gradient allreduce";
    auto v = decide_by_collectives(
        {said(0, "g1", line(0, wait, 57, kGrad, 56, kStart)),
         said(1, "g1", line(1, "epoch 1, step 3 of 50: loading a batch", 56, kStart, 56, kStart)),
         said(2, "g2", line(2, wait, 57, kGrad, 56, kStart)), said(3, "g2", line(3, wait, 57, kGrad, 56, kStart))});
    REQUIRE(v);
    CHECK(v->text ==
          "rank 1 (g1) never entered collective #57 backward with the Reducer's gradient all_reduce — it "
          "left #56, at \"epoch 1, step 3 of 50: loading a batch\" for 31 s; ranks 0, 2, 3 (g1, g2) wait in #57");
  }
  SECTION("on a GPU the others' hosts went on past the collective (NCCL's wait does not block the host)") {
    std::string went = "epoch 1, step 3 of 50: backward and the gradient allreduce";
    auto v =
        decide_by_collectives({said(0, "g1", line(0, went, 57, "all_reduce (gradients)", 57, "all_reduce (gradients)")),
                               said(1, "g1", line(1, "epoch 1, step 3 of 50: loading a batch", 56, kStart, 56, kStart)),
                               said(2, "g2", line(2, went, 57, "all_reduce (gradients)", 56, kStart))});
    REQUIRE(v);
    CHECK(v->kind == CulpritKind::Named);
    CHECK(v->text ==
          "rank 1 (g1) never entered collective #57 all_reduce (gradients) — it left #56, at \"epoch 1, step "
          "3 of 50: loading a batch\" for 31 s; rank 2 (g2) waits in #57; rank 0 (g1) entered #57 and went on "
          "(on a GPU it runs on after the host has left it)");
  }
  SECTION("stuck inside an earlier collective that the others left") {
    auto v = decide_by_collectives({said(0, "g1", line(0, "a", 57, kGrad, 56, kStart)),
                                    said(1, "g2", line(1, "b", 56, kStart, 55, "all_reduce (epoch statistics)"))});
    REQUIRE(v);
    CHECK(v->kind == CulpritKind::Named);
    CHECK(v->text ==
          "rank 1 (g2) is still in collective #56 all_reduce (the step's start), which the others left — at "
          "\"b\" for 31 s; rank 0 (g1) waits in #57");
  }
  SECTION("one that never got to its first collective; a rank without counters is said") {
    RankEvidence silent;
    silent.task = 2, silent.rank = 2, silent.node = "g2";
    RankEvidence launcher;  // the launcher: a task, no rank, no counters
    launcher.task = 0, launcher.node = "g1";
    auto v = decide_by_collectives(
        {said(0, "g1", line(0, "a", 1, "all_reduce (model shape check)", 0, "none")),
         said(1, "g1", "ddp-train: rank 1 of 3: in the rendezvous for 40 s; collectives: none yet"), silent, launcher});
    REQUIRE(v);
    CHECK(v->text ==
          "rank 1 (g1) never entered collective #1 all_reduce (model shape check) — it has entered none, at "
          "\"in the rendezvous\" for 40 s; rank 0 (g1) waits in #1; rank 2 (g2) gave no counters");
  }
}

TEST_CASE("when the counters tell no rank apart, they say why", "[culprit]") {
  auto all = decide_by_collectives(
      {said(0, "g1", line(0, "a", 57, kGrad, 56, kStart)), said(1, "g2", line(1, "b", 57, kGrad, 56, kStart))});
  REQUIRE(all);
  CHECK(all->kind == CulpritKind::AllInCollective);
  CHECK(all->culprits.empty());
  CHECK(all->text ==
        "by the trainer's counters every rank is in collective #57 backward with the Reducer's gradient "
        "all_reduce: none is missing from it");

  auto some_left = decide_by_collectives(
      {said(0, "g1", line(0, "a", 57, kGrad, 56, kStart)), said(1, "g2", line(1, "b", 57, kGrad, 57, kGrad))});
  REQUIRE(some_left);
  CHECK(some_left->kind == CulpritKind::AllInCollective);
  CHECK(some_left->text ==
        "by the trainer's counters rank 0 (g1) is in collective #57 backward with the Reducer's "
        "gradient all_reduce, which rank 1 (g2) left: none is missing from it");

  auto none = decide_by_collectives(
      {said(0, "g1", line(0, "a", 56, kStart, 56, kStart)), said(1, "g2", line(1, "b", 56, kStart, 56, kStart))});
  REQUIRE(none);
  CHECK(none->kind == CulpritKind::NoneInCollective);
  CHECK(none->text == "by the trainer's counters no rank is in a collective: every rank left #56");

  auto before = decide_by_collectives(
      {said(0, "g1", "ddp-train: rank 0 of 2: in the rendezvous for 3 s; collectives: none yet"),
       said(1, "g2", "ddp-train: rank 1 of 2: in the rendezvous for 3 s; collectives: none yet")});
  REQUIRE(before);
  CHECK(before->kind == CulpritKind::NoneInCollective);
  CHECK(before->text == "by the trainer's counters no rank has entered a collective yet");

  // Fewer than two ranks counted: nothing to compare.
  CHECK_FALSE(decide_by_collectives({said(0, "g1", kReducerRank0)}));
  RankEvidence old = said(1, "g1", "ddp-train: rank 1: epoch 2, step 17 of 120: loading a batch for 612 s");
  CHECK_FALSE(decide_by_collectives({said(0, "g1", kReducerRank0), old}));
}

TEST_CASE("the counters decide over the stacks when they name a rank", "[culprit]") {
  auto with_stacks = [](RankEvidence e, const std::string& file) {
    for (auto& t : parse_stacks(recorded_stacks(file))) e.threads.push_back(t);
    return e;
  };
  SECTION("both name someone, not the same: the counters win") {
    // The stacks would name rank 0 (asleep), the counters rank 1.
    auto v = decide_culprit({with_stacks(said(0, "g1", kReducerRank0), "gloo-faulthandler-rank1-sleep.txt"),
                             with_stacks(said(1, "g1", kReducerRank1), "gloo-faulthandler-rank0-all_reduce.txt")});
    CHECK(v.kind == CulpritKind::Named);
    CHECK(v.evidence == CulpritEvidence::TrainerCounters);
    REQUIRE(v.culprits.size() == 1);
    CHECK(v.culprits[0].rank == 1);
    CHECK(v.text.rfind("rank 1 (g1) never entered collective #11 ", 0) == 0);
  }
  SECTION("the counters see every rank in one collective: a culprit by the stacks is given, then the counters") {
    auto v = decide_culprit(
        {with_stacks(said(0, "g1", line(0, "a", 57, kGrad, 56, kStart)), "gloo-faulthandler-rank0-all_reduce.txt"),
         with_stacks(said(1, "g1", line(1, "b", 57, kGrad, 56, kStart)), "gloo-faulthandler-rank1-sleep.txt")});
    CHECK(v.kind == CulpritKind::Named);
    CHECK(v.evidence == CulpritEvidence::Stacks);
    CHECK(v.text ==
          "rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end; rank 0 (g1) waits in all_reduce; "
          "by the trainer's counters every rank is in collective #57 backward with "
          "the Reducer's gradient all_reduce: none is missing from it");
  }
  SECTION("neither names a rank: the counters' account, then the stacks'") {
    auto v = decide_culprit(
        {said(0, "g1", line(0, "a", 57, kGrad, 56, kStart)), said(1, "g2", line(1, "b", 57, kGrad, 56, kStart))});
    CHECK(v.kind == CulpritKind::AllInCollective);
    CHECK(v.text ==
          "by the trainer's counters every rank is in collective #57 backward with the Reducer's gradient "
          "all_reduce: none is missing from it; no stacks to tell the ranks apart (no py-spy or gdb on g1; no "
          "py-spy or gdb on g2)");
  }
  SECTION("no counters (another program): the stacks alone") {
    RankEvidence a, b;
    a.task = 0, a.rank = 0, a.node = "g1", a.no_stacks_why = "no py-spy or gdb on g1";
    b.task = 1, b.rank = 1, b.node = "g2", b.no_stacks_why = "no py-spy or gdb on g2";
    auto v = decide_culprit({a, b});
    CHECK(v.evidence == CulpritEvidence::Stacks);
    CHECK(v.text == "no stacks to tell the ranks apart (no py-spy or gdb on g1; no py-spy or gdb on g2)");
  }
}

TEST_CASE("ddp-train's stacks files, without gdb or py-spy: the trainer's answers name the hung rank", "[culprit]") {
  // Recorded by tests/trainer/slurm_watchdog_names_hung_rank.sh (Slurm 22.05,
  // 2 nodes x 2 ranks, a launcher per node).
  std::vector<RankEvidence> ranks = read_stacks_file(recorded_stacks("ddp-train-hang-rank1-g1.txt"), "g1");
  for (auto& r : read_stacks_file(recorded_stacks("ddp-train-hang-rank1-g2.txt"), "g2")) ranks.push_back(r);
  REQUIRE(ranks.size() == 6);
  // The launchers (tasks 0 and 1) say nothing; each worker's answer went to its pid.
  CHECK(ranks[0].pid == 4005);
  CHECK_FALSE(ranks[0].rank);
  CHECK_FALSE(ranks[0].trainer);
  CHECK(ranks[1].pid == 4078);
  CHECK(ranks[1].rank == 0);
  REQUIRE(ranks[1].trainer);
  CHECK(ranks[1].trainer->entered.seq == 11);
  REQUIRE(ranks[2].trainer);
  CHECK(ranks[2].trainer->rank == 1);
  CHECK(ranks[2].trainer->left.seq == 10);
  CHECK(ranks[5].rank == 3);
  REQUIRE(ranks[5].trainer);
  CHECK(ranks[5].node == "g2");

  auto v = decide_culprit(ranks);
  CHECK(v.kind == CulpritKind::Named);
  CHECK(v.evidence == CulpritEvidence::TrainerCounters);
  REQUIRE(v.culprits.size() == 1);
  CHECK(v.culprits[0].rank == 1);
  CHECK(v.culprits[0].node == "g1");
  CHECK(v.text ==
        "rank 1 (g1) never entered collective #11 backward with the Reducer's gradient all_reduce — it left "
        "#10, at \"epoch 1, step 3 of 1562: loading a batch\" for 20 s; ranks 0, 2, 3 (g1, g2) wait in #11");
  // Without the answers the stacks alone could not tell.
  for (auto& r : ranks) r.trainer.reset();
  CHECK(decide_culprit(ranks).kind == CulpritKind::NoStacks);
  CHECK(describe_stack_sources(ranks) == "none: ranks 0, 1, 2, 3 and tasks 0, 1 (g1, g2)");
}
