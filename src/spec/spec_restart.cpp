#include "spec/spec_restart.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "../../trainer/ddptrain_bounds.hpp"

namespace ddpctl {

// ddp-train's bounds on its options (ddptrain_bounds.hpp).
namespace bounds = ddptrain::bounds;

void read_requeue(MapReader& top, RunSpec& spec) {
  if (!top.has("requeue")) return;
  MapReader r(top.document(), top.node("requeue"), "requeue", top.diagnostics());
  if (!r.valid()) return;
  RequeueSettings q;
  q.where = top.where("requeue");
  static const std::vector<std::string> signals = {"USR1", "USR2", "TERM", "INT", "HUP", "URG"};
  if (auto v = r.string("signal", [](const std::string& s) -> std::optional<std::string> {
        std::string name = s.rfind("SIG", 0) == 0 ? s.substr(3) : s;
        for (const auto& sig : signals)
          if (sig == name) return std::nullopt;
        return "must be one of " + quoted_list(signals) + did_you_mean(name, signals);
      }))
    q.signal = v->rfind("SIG", 0) == 0 ? v->substr(3) : *v;
  if (auto v = r.integer("grace", 10, 65535)) {
    q.grace_s = static_cast<int>(*v);
    q.grace_where = r.where("grace");
  }
  if (auto v = r.integer("max_restarts", 0, 1000)) q.max_requeues = static_cast<int>(*v);
  r.finish();
  spec.requeue = q;
}

void read_restart(MapReader& top, RunSpec& spec) {
  if (!top.has("restart")) return;
  MapReader r(top.document(), top.node("restart"), "restart", top.diagnostics());
  if (!r.valid()) return;
  RestartSettings s;
  s.where = top.where("restart");
  bool ok = true;
  if (!r.has("in_job")) {
    top.diagnostics().error(s.where, "restart.in_job",
                            "required: how many times the training step may start again inside the job, e.g. 3");
    ok = false;
  } else if (auto v = r.integer("in_job", 1, 100)) {
    s.in_job = static_cast<int>(*v);
  } else {
    ok = false;
  }
  if (auto v = r.integer("spares", 0, 64)) s.spares = static_cast<int>(*v);
  else if (r.has("spares")) ok = false;
  if (auto v = r.integer("min_nodes", 1, 100000)) s.min_nodes = static_cast<int>(*v);
  else if (r.has("min_nodes")) ok = false;
  if (r.has("min_nodes")) spec.where["restart.min_nodes"] = r.where("min_nodes");
  r.finish();
  // The batch shell asks the job agent which node failed and what to do.
  if (!spec.monitor.enabled) {
    top.diagnostics().error(s.where, "restart",
                            "in-job restarts are decided by the job agent, which `monitor: false` turns off");
    ok = false;
  }
  // A race's winner restarts inside its job like any job: its claim is the
  // job's, for all its steps (docs/race.md); so does a grid's array task,
  // each in its own allocation.
  if (ok) spec.restart = s;
}

void check_restart(const RunSpec& spec, const Shape& shape, Diagnostics& diags) {
  if (!spec.restart) return;
  const RestartSettings& r = *spec.restart;
  // ddp-train without --resume starts from its first step on each restart:
  // the time before the failure would be spent again, silently.
  if (spec.uses_trainer && !spec.trainer_resume)
    diags.error(r.where, "restart",
                "a restarted step starts ddp-train again from its first step unless it resumes: set trainer.resume: "
                "true and trainer.checkpoint_dir");
  if (r.min_nodes == 0) return;
  Location where = spec.where_of("restart.min_nodes");
  if (r.min_nodes > shape.nodes) {
    diags.error(where, "restart.min_nodes",
                fmt::format("{} is more than the {} node(s) the step runs on (nodes: {}); a shrunk step runs on "
                            "fewer nodes, from min_nodes up to nodes",
                            r.min_nodes, shape.nodes, shape.nodes));
    return;
  }
  if (!spec.uses_trainer || r.min_nodes == shape.nodes) return;
  // The bundled trainer resumes at any world size; the global batch (and
  // with it the science) stays the same only where it is fixed.
  if (!spec.trainer_global_batch) {
    diags.error(where, "restart.min_nodes",
                fmt::format("a step shrunk to {} node(s) would train ddp-train with a smaller global batch (world size "
                            "x batch_size); set trainer.global_batch, and the accumulation follows the world size",
                            r.min_nodes));
    return;
  }
  long long global = *spec.trainer_global_batch;
  long long batch = spec.trainer_batch_size.value_or(bounds::kDefaultBatchSize);
  for (int n = r.min_nodes; n < shape.nodes; ++n) {
    long long world = static_cast<long long>(n) * shape.ranks_per_node();
    if (bounds::accumulation_for(global, world, batch) > 0) continue;
    diags.error(where, "restart.min_nodes",
                fmt::format("a step shrunk to {} node(s) ({} ranks x batch_size {} = {}) cannot keep trainer.global_batch "
                            "{}: {}; raise min_nodes or choose a global_batch that {} ranks divide",
                            n, world, batch, world * batch, global,
                            global % (world * batch) != 0 ? "not a multiple"
                                                          : fmt::format("more than {} micro-steps", bounds::kGradAccum.max),
                            world));
    return;
  }
}

}  // namespace ddpctl
