#include "bench/runner/dice_eval.h"

#include <algorithm>

#include "bench/runner/trainer_setup.h"
#include "engine/core/error.h"
#include "engine/data/ct_dataset.h"
#include "engine/data/ct_patches.h"
#include "engine/data/dataset_helpers.h"

namespace dlbench::runner {

double dice_of(const ClassCounts& c) {
  const std::int64_t total = c.predicted + c.truth;
  return total == 0 ? 1.0 : 2.0 * static_cast<double>(c.both) / static_cast<double>(total);
}

void count_classes(const float* scores, const std::int32_t* labels, std::int64_t pixels,
                   std::int64_t classes, std::vector<ClassCounts>& counts) {
  for (std::int64_t i = 0; i < pixels; ++i) {
    const float* row = scores + i * classes;
    const auto predicted = static_cast<std::int32_t>(std::max_element(row, row + classes) - row);
    ++counts[static_cast<std::size_t>(predicted)].predicted;
    ++counts[static_cast<std::size_t>(labels[i])].truth;
    if (predicted == labels[i]) ++counts[static_cast<std::size_t>(predicted)].both;
  }
}

namespace {

// The inference twin of a trained U-Net and host buffers for one batch: write the batch's images
// and labels into images()/labels(), segment() runs it and leaves f32 scores in scores().
class Segmenter {
 public:
  Segmenter(std::unique_ptr<nn::Trainer> net, backend::Backend& be)
      : net_(std::move(net)),
        be_(be),
        scores_f32_(be.allocator(),
                    sizeof(float) * static_cast<std::size_t>(net_->logits().numel())) {
    const Tensor images = net_->inputs()[0], labels = net_->inputs()[1];
    DLBENCH_CHECK((images.shape().rank() == 4 || images.shape().rank() == 5) &&
                      labels.shape().rank() == images.shape().rank() - 1,
                  "segmentation: the inference graph does not take (images, labels)");
    image_shape_ = images.shape();
    const Shape scores = net_->logits().shape();
    classes_ = scores[scores.rank() - 1];
    host_images_.resize(static_cast<std::size_t>(images.numel()));
    host_labels_.resize(static_cast<std::size_t>(labels.numel()));
    host_scores_.resize(static_cast<std::size_t>(net_->logits().numel()));
  }
  const Shape& image_shape() const { return image_shape_; }
  std::int64_t classes() const { return classes_; }
  float* images() { return host_images_.data(); }
  std::int32_t* labels() { return host_labels_.data(); }
  const float* scores() const { return host_scores_.data(); }
  void segment() {
    data::from_host_floats(be_, host_images_.data(), net_->inputs()[0]);
    be_.from_host(host_labels_.data(), net_->inputs()[1]);
    net_->infer_step();
    const Tensor scores = net_->logits();
    const Tensor out(scores_f32_.data(), scores.shape(), DType::kF32, be_.device());
    be_.cast(scores, out);
    be_.to_host(out, host_scores_.data());
  }

