#pragma once
// Debian's libtorch-dev 1.13 ships c10d/reducer.hpp, which includes this
// header, but not the header itself (distributed autograd is not packaged).
// The Reducer only names these types (a GradCallback alias and a pointer to a
// context it never dereferences without distributed autograd), so declaring
// them is enough.
#include <functional>
#include <memory>

#include <ATen/core/Tensor.h>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};

using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
