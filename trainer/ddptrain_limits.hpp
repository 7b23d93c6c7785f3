#pragma once
// The values ddp-train accepts for the options a run spec sets: one
// definition, read by ddp-train's own parser (options.cpp) and by ddpctl's
// spec checks (src/spec_sections.cpp), so that a value ddpctl accepts never
// fails at start-up, after the queue wait. Header-only, no dependencies.
#include <cmath>
#include <limits>

namespace ddptrain::limits {

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
inline constexpr IntRange kSeed{0, 4294967295LL};

inline constexpr NumberRange kLr{0.0, 1e6, true};  // positive
inline constexpr NumberRange kMomentum{0.0, 1.0, false};
inline constexpr NumberRange kWeightDecay{0.0, 1.0, false};
inline constexpr NumberRange kGamma{0.0, 1.0, false};

}  // namespace ddptrain::limits
