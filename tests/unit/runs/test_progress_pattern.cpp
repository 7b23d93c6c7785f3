// Progress for programs ddpctl did not write: the presets against the lines
// those programs print, the spec's progress: section, and what status and
// report make of a log.
#include "catch.hpp"
#include <fstream>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/job_states.hpp"
#include "spec/progress_pattern.hpp"
#include "runs/progress_read.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

namespace {

PatternReading read(const std::string& preset, const std::vector<std::string>& lines) {
  auto p = progress_preset(preset);
  REQUIRE(p);
  return read_with_pattern(*p, lines);
}

std::string pattern_error_for(const std::string& yaml) {
  return test::user_error_of([&] {
    parse_run_spec("p.yaml", "name: d\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [prog]\n" + yaml);
  });
}

}  // namespace

TEST_CASE("the seed preset reads ddp-train's and the seed scripts' epoch lines") {
  auto r = read("seed", {"ddp-train: 4 rank(s), smallcnn on CPU/Gloo, tinyimagenet data",
                         "Epoch [1/3] LR: 0.050000 | Loss (train, val): 2.071, 2.040 | Accuracy (train, val): 14.06%, "
                         "18.75% | Throughput: 812.4 img/s",
                         "Epoch [2/3] LR: 0.050000 | Loss (train, val): 1.950, 1.901 | Accuracy (train, val): 22.40%, "
                         "25.00% | Throughput: 1020.0 img/s"});
  REQUIRE(r.matched);
  CHECK(r.epoch == 2);
  CHECK(r.epochs == 3);
  CHECK(r.loss == Approx(1.950));
  CHECK(r.samples_per_s == Approx(1020.0));
  REQUIRE(r.per_epoch.size() == 2);
  CHECK(r.per_epoch.at(1).img_per_s == Approx(812.4));
  CHECK(r.per_epoch.at(2).train_loss == Approx(1.950));
  auto p = progress_from(r, 200);  // 2 of 3 epochs in 200 s: 100 s to go
  REQUIRE(p);
  CHECK(format_progress(*p) == "epoch 2/3 [##########] 100% loss 1.95 1020 img/s ETA 1m40s");
}

TEST_CASE("the huggingface preset reads the Trainer's log dicts") {
  auto r = read("huggingface", {"{'loss': 2.3012, 'grad_norm': 1.84, 'learning_rate': 4.5e-05, 'epoch': 0.25}",
                                " 30%|###       | 30/100 [00:10<00:23,  3.01it/s]",
                                "{'loss': 1.8120, 'grad_norm': 1.2, 'learning_rate': 4e-05, 'epoch': 0.5}"});
  REQUIRE(r.matched);
  CHECK(r.epoch == Approx(0.5));
  CHECK(r.loss == Approx(1.812));
  auto p = progress_from(r, 60);
  REQUIRE(p);
  CHECK(format_progress(*p) == "epoch 1 [#####-----] 50% loss 1.812");  // no epoch count printed: no ETA

  ProgressSpec with_epochs = *progress_preset("huggingface");
  with_epochs.epochs = 2;
  p = progress_from(read_with_pattern(with_epochs, {"{'loss': 1.8120, 'learning_rate': 4e-05, 'epoch': 0.5}"}), 60);
  REQUIRE(p);
  CHECK(format_progress(*p) == "epoch 1/2 [#####-----] 50% loss 1.812 ETA 3m00s");
}

TEST_CASE("the huggingface preset reads transformers 5's quoted values, from a real Trainer log") {
  // transformers 5.12's Trainer on CPU (tests/unit/data/progress/README.md):
  // {'loss': '4.338', 'grad_norm': '1.149', 'learning_rate': '3.125e-06', 'epoch': '2'}
  auto r = read("huggingface", tail_lines(test::source_dir() + "/tests/unit/data/progress/transformers-5.12-trainer.out"));
  REQUIRE(r.matched);
  CHECK(r.epoch == Approx(2));
  CHECK(r.loss == Approx(4.338));
  REQUIRE(r.per_epoch.size() == 2);
  CHECK(r.per_epoch.at(1).train_loss == Approx(4.328));  // the line of 'epoch': '1'
  auto half = read("huggingface", {"{'loss': '4.319', 'grad_norm': '1.061', 'learning_rate': '4.063e-05', 'epoch': '0.5'}"});
  CHECK(half.epoch == Approx(0.5));
  // The run's summary line is no progress line.
  CHECK_FALSE(read("huggingface", {"{'train_runtime': '2.055', 'train_samples_per_second': '62.28', "
                                   "'train_steps_per_second': '7.784', 'train_loss': '4.324', 'epoch': '2'}"})
                  .matched);
}