 private:
  std::unique_ptr<nn::Trainer> net_;
  backend::Backend& be_;
  Buffer scores_f32_;
  Shape image_shape_;
  std::int64_t classes_ = 0;
  std::vector<float> host_images_;
  std::vector<std::int32_t> host_labels_;
  std::vector<float> host_scores_;
};

// Every slice of the case, `batch` at a time; the last batch is padded with the case's first
// slice, whose pixels are not counted.
void count_slices(Segmenter& s, const data::CtCase& c, std::vector<ClassCounts>& counts) {
  const Shape& shape = s.image_shape();
  const std::int64_t batch = shape[0], channels = shape[3], pixels = shape[1] * shape[2];
  for (std::int64_t first = 0; first < c.slices; first += batch) {
    const std::int64_t n = std::min(batch, c.slices - first);
    for (std::int64_t i = 0; i < batch; ++i)
      data::ct_slices_to_host(c, i < n ? first + i : 0, 1, channels,
                              s.images() + i * pixels * channels, s.labels() + i * pixels);
    s.segment();
    count_classes(s.scores(), s.labels(), n * pixels, s.classes(), counts);
  }
}

// The case tiled by patches of the model's size (data::tile_case), `batch` at a time, each voxel
// counted once, in the tile that owns it; returns the tiles segmented.
std::int64_t count_patches(Segmenter& s, const data::CtCase& c, std::vector<ClassCounts>& counts) {
  const Shape& shape = s.image_shape();
  const std::int64_t batch = shape[0], channels = shape[4], classes = s.classes();
  const data::Box extent = {shape[1], shape[2], shape[3]};
  const data::Box size = {c.slices, c.side, c.side};
  const std::int64_t voxels = extent[0] * extent[1] * extent[2];
  std::vector<data::Box> owned;
  const std::vector<data::Box> tiles = data::tile_case(c, extent, &owned);
  std::vector<float> kept_scores;
  std::vector<std::int32_t> kept_labels;
  for (std::size_t first = 0; first < tiles.size(); first += static_cast<std::size_t>(batch)) {
    const std::size_t n = std::min(static_cast<std::size_t>(batch), tiles.size() - first);
    for (std::size_t i = 0; i < static_cast<std::size_t>(batch); ++i)  // padded with the first
      data::ct_patch_to_host(c, tiles[i < n ? first + i : 0], extent, channels,
                             s.images() + static_cast<std::int64_t>(i) * voxels * channels,
                             s.labels() + static_cast<std::int64_t>(i) * voxels);
    s.segment();
    kept_scores.clear(), kept_labels.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const data::Box& o = tiles[first + i];
      const data::Box& own = owned[first + i];
      std::int64_t v = static_cast<std::int64_t>(i) * voxels;
      for (std::int64_t z = o[0]; z < o[0] + extent[0]; ++z)
        for (std::int64_t y = o[1]; y < o[1] + extent[1]; ++y)
          for (std::int64_t x = o[2]; x < o[2] + extent[2]; ++x, ++v) {
            const bool counted = z >= own[0] && z < size[0] && y >= own[1] && y < size[1] &&
                                 x >= own[2] && x < size[2];
            if (!counted) continue;
            kept_scores.insert(kept_scores.end(), s.scores() + v * classes,
                               s.scores() + (v + 1) * classes);
            kept_labels.push_back(s.labels()[v]);
          }
    }
    count_classes(kept_scores.data(), kept_labels.data(),
                  static_cast<std::int64_t>(kept_labels.size()), classes, counts);
  }
  return static_cast<std::int64_t>(tiles.size());
}

}  // namespace

std::optional<SegmentationQuality> evaluate_segmentation(const models::ModelSpec& model,
                                                         const models::ModelConfig& trained_config,
                                                         const result::RunConfig& config,
                                                         const nn::Trainer& trained,
                                                         backend::Backend& be) {
  if (!trained_config.data || trained_config.data->held_out_cases().empty()) return std::nullopt;
  Segmenter s(inference_twin(model, trained_config, trained_config.batch, config, trained, be), be);
  const bool volumes = s.image_shape().rank() == 5;
  const std::int64_t classes = s.classes();
  SegmentationQuality q;
  q.class_dice.assign(static_cast<std::size_t>(classes - 1), 0.0);
  const auto held_out = trained_config.data->held_out_cases();
  for (const data::CtCase& c : held_out) {
    DLBENCH_CHECK(c.max_label < classes,
                  "segmentation: " + c.name + "'s labels exceed the classes");
    std::vector<ClassCounts> counts(static_cast<std::size_t>(classes));
    if (volumes) {
      q.patches += count_patches(s, c, counts);
    } else {
      count_slices(s, c, counts);
      q.slices += c.slices;
    }
    for (std::int64_t k = 1; k < classes; ++k)
      q.class_dice[static_cast<std::size_t>(k - 1)] +=
          dice_of(counts[static_cast<std::size_t>(k)]) / static_cast<double>(held_out.size());
  }
  q.cases = static_cast<std::int64_t>(held_out.size());
  for (double d : q.class_dice) q.mean_dice += d / static_cast<double>(q.class_dice.size());
  return q;
}

void add_segmentation_metrics(result::RunResult& r, const SegmentationQuality& q) {
  const std::string over = ", mean over " + std::to_string(q.cases) +
                           (q.cases == 1 ? " held-out case" : " held-out cases");
  result::add_metric(r, "quality/dice_mean", q.mean_dice, "ratio",
                     "Dice of the segmentation, mean over the classes but the background" + over);
  for (std::size_t k = 0; k < q.class_dice.size(); ++k)
    result::add_metric(r, "quality/dice_class_" + std::to_string(k + 1), q.class_dice[k], "ratio",
                       "Dice of class " + std::to_string(k + 1) + over);
  if (q.patches > 0)
    result::add_metric(r, "quality/held_out_patches", static_cast<double>(q.patches), "patches",
                       "held-out patches segmented, tiling each case; each voxel counted once");
  else
    result::add_metric(r, "quality/held_out_slices", static_cast<double>(q.slices), "slices",
                       "held-out slices segmented, each once");
}

}  // namespace dlbench::runner
