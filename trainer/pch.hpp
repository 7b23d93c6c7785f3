#pragma once
// The heavy headers every trainer translation unit needs, precompiled once.
#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