TEST_CASE("the lightning preset reads Lightning 2's bar over a loader of unknown length (N/?)") {
  auto r = read("lightning", tail_lines(test::source_dir() + "/tests/unit/data/progress/lightning-2-unsized-bar.out"));
  REQUIRE(r.matched);
  CHECK(r.epoch == 1);
  CHECK(r.step == 5);
  CHECK_FALSE(r.steps);
  CHECK(r.loss == Approx(14.90));
  CHECK(r.it_per_s == Approx(0.06));
  CHECK(read("lightning", {"Epoch 0: |          | 0/? [00:00<?, ?it/s] 141) "}).step == 0);
}

TEST_CASE("the lightning preset reads tqdm's bar, counting epochs from 0") {
  auto r = read("lightning",
                {"Epoch 0:  50%|█████     | 50/100 [00:05<00:05,  9.52it/s, v_num=0, train_loss=0.512]",
                 "Epoch 1:  20%|██        | 20/100 [00:02<00:08,  9.80it/s, v_num=0, train_loss=0.401]"});
  REQUIRE(r.matched);
  CHECK(r.epoch == 2);
  CHECK(r.step == 20);
  CHECK(r.steps == 100);
  CHECK(r.it_per_s == Approx(9.80));
  CHECK(r.loss == Approx(0.401));
  auto p = progress_from(r, 120);
  REQUIRE(p);
  CHECK(format_progress(*p) == "epoch 2 [##--------] 20/100 loss 0.401 9.80 it/s");
  // Slow steps print s/it, the first update ?it/s, and loss may be absent.
  r = read("lightning", {"Epoch 3:   1%|          | 1/100 [00:02<03:20,  2.50s/it]"});
  REQUIRE(r.matched);
  CHECK(r.epoch == 4);
  CHECK_FALSE(r.it_per_s);
  CHECK_FALSE(r.loss);
  CHECK(read("lightning", {"Epoch 0:   0%|          | 0/100 [00:00<?, ?it/s]"}).step == 0);
  CHECK_FALSE(read("lightning", {"Validation DataLoader 0: 100%|██████████| 10/10 [00:01<00:00,  9.1it/s]"}).matched);
}

TEST_CASE("a pattern of the user's own, over tqdm output separated by carriage returns") {
  ProgressSpec spec;
  spec.pattern = R"(step (?<step>\d+) of (?<steps>\d+).*?(?P<samples_per_s>[\d.]+) samples/s)";
  test::TempDir dir;
  std::ofstream(dir.path + "/log") << "starting\rstep 1 of 10 1.5 samples/s\rstep 4 of 10 3.5 samples/s\n";
  auto r = read_with_pattern(spec, tail_lines(dir.path + "/log"));
  CHECK(r.step == 4);
  CHECK(r.samples_per_s == Approx(3.5));
  CHECK(format_progress(*progress_from(r, 40)) == "epoch 1 [####------] 4/10 4 img/s");
}

TEST_CASE("bad patterns are refused with the reason") {
  std::string problem;
  CHECK_FALSE(compile_progress_pattern(R"((?<epoch>\d+) (?<los>[\d.]+))", &problem));
  CHECK(problem.find("names a group 'los' (did you mean 'loss'?); the groups ddpctl reads are epoch, epochs") !=
        std::string::npos);
  CHECK_FALSE(compile_progress_pattern(R"(loss (?<loss>[\d.]+))", &problem));
  CHECK(problem == "has neither an epoch nor a step group, so progress cannot be read from it");
  CHECK_FALSE(compile_progress_pattern(R"((?<epoch>\d+)(unclosed)", &problem));
  CHECK(problem.find("is not a regular expression ddpctl can use") != std::string::npos);
  CHECK_FALSE(compile_progress_pattern(R"((?<epoch>\d+) (?<epoch>\d+))", &problem));
  CHECK(problem == "names the group epoch twice");
  // (?< inside \Q...\E is text, not a group.
  auto quoted = compile_progress_pattern(R"(\Q(?<\E(?<epoch>\d+))", &problem);
  REQUIRE(quoted);
  RegexMatch m;
  REQUIRE(quoted->regex.search("(?<3", &m));
  CHECK(m.str(quoted->groups.at("epoch")) == "3");
  // Groups after plain ones, lookbehind-like syntax left alone, classes with parentheses.
  auto c = compile_progress_pattern(R"((a|b) [(] (?:x) (?<step>\d+))", &problem);
  REQUIRE(c);
  CHECK(c->groups.at("step") == 2);
}

