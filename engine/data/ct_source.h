// What the CT sources (slices for unet, patches for unet3d) share: a seeded pass over their items
// in a shuffled order, a new one each pass (splitmix64_shuffle, as the ratings source serves its
// pairs), and a batch written sample by sample into host buffers, then onto the device.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/splitmix64.h"
#include "engine/data/ct_dataset.h"
#include "engine/data/data_source.h"
#include "engine/data/dataset_helpers.h"

namespace dlbench::data {

template <class Item>
class CtSource : public DataSource {
 public:
  void fill(backend::Backend& backend, std::span<const Tensor> inputs) override {
    const Tensor& images = inputs[images_];
    const Tensor& labels = inputs[labels_];
    const std::int64_t n = images.dim(0);
    const std::int64_t image_floats = images.numel() / n, label_count = labels.numel() / n;
    host_images_.resize(static_cast<std::size_t>(images.numel()));
    host_labels_.resize(static_cast<std::size_t>(labels.numel()));
    for (std::int64_t i = 0; i < n; ++i) {
      if (next_ == order_.size()) shuffle();
      write(order_[next_++], images, host_images_.data() + i * image_floats,
            host_labels_.data() + i * label_count);
    }
    from_host_floats(backend, host_images_.data(), images);
    backend.from_host(host_labels_.data(), labels);
  }

 protected:
  CtSource(std::shared_ptr<const CtData> data, std::size_t images, std::size_t labels,
           std::uint64_t seed, std::vector<Item> items)
      : data_(std::move(data)),
        state_(seed),
        images_(images),
        labels_(labels),
        order_(std::move(items)) {
    shuffle();
  }
  // Writes one sample of `item` shaped as one of `images`' samples: its image and its labels.
  virtual void write(const Item& item, const Tensor& images, float* image,
                     std::int32_t* labels) = 0;

  std::shared_ptr<const CtData> data_;
  std::uint64_t state_;  // the stream of the order, and of anything else the source draws

 private:
  void shuffle() {
    splitmix64_shuffle(order_, state_);
    next_ = 0;
  }

  std::size_t images_, labels_;
  std::vector<Item> order_;
  std::size_t next_ = 0;
  std::vector<float> host_images_;
  std::vector<std::int32_t> host_labels_;
};

}  // namespace dlbench::data
