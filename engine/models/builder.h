// Shape-aware helpers that models use to append layers: each one reads the input's shape,
// fills the op parameters and names the layer.
#pragma once

#include <string>
#include <vector>

#include "engine/nn/graph.h"

namespace dlbench::models {

using nn::Graph;
using nn::ValueId;

class Builder {
 public:
  explicit Builder(Graph& graph) : g_(graph) {}

  // The "images" input, NHWC in the graph's compute dtype, drawn by synthetic data from `values`.
  ValueId input(std::int64_t batch, std::int64_t height, std::int64_t width, std::int64_t channels,
                data::Distribution values = data::normal(0.0, 1.0));
  // The same for volumes: NDHWC [batch, depth, height, width, channels].
  ValueId volume_input(std::int64_t batch, std::int64_t depth, std::int64_t height,
                       std::int64_t width, std::int64_t channels, data::Distribution values);
  // The classifier's end: an i32 "labels" input [batch] of `classes` classes, the softmax
  // cross-entropy of the logits against it, and the logits marked as the inference result.
  void classifier_loss(ValueId logits, std::int64_t batch, std::int64_t classes);
  // A segmenter's end: an i32 "labels" input [n, h, w] (synthetic: the scenes of the images, see
  // data::scene_labels), soft Dice and per-pixel cross-entropy of the scores [n, h, w, classes]
  // against it, summed, and the scores marked as the inference result. Volumes: [n, d, h, w].
  // class_weights (one per class, or none) weigh the cross-entropy's pixels by their class.
  void segmentation_loss(ValueId scores, const std::vector<float>& class_weights = {});
  // U-Net's upsampling: a transposed convolution of a square (cubic) kernel at a stride, no
  // padding.
  ValueId conv_transpose(const std::string& name, ValueId x, std::int64_t out_channels, int kernel,
                         int stride);
  // Inputs joined along their last axis (NHWC: the channels).
  ValueId concat(const std::string& name, std::vector<ValueId> inputs);
  // A square kernel over NHWC, a cubic one over NDHWC.
  ValueId conv(const std::string& name, ValueId x, std::int64_t out_channels, int kernel,
               int stride, int pad, bool bias);
  ValueId instance_norm(const std::string& name, ValueId x);
  ValueId batch_norm(const std::string& name, ValueId x);
  ValueId relu(const std::string& name, ValueId x);
  // A square window over NHWC, a cubic one over NDHWC.
  ValueId max_pool(const std::string& name, ValueId x, int window, int stride, int pad);
  ValueId global_avg_pool(const std::string& name, ValueId x);
  ValueId add(const std::string& name, ValueId a, ValueId b);
  // init_stddev 0: Kaiming-normal weights.
  ValueId linear(const std::string& name, ValueId x, std::int64_t out_features,
                 float init_stddev = 0.0f);

  const Shape& shape(ValueId v) const { return g_.value(v).shape; }

 private:
  Graph& g_;
};

}  // namespace dlbench::models
