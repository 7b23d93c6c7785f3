#pragma once
// Generated at build time in a CUDA build of LibTorch, and absent from
// Debian's CPU libtorch-dev, whose c10/cuda headers include it. Used only by
// the compile-only check of the trainer's CUDA code (trainer/CMakeLists.txt,
// ddptrain_cuda_check); a real CUDA LibTorch brings its own.
#define C10_CUDA_BUILD_SHARED_LIBS
