// `ddpctl sweep` of a `sweep:` list: which shapes --only picks, decided
// before anything is asked of Slurm or written.
#include "catch.hpp"

#include "helpers.hpp"
#include "sweep/sweep.hpp"

using namespace ddpctl;

namespace {

ResolvedRun three_shapes() {
  ResolvedRun r;
  for (const char* label : {"1x1", "1x2", "2x1"}) {
    ResolvedShape s;
    s.label = label;
    r.shapes.push_back(s);
  }
  return r;
}

std::vector<std::string> labels(const std::vector<const ResolvedShape*>& shapes) {
  std::vector<std::string> out;
  for (const ResolvedShape* s : shapes) out.push_back(s->label);
  return out;
}

}  // namespace

TEST_CASE("sweep --only picks shapes by label in the spec's order, none given picks every shape") {
  ResolvedRun r = three_shapes();
  CHECK(labels(chosen_shapes(r, {})) == std::vector<std::string>{"1x1", "1x2", "2x1"});
  CHECK(labels(chosen_shapes(r, {"2x1", "1x1"})) == std::vector<std::string>{"1x1", "2x1"});
  CHECK(chosen_shapes(r, {"1x2"}).front() == &r.shapes[1]);
}

TEST_CASE("sweep --only of a label that is no shape: refused, naming the shapes there are") {
  ResolvedRun r = three_shapes();
  std::string err = test::user_error_of([&] { chosen_shapes(r, {"1x1", "biggest-one"}); });
  CHECK_THAT(err, Catch::Contains("--only") && Catch::Contains("no sweep shape labelled 'biggest-one'; shapes: 1x1, 1x2, 2x1"));
}
