// `plan`'s communication floor (explain/comm_floor.hpp, docs/report.md): the
// ring all-reduce formula, the bundled models' sizes, the profile's busbw
// as read (a figure of 0, below 0 or not a number named with its line),
// and the plan's table and note.
#include "catch.hpp"

#include "explain/comm_floor.hpp"
#include "helpers.hpp"
#include "report/report_collect.hpp"
#include "spec/cluster.hpp"

using namespace ddpctl;

TEST_CASE("comm floor: 2(n-1)/n x gradient bytes / busbw, and the bundled models' parameters") {
  // resnet50 for 1000 classes (fp32 gradients: 102 MB) over 16 ranks at 365 GB/s (NDR pairs).
  CHECK(comm_floor_s(4.0 * 25'549'352, 16, 365) == Approx(2.0 * 15 / 16 * 4 * 25'549'352 / 365e9));
  CHECK(comm_floor_s(4.0 * 25'549'352, 16, 365) == Approx(0.00052).epsilon(0.01));
  CHECK(comm_floor_s(1e9, 1, 100) == 0);  // one rank: nothing to reduce
  CHECK(comm_floor_s(1e9, 2, 100) == Approx(0.01));
  // smallcnn, 200 classes: the count ddp-train prints ("parameters identical
  // on all 2 ranks (36696 values)").
  CHECK(bundled_model_params("smallcnn", 200) == 36'696);
  // torchvision's resnet18/50 (11,689,512 / 25,557,032 at 1000 classes) with
  // the trainer's 3x3 stem instead of 7x7 (7,680 fewer weights): what ddp-train
  // --classes 1000 prints, 11681832 and 25549352 values.
  CHECK(bundled_model_params("resnet18", 1000) == 11'689'512 - 7'680);
  CHECK(bundled_model_params("resnet50", 1000) == 25'557'032 - 7'680);
  CHECK_FALSE(bundled_model_params("vit", 1000));
}

TEST_CASE("a profile's busbw_gbs is read per partition, and 0, below 0 or not a number is named with its line") {
  ClusterProfile p = parse_cluster_profile("clusters/site.yaml",
                                           "name: site\n"
                                           "gpu_request: gres\n"
                                           "partitions:\n"
                                           "  gpu: {nodes: 8, gpus_per_node: 8, busbw_gbs: 365}\n"
                                           "  cpu: {nodes: 4, busbw_gbs: 1.25}\n"
                                           "  old: {nodes: 2}\n");
  CHECK(*p.find_partition("gpu")->busbw_gbs == 365);
  CHECK(*p.find_partition("cpu")->busbw_gbs == 1.25);
  CHECK_FALSE(p.find_partition("old")->busbw_gbs);
  std::string err = test::user_error_of([] {
    parse_cluster_profile("clusters/x.yaml",
                          "name: x\n"
                          "gpu_request: gres\n"
                          "partitions:\n"
                          "  a: {busbw_gbs: 0}\n"
                          "  b: {busbw_gbs: -40}\n"
                          "  c: {busbw_gbs: fast}\n"
                          "  d: {busbw_gbs: .nan}\n");
  });
  INFO(err);
  CHECK_THAT(err, Catch::Matchers::Contains("clusters/x.yaml:4:") && Catch::Matchers::Contains("partitions.a.busbw_gbs") &&
                      Catch::Matchers::Contains("'0' is out of range: above 0") &&
                      Catch::Matchers::Contains("clusters/x.yaml:5:") && Catch::Matchers::Contains("'-40' is out of range: above 0") &&
                      Catch::Matchers::Contains("clusters/x.yaml:6:") && Catch::Matchers::Contains("'fast' is not a number") &&
                      Catch::Matchers::Contains("clusters/x.yaml:7:"));
}

TEST_CASE("plan: each shape's step and its comm floor beside it, and what the floor rests on") {
  PlanRequest req;
  req.spec = "job.yaml";
  Plan plan;
  plan.epochs = 2;
  plan.measured = 1;
  plan.base.label = "1x1";
  plan.base.run_id = "r";
  plan.base.img_per_s = 100;
  plan.base.images_per_epoch = 1000;
  plan.params = 36'696;
  plan.params_from = "the bundled smallcnn, 200 classes";
  Prediction one{{"1x1", 1, 1, 0, 1.25}, 1, "measured", 100, 20, 0.01, {}, 0.32, {}};
  Prediction two{{"2x1", 2, 1, 0, 1.25}, 0.9, "measured", 180, 11, 0.01, {}, 0.3556, {}};
  two.comm_floor_s = comm_floor_s(4.0 * 36'696, 2, 1.25);
  plan.shapes = {one, two};
  std::string text;
  for (const auto& l : plan_lines(req, plan)) text += l + "\n";
  INFO(text);
  CHECK_THAT(text, Catch::Matchers::Contains("STEP") && Catch::Matchers::Contains("COMM FLOOR"));
  // 2 x 1/2 x 146,784 bytes / 1.25 GB/s = 0.117 ms, 0.03% of a 356 ms step.
  CHECK_THAT(text, Catch::Matchers::Contains("0.117 ms (0%)") && Catch::Matchers::Contains("356 ms"));
  CHECK_THAT(text, Catch::Matchers::Contains("0.1 MB of fp32 gradients (36696 parameters, the bundled smallcnn"));
  plan.params.reset();
  plan.shapes[1].comm_floor_s.reset();
  text.clear();
  for (const auto& l : plan_lines(req, plan)) text += l + "\n";
  CHECK_THAT(text, Catch::Matchers::Contains("`plan --params N` gives its parameter count"));
  plan.params = 36'696;
  plan.shapes[1].shape.busbw_gbs.reset();
  text.clear();
  for (const auto& l : plan_lines(req, plan)) text += l + "\n";
  CHECK_THAT(text, Catch::Matchers::Contains("2x1: the profile has no busbw_gbs for its partition (ddpctl calibrate"));
}

namespace {

ReportRow comm_row(const std::string& label, int nodes, double step_s, std::optional<double> busbw = 1.0) {
  ReportRow r;
  r.label = label;
  r.run_id = "run-" + label;
  r.code = "abc123";
  r.nodes = nodes;
  r.ranks_per_node = 2;
  r.step_s = step_s;
  r.params = 11'000'000;
  r.batch_per_rank = 32;
  r.busbw_gbs = busbw;
  return r;
}

}  // namespace

TEST_CASE("report flags a multi-node run whose step exceeds the one-node run's by more than twice its floor",
          "[comm_floor]") {
  // 4 ranks, 44 MB of gradients at 1 GB/s: 2 x 3/4 x 44e6 / 1e9 = 0.066 s.
  std::vector<ReportRow> rows = {comm_row("1x2", 1, 0.10), comm_row("2x2", 2, 0.40), comm_row("2x2b", 2, 0.15)};
  compare_comm_floors(rows);
  CHECK_FALSE(rows[0].comm_s);  // one node: no fabric between nodes
  REQUIRE(rows[1].comm_floor_s);
  CHECK(*rows[1].comm_floor_s == Approx(0.066));
  CHECK(*rows[1].comm_s == Approx(0.30));
  CHECK_THAT(rows[1].comm_note,
             Catch::Matchers::StartsWith("2x2 (run-2x2): its step takes 0.4 s, 0.3 s more than 1x2's on one node: "
                                         "4.5x its communication floor (0.066 s: 11000000 parameters over 4 ranks at "
                                         "the 1 GB/s its fabric check judged by)"));
  CHECK(*rows[2].comm_s == Approx(0.05));  // within twice the floor: no note
  CHECK(rows[2].comm_note.empty());

  SECTION("no one-node row of the same code and batch per rank, or no figure: nothing to compare") {
    std::vector<ReportRow> other = {comm_row("1x2", 1, 0.10), comm_row("2x2", 2, 0.40), comm_row("2x2c", 2, 0.40, std::nullopt)};
    other[0].batch_per_rank = 64;
    compare_comm_floors(other);
    CHECK(other[1].comm_floor_s);
    CHECK_FALSE(other[1].comm_s);
    CHECK(other[1].comm_note.empty());
    CHECK_FALSE(other[2].comm_floor_s);
  }
}
