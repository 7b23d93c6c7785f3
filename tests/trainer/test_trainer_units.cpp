// The trainer's gradient engine and data sharding, with two ranks as two
// threads of this process (Gloo over loopback, an in-memory store).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <thread>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "amp.hpp"
#include "compat.hpp"
#include "data.hpp"
#include "dist.hpp"
#include "model.hpp"
#include "options.hpp"

// LibTorch built with glog (Debian's is) defines glog's CHECK, which aborts
// instead of recording a failure; Catch's must win in this file.
#undef CHECK
#include "catch.hpp"

using namespace ddptrain;

namespace {

torch::nn::Sequential make_net() {
  return torch::nn::Sequential(torch::nn::Linear(8, 16), torch::nn::ReLU(), torch::nn::Linear(16, 4));
}

void copy_params(torch::nn::Sequential& from, torch::nn::Sequential& to) {
  torch::NoGradGuard g;
  auto a = from->parameters(), b = to->parameters();
  for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
}

torch::Tensor flat(torch::nn::Sequential& net) {
  std::vector<torch::Tensor> v;
  for (auto& p : net->parameters()) v.push_back(p.detach().reshape({-1}));
  return torch::cat(v);
}

constexpr int kSteps = 5;

// Trains `net` on rank `rank`'s half of each global batch of 32, `accum`
// micro-batches per step, syncing with `kind`.
void train_rank(int rank, c10::intrusive_ptr<c10d::Store> store, torch::nn::Sequential net, const torch::Tensor& x,
                const torch::Tensor& y, const std::string& kind, int accum, const std::string& compress,
                bool* identical) {
  Dist d;
  d.env.rank = rank;
  d.env.world = 2;
  d.store = store;
  d.pg = compat::make_gloo(store, rank, 2, "", "127.0.0.1", std::chrono::seconds(30));
  auto sync = make_grad_sync(kind, d, net->parameters(), compress);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < kSteps; ++s) {
    for (auto& p : net->parameters())
      if (p.grad().defined()) p.mutable_grad().zero_();
    int micro_size = 16 / accum;
    for (int m = 0; m < accum; ++m) {
      auto xs = x.narrow(0, rank * 16 + m * micro_size, micro_size);
      auto ys = y.narrow(0, rank * 16 + m * micro_size, micro_size);
      bool last = m == accum - 1;
      sync->before_forward();
      auto loss = torch::nn::functional::cross_entropy(net->forward(xs), ys) / accum;
      sync->before_backward(last);
      loss.backward();
      sync->after_backward(last);
    }
    opt.step();
  }
  *identical = replicas_identical(d, flat(net));
}

void check_matches_single_process(const std::string& kind, int accum, const std::string& compress = "none",
                                  double tolerance = 1e-5) {
  torch::manual_seed(7);
  auto x = torch::randn({32, 8});
  auto y = torch::randint(0, 4, {32}, torch::kLong);
  auto reference = make_net(), r0 = make_net(), r1 = make_net();
  copy_params(reference, r0);
  copy_params(reference, r1);

  torch::optim::SGD opt(reference->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(reference->forward(x), y).backward();
    opt.step();
  }

  auto store = c10::make_intrusive<c10d::HashStore>();
  bool same0 = false, same1 = false;
  std::thread t0(train_rank, 0, store, r0, x, y, kind, accum, compress, &same0);
  std::thread t1(train_rank, 1, store, r1, x, y, kind, accum, compress, &same1);
  t0.join();
  t1.join();
  CHECK(same0);
  CHECK(same1);
  CHECK(torch::equal(flat(r0), flat(r1)));
  CHECK(torch::allclose(flat(r0), flat(reference), tolerance, tolerance / 10));
}

}  // namespace

TEST_CASE("Reducer sync: 2 ranks stay bitwise identical and match one process on the global batch") {
  check_matches_single_process("reducer", 1);
}

TEST_CASE("flat bucket sync: 2 ranks stay bitwise identical and match one process on the global batch") {
  check_matches_single_process("flat", 1);
}

