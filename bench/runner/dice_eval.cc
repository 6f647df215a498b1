#include "bench/runner/dice_eval.h"

#include <algorithm>

#include "bench/runner/trainer_setup.h"
#include "engine/core/error.h"
#include "engine/data/ct_dataset.h"
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

std::optional<SegmentationQuality> evaluate_segmentation(const models::ModelSpec& model,
                                                         const models::ModelConfig& trained_config,
                                                         const result::RunConfig& config,
                                                         const nn::Trainer& trained,
                                                         backend::Backend& be) {
  if (!trained_config.data || trained_config.data->held_out_cases().empty()) return std::nullopt;
  const std::unique_ptr<nn::Trainer> twin =
      inference_twin(model, trained_config, trained_config.batch, config, trained, be);
  nn::Trainer& net = *twin;
  const Tensor images = net.inputs()[0], labels = net.inputs()[1];
  DLBENCH_CHECK(images.shape().rank() == 4 && labels.shape().rank() == 3,
                "segmentation: the inference graph does not take (images, labels)");
  const std::int64_t batch = images.dim(0), side = images.dim(1), channels = images.dim(3);
  const std::int64_t pixels = side * side;
  const Tensor scores = net.logits();
  const std::int64_t classes = scores.shape()[scores.shape().rank() - 1];
  Buffer scores_f32(be.allocator(), sizeof(float) * static_cast<std::size_t>(scores.numel()));
  const Tensor scores_out(scores_f32.data(), scores.shape(), DType::kF32, be.device());
  std::vector<float> host_images(static_cast<std::size_t>(batch * pixels * channels));
  std::vector<std::int32_t> host_labels(static_cast<std::size_t>(batch * pixels));
  std::vector<float> host_scores(static_cast<std::size_t>(scores.numel()));
  SegmentationQuality q;
  q.class_dice.assign(static_cast<std::size_t>(classes - 1), 0.0);
  const auto held_out = trained_config.data->held_out_cases();
  for (const data::CtCase& c : held_out) {
    DLBENCH_CHECK(c.max_label < classes,
                  "segmentation: " + c.name + "'s labels exceed the classes");
    std::vector<ClassCounts> counts(static_cast<std::size_t>(classes));
    for (std::int64_t first = 0; first < c.slices; first += batch) {
      // The last batch is padded with the case's first slice; its pixels are not counted.
      const std::int64_t n = std::min(batch, c.slices - first);
      for (std::int64_t i = 0; i < batch; ++i)
        data::ct_slices_to_host(c, i < n ? first + i : 0, 1, channels,
                                host_images.data() + i * pixels * channels,
                                host_labels.data() + i * pixels);
      data::from_host_floats(be, host_images.data(), images);
      be.from_host(host_labels.data(), labels);
      net.infer_step();
      be.cast(scores, scores_out);
      be.to_host(scores_out, host_scores.data());
      count_classes(host_scores.data(), host_labels.data(), n * pixels, classes, counts);
    }
    for (std::int64_t k = 1; k < classes; ++k)
      q.class_dice[static_cast<std::size_t>(k - 1)] +=
          dice_of(counts[static_cast<std::size_t>(k)]) / static_cast<double>(held_out.size());
    q.slices += c.slices;
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
  result::add_metric(r, "quality/held_out_slices", static_cast<double>(q.slices), "slices",
                     "held-out slices segmented, each once");
}

}  // namespace dlbench::runner