TEST_CASE("the spec's progress: section, by preset or pattern, with file:line errors") {
  RunSpec s = parse_run_spec("p.yaml", "name: d\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [p]\n"
                                       "progress: lightning\n");
  REQUIRE(s.progress);
  CHECK(s.progress->preset == "lightning");
  CHECK(s.progress->epoch_base == 0);
  s = parse_run_spec("p.yaml", "name: d\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [p]\n"
                               "progress: {preset: huggingface, epochs: 3, file: batch}\n");
  REQUIRE(s.progress);
  CHECK(s.progress->epochs == 3);
  CHECK(s.progress->file == "batch");
  CHECK(s.progress->pattern == progress_preset("huggingface")->pattern);

  CHECK(pattern_error_for("progress: lightnin\n") ==
        "p.yaml:6:11: progress: 'lightnin' is not a bundled pattern; the presets are 'seed', 'huggingface' or "
        "'lightning' (did you mean 'lightning'?) (or write pattern: with named groups)");
  CHECK(pattern_error_for("progress: {pattern: 'loss (?<loss>[0-9.]+)'}\n")
            .find("p.yaml:6:21: progress.pattern: 'loss (?<loss>[0-9.]+)' has neither an epoch nor a step group") != std::string::npos);
  CHECK(pattern_error_for("progress: {pattern: '(?<epoch>\\d+)', file: rank1}\n").find("progress.file: 'rank1' must be 'rank0'") !=
        std::string::npos);
  CHECK(pattern_error_for("progress: {preset: seed, pattern: '(?<epoch>\\d+)'}\n")
            .find("progress.pattern: set either preset: (a bundled pattern) or pattern: (your own), not both") !=
        std::string::npos);
  CHECK(pattern_error_for("progress: {epochs: 3}\n").find("progress.pattern: required: set pattern:") != std::string::npos);
  CHECK(pattern_error_for("progress: {pattern: '(?<epoch>\\d+)', epochz: 3}\n").find("progress: unknown field 'epochz' (did you mean 'epochs'?)") !=
        std::string::npos);
}

TEST_CASE("status and report read the rank-0 log of the latest attempt, report every attempt") {
  test::TempDir dir;
  RunShape shape;
  shape.job_name = "job";
  shape.output_dir = dir.path;
  shape.nodes = 1;
  shape.ranks_per_node = 2;
  shape.progress = progress_preset("seed");
  std::ofstream(dir.path + "/job_7.restart0.0.out")
      << "Epoch [1/3] LR: 0.1 | Loss (train, val): 2.0, 2.0 | Accuracy (train, val): 1%, 1% | Throughput: 100.0 img/s\n"
         "Epoch [2/3] LR: 0.1 | Loss (train, val): 1.9, 1.9 | Accuracy (train, val): 1%, 1% | Throughput: 110.0 img/s\n";
  std::ofstream(dir.path + "/job_7.restart1.0.out")
      << "Epoch [2/3] LR: 0.1 | Loss (train, val): 1.8, 1.8 | Accuracy (train, val): 1%, 1% | Throughput: 120.0 img/s\n";
  CHECK(progress_log(shape, "7") == dir.path + "/job_7.restart1.0.out");
  Job job;
  job.id = "7";
  job.start_time = 1000;
  auto p = pattern_progress(shape, job, 1060);
  REQUIRE(p);
  CHECK(p->epoch == 2);
  CHECK(p->samples_per_s == Approx(120.0));
  CHECK(p->source == dir.path + "/job_7.restart1.0.out");
  std::string source;
  MetricsFile m = pattern_metrics(shape, "7", &source);
  REQUIRE(m.epochs.size() == 2);
  CHECK(m.epochs[0].img_per_s == Approx(100.0));
  CHECK(m.epochs[1].img_per_s == Approx(120.0));  // the requeued attempt's epoch 2 replaces the first's
  CHECK(m.epochs[1].world_size == 2);
  CHECK(source == dir.path + "/job_7.restart1.0.out");
  shape.progress.reset();
  CHECK_FALSE(pattern_progress(shape, job, 1060));
}