TEST_CASE("gradient accumulation syncs only the last micro-step and still matches the global batch") {
  check_matches_single_process("reducer", 2);
  check_matches_single_process("flat", 4);
}

TEST_CASE("fp16 gradient compression keeps replicas identical and close to fp32, or is refused without fp16 Gloo") {
  Dist d;
  d.env.world = 1;
  d.store = c10::make_intrusive<c10d::HashStore>();
  d.pg = compat::make_gloo(d.store, 0, 1, "", "127.0.0.1", std::chrono::seconds(5));
  if (allreduces_half(d)) {  // Debian's 1.13
    check_matches_single_process("reducer", 1, "fp16", 1e-2);
    check_matches_single_process("flat", 1, "fp16", 1e-2);
  } else {  // Debian's 2.14: refused before training, with the way out
    auto params = torch::nn::Linear(2, 2)->parameters();
    for (const char* kind : {"reducer", "flat"})
      CHECK_THROWS_WITH(make_grad_sync(kind, d, params, "fp16"),
                        Catch::Contains("--compress fp16: this LibTorch's Gloo cannot allreduce fp16") &&
                            Catch::Contains("--compress none"));
  }
}

TEST_CASE("bf16 gradient compression is refused on Gloo, which cannot allreduce bf16") {
  Dist d;
  d.env.world = 1;
  d.store = c10::make_intrusive<c10d::HashStore>();
  d.pg = compat::make_gloo(d.store, 0, 1, "", "127.0.0.1", std::chrono::seconds(5));
  auto params = torch::nn::Linear(2, 2)->parameters();
  CHECK_THROWS_WITH(make_grad_sync("flat", d, params, "bf16"), Catch::Contains("--compress bf16 needs NCCL"));
  CHECK_THROWS_WITH(make_grad_sync("reducer", d, params, "bf16"), Catch::Contains("--compress bf16"));
}

TEST_CASE("the epoch's order is one permutation that depends only on seed and epoch") {
  auto p = epoch_permutation(1000, 42, 3);
  std::vector<size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == i);
  CHECK(epoch_permutation(1000, 42, 3) == p);
  CHECK(epoch_permutation(1000, 42, 4) != p);
  CHECK(epoch_permutation(1000, 43, 3) != p);
  // Pinned: a checkpoint's offset must mean the same samples with any
  // compiler, standard library or LibTorch, and after any refactoring.
  CHECK(epoch_permutation(10, 42, 0) == std::vector<size_t>{5, 9, 2, 3, 1, 7, 8, 0, 4, 6});
  CHECK(epoch_permutation(1, 7, 0) == std::vector<size_t>{0});
  CHECK(epoch_permutation(0, 7, 0).empty());
}

TEST_CASE("at offset 0 the shards of 1 to 4 ranks partition the truncated permutation") {
  const size_t size = 103;
  const int batch = 4;
  auto perm = epoch_permutation(size, 42, 1);
  for (int world = 1; world <= 4; ++world) {
    INFO("world " << world);
    size_t kept = size - size % static_cast<size_t>(world * batch);
    std::multiset<size_t> all;
    for (int rank = 0; rank < world; ++rank) {
      auto shard = train_shard(size, world, rank, 42, 1, 0, batch);
      CHECK(shard.size() == kept / static_cast<size_t>(world));
      all.insert(shard.begin(), shard.end());
    }
    CHECK(all == std::multiset<size_t>(perm.begin(), perm.begin() + static_cast<long>(kept)));
  }
  CHECK(train_shard(size, 2, 0, 42, 2, 0, batch) != train_shard(size, 2, 0, 42, 1, 0, batch));
  CHECK(train_shard(size, 2, 0, 42, 1, 0, batch) == train_shard(size, 2, 0, 42, 1, 0, batch));
}

