// What the harness needs to know about a model without building it: its name and description,
// what one sample is, its default batches, the size it takes, its optimizer, and how to build
// its graph. Each model file fills one ModelSpec and registers it (registry.h); nothing else
// lists the models.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/run_modes.h"
#include "engine/data/dataset.h"
#include "engine/nn/decoding_graphs.h"
#include "engine/nn/graph.h"
#include "engine/nn/optim/optimizer.h"

namespace dlbench::models {

// What the throughput counts: images for the classifiers, (user, item) pairs for a
// recommender, tokens or sequences for language models.
enum class SampleUnit { kImages, kVolumes, kPairs, kTokens, kSequences, kSentences };
const char* to_string(SampleUnit unit);

// The one size a model is built at: the image side in pixels, a sequence length in tokens.
struct SizeOption {
  std::string what = "input size";
  std::string unit = "pixels";
  int default_value = 0;
  std::vector<int> allowed;  // empty: the model takes no size
};

struct ModelConfig {
  std::int64_t batch = 1;
  int size = 0;                 // 0: the spec's default
  int width_divisor = 1;        // > 1 shrinks every channel count (tests: full depth, small width)
  DType compute = DType::kF32;  // activations' dtype: compute_dtype() of the run's precision
  // What the graph will run: a model may build another graph for inference (NCF scores the pairs
  // it is given; training makes its batch from positives and sampled negatives).
  Mode mode = Mode::kTrain;
  std::uint64_t seed = 0;  // of the random streams drawn inside the graph (NCF's negatives)
  // A dataset read from a file (ModelSpec::read_data), which the model may size itself by;
  // null: synthetic data with the spec's published sizes.
  std::shared_ptr<const data::Dataset> data = nullptr;
  // One weight per class for the softmax cross-entropy (models with takes_class_weights);
  // empty: every class weighs 1.
  std::vector<float> class_weights = {};
};

struct ModelSpec {
  std::string name;         // what `dlbench run NAME` takes
  std::string description;  // one line, stored with each run; names no flag
  SampleUnit unit = SampleUnit::kImages;
  std::int64_t default_train_batch = 128;
  std::int64_t default_infer_batch = 64;
  SizeOption size;
  // What the model trains with (SGD with momentum unless it says otherwise); a run's learning
  // rate and momentum settings replace the ones here.
  nn::OptimizerConfig default_optimizer;
  // Builds the graph: its inputs (graph.input_specs()) say what data a step takes.
  std::function<nn::Graph(const ModelConfig&)> build;
  // A translation model's decoding graphs (nn/decoding_graphs.h) for a beam of `beam` hypotheses
  // per sentence (1: greedy): its inference decodes with them (nn::SequenceDecoder) rather than
  // running build's graph. Empty: the model does not decode.
  std::function<nn::DecodingGraphs(const ModelConfig&, int beam)> build_decoding;
  // Reads a data file of the model's format (what `data_format` names); empty: the model trains
  // on synthetic data only.
  std::function<std::shared_ptr<const data::Dataset>(const std::string& path)> read_data;
  std::string data_format;  // "MovieLens ratings (ratings.dat: UserID::MovieID::Rating::Timestamp)"
  // Whether its per-pixel cross-entropy takes ModelConfig::class_weights (the segmenters).
  bool takes_class_weights = false;
  // The parameter whose rows are the data's words' vectors (Dataset::vocabulary()), which a run on
  // a text shows the nearest neighbours in; empty: the model learns no word vectors.
  std::string word_vectors;
  // Samples one step processes; empty: the batch.
  std::function<std::int64_t(const ModelConfig&)> samples;
  // Tokens one sample holds, padding included, for a language model's tokens/s beside its
  // sequences/s; empty: the model counts no tokens.
  std::function<std::int64_t(const ModelConfig&)> tokens_per_sample;
};

std::int64_t samples_per_step(const ModelSpec& spec, const ModelConfig& config);
// What a run's throughput counts in a mode: the spec's unit, or the sentences a translation
// model's inference translates.
SampleUnit sample_unit(const ModelSpec& spec, Mode mode);

}  // namespace dlbench::models