TEST_CASE("one long line in rank 0's log: status, report and the watchdog read on (std::regex crashed on it)") {
  // A line that starts like the seed preset's and goes on with a tensor dump:
  // std::regex's `.*?` recursed per character (45,000 passed, 55,000
  // overflowed the stack: SIGSEGV in status, report and `job watch`).
  std::string dump(55000, '0');
  for (size_t i = 1; i < dump.size(); i += 2) dump[i] = ',';
  std::string line = "Epoch [2/3] LR: 0.1 | tensor([" + dump + "]) | Loss (train, val): 1.5, 1.6 | Throughput: 99.5 img/s";
  auto r = read("seed", {line});
  REQUIRE(r.matched);
  CHECK(r.epoch == 2);
  CHECK(r.samples_per_s == Approx(99.5));
  // Longer still, and not matching: read through to the end.
  CHECK_FALSE(read("seed", {"Epoch [2/3] " + std::string(400000, 'x')}).matched);
  CHECK_FALSE(read("huggingface", {"{'loss': 1.0, " + std::string(400000, 'x')}).matched);
  CHECK(read("lightning", {"Epoch 0: " + std::string(400000, 'x') + "| 5/10 [00:01<00:01, 4.0it/s]"}).step == 5);

  // From the log file, as status reads it.
  test::TempDir dir;
  RunShape shape;
  shape.job_name = "job";
  shape.output_dir = dir.path;
  shape.progress = progress_preset("seed");
  std::ofstream(dir.path + "/job_8.restart0.0.out") << line << "\n";
  Job job;
  job.id = "8";
  job.start_time = 1000;
  auto p = pattern_progress(shape, job, 1060);
  REQUIRE(p);
  CHECK(p->epoch == 2);
}

TEST_CASE("a backtracking pattern over a short line ends (std::regex ran for minutes)") {
  ProgressSpec spec;
  spec.pattern = R"(Epoch (?<epoch>\d+) (a+)+$)";
  std::string problem;
  REQUIRE(compile_progress_pattern(spec.pattern, &problem));
  auto r = read_with_pattern(spec, {"Epoch 3 " + std::string(40, 'a') + "!"});  // 49 characters
  CHECK_FALSE(r.matched);
  CHECK(read_with_pattern(spec, {"Epoch 3 " + std::string(40, 'a')}).epoch == 3);
}

TEST_CASE("huge or deeply nested patterns are compiled or refused at the spec's line, never crash gen") {
  std::string problem;
  std::string huge = "Epoch (?<epoch>\\d+) " + std::string(90000, 'x');
  if (auto c = compile_progress_pattern(huge, &problem)) CHECK(c->groups.at("epoch") == 1);
  else CHECK_THAT(problem, Catch::Contains("is not a regular expression ddpctl can use"));
  std::string deep = "Epoch (?<epoch>\\d+)" + std::string(20000, '(') + "x" + std::string(20000, ')');
  if (auto c = compile_progress_pattern(deep, &problem)) CHECK(c->groups.at("epoch") == 1);
  else CHECK_THAT(problem, Catch::Contains("is not a regular expression ddpctl can use"));
  // Through the spec, as gen reads it: accepted, or an error at its line.
  for (const auto& pattern : {huge, deep}) {
    std::string err = pattern_error_for("progress: {pattern: '" + pattern + "'}\n");
    CHECK((err.empty() || err.rfind("p.yaml:6:21: progress.pattern:", 0) == 0));
  }
  // What RE2 cannot do is refused with its own words and the field.
  CHECK_THAT(pattern_error_for("progress: {pattern: '(?<epoch>\\d+)(?=x)'}\n"),
             Catch::Contains("p.yaml:6:21: progress.pattern: '(?<epoch>\\d+)(?=x)' is not a regular expression ddpctl "
                             "can use (RE2 syntax: no backreferences or lookaround): invalid perl operator: (?="));
  CHECK_THAT(pattern_error_for("progress: {pattern: '(?<epoch>\\d+) (x)\\1'}\n"),
             Catch::Contains("invalid escape sequence: \\1"));
}