TEST_CASE("the micro-batches taken are a prefix of the order, so 4 ranks can hand over to 2") {
  const size_t size = 256;
  const int batch = 8, k = 3;  // 4 ranks take 3 micro-batches each, then 2 ranks finish the epoch
  auto perm = epoch_permutation(size, 42, 0);
  std::multiset<size_t> seen, first_part;
  for (int rank = 0; rank < 4; ++rank) {
    auto shard = train_shard(size, 4, rank, 42, 0, 0, batch);
    first_part.insert(shard.begin(), shard.begin() + k * batch);
  }
  size_t offset = 4 * batch * k;
  CHECK(first_part == std::multiset<size_t>(perm.begin(), perm.begin() + static_cast<long>(offset)));
  seen = first_part;
  for (int rank = 0; rank < 2; ++rank) {
    auto shard = train_shard(size, 2, rank, 42, 0, offset, batch);
    CHECK(shard.size() == (size - offset) / 2);
    seen.insert(shard.begin(), shard.end());
  }
  std::set<size_t> distinct(seen.begin(), seen.end());
  CHECK(seen.size() == size);
  CHECK(distinct.size() == size);  // every index exactly once across the switch
  // Past the end of the epoch there is nothing left.
  CHECK(train_shard(size, 2, 0, 42, 0, size, batch).empty());
  CHECK(train_shard(size, 2, 0, 42, 0, size + 5, batch).empty());
}

TEST_CASE("a global batch sets the accumulation from the world size, or names the three numbers") {
  Options o;
  o.batch_size = 8;
  CHECK(grad_accum_for(o, 4) == 1);  // no --global-batch: --grad-accum
  o.global_batch = 32;
  CHECK(grad_accum_for(o, 4) == 1);
  CHECK(grad_accum_for(o, 2) == 2);
  CHECK(grad_accum_for(o, 1) == 4);
  CHECK_THROWS_WITH(grad_accum_for(o, 3),
                    Catch::Contains("--global-batch 32 is not a multiple of 3 ranks x --batch-size 8 = 24"));
  CHECK_THROWS_WITH(grad_accum_for(o, 8),
                    Catch::Contains("--global-batch 32 is not a multiple of 8 ranks x --batch-size 8 = 64"));
  o.global_batch = 8 * 2048;
  CHECK_THROWS_WITH(grad_accum_for(o, 1), Catch::Contains("needs 2048 micro-steps") && Catch::Contains("at most 1024"));
}

TEST_CASE("validation shards cover every sample once") {
  auto a = val_shard(7, 3, 0), b = val_shard(7, 3, 1), c = val_shard(7, 3, 2);
  CHECK(a.size() + b.size() + c.size() == 7);
}

TEST_CASE("an image that is not a JPEG is an error naming the file") {
  auto path = (std::filesystem::temp_directory_path() / "ddptrain-not-a.jpg").string();
  std::ofstream(path) << "not a jpeg";
  CHECK_THROWS_WITH(load_jpeg(path, 64), Catch::Contains("cannot decode " + path + " as JPEG"));
  std::filesystem::remove(path);
}

TEST_CASE("bad arguments name the flag") {
  std::vector<const char*> args = {"ddp-train", "--model", "resnet99"};
  CHECK_THROWS_WITH(parse_options(3, const_cast<char**>(args.data())), Catch::Contains("--model"));
  std::vector<const char*> data = {"ddp-train", "--data", "/nonexistent/tin"};
  CHECK_THROWS_WITH(parse_options(3, const_cast<char**>(data.data())), Catch::Contains("/nonexistent/tin is not a directory"));
  std::vector<const char*> resume = {"ddp-train", "--resume"};
  CHECK_THROWS_WITH(parse_options(2, const_cast<char**>(resume.data())), Catch::Contains("--resume needs --checkpoint-dir"));
  std::vector<const char*> both = {"ddp-train", "--global-batch", "64", "--grad-accum", "2"};
  CHECK_THROWS_WITH(parse_options(5, const_cast<char**>(both.data())),
                    Catch::Contains("--global-batch sets the accumulation itself") && Catch::Contains("--grad-accum"));
  std::vector<const char*> zero = {"ddp-train", "--global-batch", "0"};
  CHECK_THROWS_WITH(parse_options(3, const_cast<char**>(zero.data())), Catch::Contains("--global-batch"));
}

