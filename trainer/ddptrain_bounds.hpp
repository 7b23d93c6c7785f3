#pragma once
// The values ddp-train accepts for the options a run spec sets: one
// definition, read by ddp-train's own parser (options.cpp) and by ddpctl's
// spec checks (src/spec/spec_launch.cpp, spec_restart.cpp), so that a value ddpctl accepts never
// fails at start-up, after the queue wait. Header-only, no dependencies.
#include <cmath>
#include <limits>

namespace ddptrain::bounds {

struct IntRange {
  long long min, max;
};

// A finite number in [min, max], or (min, max] when min_open.
struct NumberRange {
  double min, max;
  bool min_open;
  bool contains(double v) const { return std::isfinite(v) && (min_open ? v > min : v >= min) && v <= max; }
};

inline constexpr IntRange kEpochs{1, 100000};
inline constexpr IntRange kBatchSize{1, 65536};
inline constexpr IntRange kStepSize{1, 100000};
inline constexpr IntRange kWorkers{0, 256};
inline constexpr IntRange kGradAccum{1, 1024};
inline constexpr IntRange kGlobalBatch{1, 67108864};
inline constexpr IntRange kSeed{0, 4294967295LL};

inline constexpr NumberRange kLr{0.0, 1e6, true};  // positive
inline constexpr NumberRange kMomentum{0.0, 1.0, false};
inline constexpr NumberRange kWeightDecay{0.0, 1.0, false};
inline constexpr NumberRange kGamma{0.0, 1.0, false};

// ddp-train's --batch-size when none is given; ddpctl checks
// trainer.global_batch against it when a spec sets no batch_size.
inline constexpr int kDefaultBatchSize = 32;

// The micro-batches per optimizer step that --global-batch asks for on
// `world` ranks of `batch_size` samples: global_batch / (world x batch_size)
// when that is a whole number within kGradAccum, else 0. One rule for
// ddp-train (at start) and ddpctl (for every shape, before the queue wait).
constexpr long long accumulation_for(long long global_batch, long long world, long long batch_size) {
  long long micro_batch = world * batch_size;  // samples of one micro-step, all ranks together
  if (micro_batch <= 0 || global_batch % micro_batch != 0) return 0;
  long long accum = global_batch / micro_batch;
  return accum >= kGradAccum.min && accum <= kGradAccum.max ? accum : 0;
}

}  // namespace ddptrain::bounds
