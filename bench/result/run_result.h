// The result of one run: tagged metrics with units (nvbench style), the configuration, and the
// environment it ran in. The terminal, JSON, the store and the reports read this; none of them
// needs the engine to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result/layer_profile.h"
#include "bench/result/noise.h"
#include "bench/result/repeats.h"
#include "bench/result/replica_steps.h"
#include "bench/result/run_config.h"
#include "bench/result/step_stats.h"
#include "bench/telemetry/window.h"
#include "engine/core/shape.h"

namespace dlbench::result {

struct Metric {
  std::string tag;  // "throughput/samples_per_s"
  double value = 0;
  std::string unit;  // "samples/s"
  std::string description;
};

// How the replicas of a data-parallel run were laid out and whether they stayed in step.
struct DataParallel {
  int replicas = 1;
  std::string launch;        // "threads" or "mpi"
  std::string communicator;  // "nccl 2.28.3", "mpi (Open MPI v4.1.4)"
  std::string interconnect;  // NVLink/PCIe between the GPUs, from NVML
  std::int64_t global_batch = 0;
  std::int64_t buckets = 0;  // gradient all-reduce buckets per step
  // Every replica's weights hashed after the last step: all equal means they stayed in step.
  bool replicas_identical = false;
  std::vector<double> replica_seconds;  // each replica's measured wall time
  // Each replica's measured steps on one clock: which steps were slow, and who started them late.
  std::vector<ReplicaSteps> replica_steps;
  double replica_steps_origin_ms = 0;  // their start_ms 0 on this node's CLOCK_MONOTONIC
};

// One layer of the model as the engine built it (the runner copies the engine's summaries).
struct LayerRow {
  std::string name;  // "layer1.0.conv1"
  std::string kind;  // "conv2d"
  Shape output;      // the output value's shape, batch first
  std::int64_t parameters = 0;
  std::int64_t forward_macs = 0;
};

// A word of the data's vocabulary and the words whose trained vectors lie nearest it (cosine
// similarity, highest first): what a reader can judge a word-embedding run's learning by.
struct Neighbour {
  std::string word;
  double cosine = 0;
};
struct WordNeighbours {
  std::string word;
  std::vector<Neighbour> nearest;
};

// What a run's one size measures, from its sample unit: the side of its images or volumes in
// pixels or voxels, or the sequence length of a language or translation model in tokens. Runs
// stored before they named their unit ("" or "samples") were of images.
enum class InputSizeKind { kImageSide, kVolumeSide, kSequenceLength };
InputSizeKind input_size_kind(const std::string& sample_unit);

struct RunResult {
  RunConfig config;
  std::optional<DataParallel> data_parallel;  // set when replicas > 1
  std::string model_description;
  std::string data_description;         // what a run with a data file read (Dataset::describe)
  std::string sample_unit = "samples";  // what the throughput counts: "images", "tokens"
  std::string backend;                  // "cpu (oneDNN 2.6.3)"
  std::string graphs;                   // nn::Trainer::graph_status() after the measured steps
  // Each graph pass that ran and how many rewrites it made ("fuse_matmul_relu", 2).
  std::vector<std::pair<std::string, int>> passes;
  std::int64_t parameters = 0;
  double flops_per_sample = 0;  // 2 x MACs of what one step computes per sample
  int measured_steps = 0;       // 0 only when interrupted before the first: then no timing at all
  double measured_seconds = 0;  // wall time of the measured steps, device synchronized
  double throughput = 0;        // samples / measured_seconds (over all replicas)
  StepStats step;
  double first_loss = 0, last_loss = 0;  // train only
  int skipped_steps = 0;                 // fp16 loss scaling: steps with non-finite gradients
  float loss_scale = 1.0f;
  std::vector<Metric> metrics;             // everything above and more, tagged
  std::vector<LayerRow> layers;            // per layer: output shape, parameters, forward MACs
  std::vector<WordNeighbours> neighbours;  // trained on a text (ModelSpec::word_vectors)
  // Telemetry of the measured phase, when config.telemetry: its summary, every sample, and
  // the GPUs sampled.
  std::optional<telemetry::Recording> telemetry;
  nlohmann::json environment;  // dlbench info --json of the machine
  // Per-layer time of extra steps after the measured ones, when config.profile_steps > 0.
  std::optional<LayerProfile> layer_profile;
  // Peer runs: what the worker said of itself (framework, library versions, device); null for
  // native runs.
  nlohmann::json peer;
  // Empty when the run did all it was asked; else what stopped it and when, as one line:
  // "interrupted by SIGINT after 3 of 20 measured steps" (RunHooks::stop).
  std::string interrupted;
  // With --repeat N: every repeat's throughput; the fields above are the median repeat's.
  std::optional<Repeats> repeats;
};

nlohmann::json to_json(const RunResult& r);

void add_metric(RunResult& r, std::string tag, double value, std::string unit,
                std::string description);
// The metric of that tag, or null.
const Metric* find_metric(const RunResult& r, const std::string& tag);
// tokens/s of a model whose samples are sequences of a fixed padded length (BERT): samples/s
// x tokens_per_sample, padding included.
void add_padded_tokens_metric(RunResult& r, std::int64_t tokens_per_sample);
// A decoding run's (translation inference's) tokens/s and mean translation length, from the
// tokens its measured steps translated into ([EOS] included, padding not) and their sentences.
void add_decoding_metrics(RunResult& r, double translated_tokens, double sentences,
                          std::int64_t max_length);
// The metrics every run has, whoever ran it: throughput, step-time statistics, FLOPs per
// sample and achieved GFLOP/s. `measured` says what the throughput's time is.
void add_timing_metrics(RunResult& r, const std::string& measured,
                        const std::string& flops_counted);

}  // namespace dlbench::result