TEST_CASE("the loss scaler skips a step whose gradients overflowed, backs off, and grows after clean steps") {
  GradScaler scaler(true, torch::Device(torch::kCPU), /*init_scale=*/1024.0, /*growth=*/2.0, /*backoff=*/0.5,
                    /*interval=*/3);
  auto p = torch::ones({4}, torch::requires_grad());
  scaler.scale((p * 2).sum()).backward();  // grad 2 * 1024
  CHECK(p.grad()[0].item<float>() == 2048.0f);
  CHECK(scaler.unscale({p}));
  CHECK(p.grad()[0].item<float>() == 2.0f);
  scaler.update();
  CHECK(scaler.value() == 1024.0);

  p.mutable_grad().fill_(std::numeric_limits<float>::infinity());
  CHECK_FALSE(scaler.unscale({p}));
  scaler.update();
  CHECK(scaler.value() == 512.0);

  for (int i = 0; i < 2; ++i) {
    p.mutable_grad().fill_(1.0);
    CHECK(scaler.unscale({p}));
    scaler.update();
    CHECK(scaler.value() == 512.0);
  }
  p.mutable_grad().fill_(1.0);
  CHECK(scaler.unscale({p}));
  scaler.update();
  CHECK(scaler.value() == 1024.0);  // the third clean step in a row
}

TEST_CASE("a disabled loss scaler changes nothing") {
  GradScaler scaler(false, torch::Device(torch::kCPU));
  auto loss = torch::tensor({3.0f});
  CHECK(torch::equal(scaler.scale(loss), loss));
  auto p = torch::ones({2}, torch::requires_grad());
  p.mutable_grad() = torch::full({2}, std::numeric_limits<float>::quiet_NaN());
  CHECK(scaler.unscale({p}));
}

TEST_CASE("autocast runs a linear layer in bf16 inside the guard and fp32 outside") {
  torch::nn::Linear lin(8, 4);
  auto x = torch::randn({2, 8});
  {
    AutocastGuard guard(true, /*cuda=*/false, at::kBFloat16);
    CHECK(lin->forward(x).scalar_type() == at::kBFloat16);
  }
  CHECK(lin->forward(x).scalar_type() == at::kFloat);
  AutocastGuard off(false, false, at::kBFloat16);
  CHECK(lin->forward(x).scalar_type() == at::kFloat);
}

TEST_CASE("a model's forward FLOPs: smallcnn counted by hand, resnet18 at 32x32 as published") {
  // smallcnn, 32x32, 10 classes: 3->16 at 32x32, 16->32 at 16x16, 32->64 at
  // 8x8 (3x3 each), 64->10; 2 FLOPs a multiply-add.
  double smallcnn = 2.0 * (3 * 16 * 9 * 32 * 32 + 16 * 32 * 9 * 16 * 16 + 32 * 64 * 9 * 8 * 8 + 64 * 10);
  CHECK(forward_flops("smallcnn", 10, 32) == smallcnn);
  // ResNet-18 with a 3x3 stride-1 stem on CIFAR's 32x32: 0.56 G multiply-adds
  // (the figure published with such models, e.g. kuangliu/pytorch-cifar's).
  double r18 = forward_flops("resnet18", 10, 32) / 2;
  CHECK(r18 > 0.55e9);
  CHECK(r18 < 0.56e9);
  // Quadratic in the side; the classifier grows with the classes.
  CHECK(forward_flops("resnet50", 200, 64) > 3.9 * forward_flops("resnet50", 200, 32));
  CHECK(forward_flops("resnet18", 200, 64) - forward_flops("resnet18", 10, 64) == 2.0 * 512 * 190);
  CHECK_THROWS_WITH(forward_flops("vgg", 10, 32), Catch::Contains("unknown model vgg"));
}
