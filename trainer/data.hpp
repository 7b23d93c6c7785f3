#pragma once
// Datasets (TinyImageNet's layout, a generic ImageFolder, synthetic), JPEG
// decoding with libturbojpeg, augmentation, rank sharding and a loader whose
// threads prefetch batches in order.
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pch.hpp"
#include "options.hpp"

namespace ddptrain {

struct Sample {
  std::string path;
  int64_t label = 0;
};

struct DataSource {
  bool synthetic = false;
  int classes = 0;
  int image_size = 64;
  long synthetic_size = 0;
  std::vector<Sample> train, val;
  std::string layout;  // "tinyimagenet", "imagefolder" or "synthetic"
  size_t train_size() const { return synthetic ? static_cast<size_t>(synthetic_size) : train.size(); }
  size_t val_size() const { return synthetic ? static_cast<size_t>(synthetic_size / 8) : val.size(); }
};

// Reads the folder layout; errors name the folder or file that is wrong.
DataSource open_data(const Options& o);

// A decoded, resized image as float [3,H,W] in [0,1]; errors name the file.
torch::Tensor load_jpeg(const std::string& path, int image_size);

struct Batch {
  torch::Tensor images, labels;
  std::vector<size_t> indices;  // which samples, for --trace-samples
};

// One epoch of one rank's batches, in order, built by `workers` threads.
class Loader {
 public:
  Loader(const DataSource& src, bool train, std::vector<size_t> indices, int batch_size, int workers, long seed,
         int epoch, bool drop_last, bool pin_memory = false);
  ~Loader();
  std::optional<Batch> next();
  size_t size() const { return batches_.size(); }

 private:
  Batch build(size_t b) const;
  void work();

  const DataSource& src_;
  bool train_, pin_;
  long seed_;
  int epoch_;
  std::vector<std::vector<size_t>> batches_;
  size_t next_build_ = 0, next_take_ = 0, window_;
  std::map<size_t, Batch> ready_;
  std::string error_;
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};

// The epoch's sample order: one permutation of [0, size) that depends only
// on seed and epoch, never on the world size, so that a checkpoint's offset
// into it means the same samples on any number of ranks. Our own Fisher-Yates
// over std::mt19937_64 (whose output the standard fixes), not torch's RNG or
// std::shuffle, whose results differ between library versions.
std::vector<size_t> epoch_permutation(size_t size, long seed, int epoch);

// This rank's shard of the epoch once `offset` samples of its permutation are
// trained on: the rest, perm[offset:], cut to a multiple of world x
// batch_size (the tail is dropped so every rank gets as many full batches),
// then strided: rank r takes rest[r], rest[r + world], ... So micro-batch k of
// every rank together is rest[k*world*batch_size, (k+1)*world*batch_size), and
// after k micro-batches the samples consumed are exactly that prefix, whatever
// the world size.
std::vector<size_t> train_shard(size_t size, int world, int rank, long seed, int epoch, size_t offset,
                                int batch_size);
// Validation: every sample exactly once across ranks.
std::vector<size_t> val_shard(size_t size, int world, int rank);

}  // namespace ddptrain
