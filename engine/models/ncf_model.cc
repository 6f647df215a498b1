// NCF: Neural Collaborative Filtering's NeuMF (He et al., 2017), in the configuration of NVIDIA's
// and MLPerf's reference on MovieLens-1M: a GMF branch (the product of a user's and an item's
// 64-wide embeddings) beside an MLP branch (128-wide embeddings of each, concatenated, through
// 256 -> 256 -> 128 -> 64 with ReLUs), both concatenated into one logit per (user, item) pair,
// trained with binary cross-entropy: Adam on the dense layers, lazy Adam on the four tables'
// touched rows.
//
// Training, as the reference: a batch of B samples is P = ceil(B / 5) positive pairs and B - P
// negatives sampled on the device each step (kNegatives per positive, the last positive's share
// short where 5 does not divide B): a uniformly drawn item paired with a positive's user, label
// 0 (NegativeSampler). Inference scores the B pairs it is given.
//
// Data: synthetic positives, users uniform over their table, items skewed as real ratings are (a
// few items draw many pairs: Zipf, exponent kItemSkew, so the tables' gradients meet repeated
// rows); or a MovieLens ratings file, whose users and items then size the tables.
#include <memory>
#include <string>
#include <vector>

#include "engine/data/ratings_source.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/concat_columns.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/multiply.h"
#include "engine/nn/layers/negative_sampler.h"
#include "engine/nn/losses/sigmoid_binary_cross_entropy.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kUsers = 6040;  // MovieLens-1M
constexpr std::int64_t kItems = 3706;
constexpr std::int64_t kFactors = 64;                       // GMF width and the MLP's last layer
constexpr std::int64_t kMlpLayers[] = {256, 256, 128, 64};  // the first: both embeddings
constexpr float kEmbeddingStddev = 0.01f;                   // as the reference initializes them
// The most popular of the 3,706 items then draws about 0.8 % of the pairs and the median one a
// 43rd of that. Not fitted to MovieLens: the real reader's data will say how far off it is.
constexpr double kItemSkew = 0.5;
constexpr std::int64_t kNegatives = 4;  // sampled per positive in training

nn::Graph build(const ModelConfig& config) {
  const std::int64_t b = config.batch;
  const auto* movielens = dynamic_cast<const data::MovieLensData*>(config.data.get());
  DLBENCH_CHECK(config.data == nullptr || movielens != nullptr, "ncf reads MovieLens ratings only");
  const std::int64_t user_rows = movielens ? movielens->ratings().users : kUsers;
  const std::int64_t item_rows = movielens ? movielens->ratings().items : kItems;
  nn::Graph g(config.compute);
  Builder net(g);
  const bool train = config.mode == Mode::kTrain;
  const std::int64_t pairs = train ? (b + kNegatives) / (kNegatives + 1) : b;
  ValueId users = g.add_input({"users",
                               {pairs},
                               DType::kI32,
                               data::uniform_int(0, user_rows),
                               train ? "user ids of positive pairs" : "user ids"});
  ValueId items = g.add_input({"items",
                               {pairs},
                               DType::kI32,
                               data::zipf(0, item_rows, kItemSkew),
                               train ? "item ids of positive pairs" : "item ids"});
  ValueId labels = -1;
  if (train) {
    const std::vector<ValueId> batch =
        g.add_multi("negatives", std::make_unique<nn::NegativeSampler>(b, item_rows, config.seed),
                    {users, items});
    users = batch[0], items = batch[1], labels = batch[2];
  }
  auto lookup = [&](const char* name, ValueId ids, std::int64_t rows, std::int64_t width) {
    return g.add(name,
                 std::make_unique<nn::Embedding>(nn::EmbeddingShape{b, rows, width}, config.compute,
                                                 kEmbeddingStddev),
                 {ids});
  };
  const ValueId gmf = g.add("gmf", std::make_unique<nn::Multiply>(),
                            {lookup("gmf.user", users, user_rows, kFactors),
                             lookup("gmf.item", items, item_rows, kFactors)});
  ValueId mlp = g.add("mlp.concat", std::make_unique<nn::ConcatColumns>(2),
                      {lookup("mlp.user", users, user_rows, kMlpLayers[0] / 2),
                       lookup("mlp.item", items, item_rows, kMlpLayers[0] / 2)});
  for (int i = 1; i < 4; ++i) {
    const std::string name = "mlp.fc" + std::to_string(i);
    mlp = net.relu(name + ".relu", net.linear(name, mlp, kMlpLayers[i]));
  }
  const ValueId both = g.add("concat", std::make_unique<nn::ConcatColumns>(2), {gmf, mlp});
  const ValueId logits = net.linear("predict", both, 1);
  if (train) g.add("loss", std::make_unique<nn::SigmoidBinaryCrossEntropy>(), {logits, labels});
  g.mark_output(logits);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = "ncf";
  s.description =
      "NCF (NeuMF), factors 64, MLP 256-256-128-64, tables of MovieLens-1M's size or of the "
      "ratings read";
  s.unit = SampleUnit::kPairs;
  s.default_train_batch = 256;  // the published evaluation's; NVIDIA's reference runs 1,048,576
  s.default_infer_batch = 100;
  s.size = {"input size", "", 0, {}};
  s.default_optimizer.kind = nn::OptimizerConfig::Kind::kAdam;
  s.default_optimizer.sparse_kind = nn::OptimizerConfig::Kind::kSparseAdam;
  s.read_data = data::read_movielens_data;
  s.data_format = "MovieLens ratings (ratings.dat lines: UserID::MovieID::Rating::Timestamp)";
  s.build = build;
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
