// Synthetic data: Zipf-distributed ids (NCF's items) are in range, the same for a seed on every
// machine, and as skewed as asked; the source writes them into an i32 input. Segmentation's blob
// scenes: labels with structure, and images that show them.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/blobs.h"
#include "engine/data/synthetic.h"

namespace dlbench::data {
namespace {

std::vector<std::int64_t> counts(const std::vector<std::int32_t>& ids, std::int64_t low,
                                 std::int64_t high) {
  std::vector<std::int64_t> n(static_cast<std::size_t>(high - low), 0);
  for (std::int32_t id : ids) {
    EXPECT_GE(id, low);
    EXPECT_LT(id, high);
    if (id >= low && id < high) ++n[static_cast<std::size_t>(id - low)];
  }
  return n;
}

// With exponent 1 the k-th value is drawn 1/k as often as the first: 200,000 draws put the
// first three at 2:1 and 3:1 within a few percent, and the last of ten at 10:1.
TEST(SyntheticTest, ZipfIdsFallWithTheirRank) {
  const std::vector<std::int32_t> ids = zipf_ids(zipf(5, 15, 1.0), 200'000, 3);
  const std::vector<std::int64_t> n = counts(ids, 5, 15);
  const double first = static_cast<double>(n[0]);
  EXPECT_NEAR(first / static_cast<double>(n[1]), 2.0, 0.1);
  EXPECT_NEAR(first / static_cast<double>(n[2]), 3.0, 0.15);
  EXPECT_NEAR(first / static_cast<double>(n[9]), 10.0, 0.6);
  for (std::size_t k = 1; k < n.size(); ++k) EXPECT_LT(n[k], n[k - 1]) << k;
}

// Exponent 0 is uniform; one value is always that value.
TEST(SyntheticTest, ZipfWithoutSkewIsUniform) {
  const std::vector<std::int64_t> n = counts(zipf_ids(zipf(0, 4, 0.0), 40'000, 9), 0, 4);
  for (std::int64_t c : n) EXPECT_NEAR(static_cast<double>(c), 10'000.0, 300.0);
  for (std::int32_t id : zipf_ids(zipf(7, 8, 2.0), 100, 1)) EXPECT_EQ(id, 7);
}

// A seed gives one sequence (the draws use no standard-library distribution); another seed
// gives another. The six ids were checked against a separate Python rendering of the same
// splitmix64 stream and CDF inversion.
TEST(SyntheticTest, ZipfIdsArePinnedBySeed) {
  const Distribution d = zipf(0, 3706, 0.5);
  EXPECT_EQ(zipf_ids(d, 1000, 42), zipf_ids(d, 1000, 42));
  EXPECT_NE(zipf_ids(d, 1000, 42), zipf_ids(d, 1000, 43));
  EXPECT_EQ(zipf_ids(d, 6, 42), (std::vector<std::int32_t>{2054, 106, 305, 458, 8, 2803}));
  EXPECT_THROW(zipf_ids(uniform_int(0, 4), 10, 1), Error);
  EXPECT_THROW(zipf_ids(zipf(4, 4, 1.0), 10, 1), Error);
}

// The source draws input k with seed + k: a Zipf input holds exactly zipf_ids(seed + k).
TEST(SyntheticTest, TheSourceWritesZipfIdsIntoAnI32Input) {
  auto be = backend::make_backend(Device::cpu());
  const std::vector<InputSpec> specs{{"users", {8}, DType::kI32, uniform_int(0, 10), "user ids"},
                                     {"items", {64}, DType::kI32, zipf(0, 100, 0.8), "item ids"}};
  std::vector<std::int32_t> users(8), items(64);
  const std::vector<Tensor> inputs{Tensor(users.data(), {8}, DType::kI32, Device::cpu()),
                                   Tensor(items.data(), {64}, DType::kI32, Device::cpu())};
  SyntheticSource(specs, 20).fill(*be, inputs);
  EXPECT_EQ(items, zipf_ids(specs[1].values, 64, 21));
  // Zipf values are ids: an f32 input cannot take them.
  std::vector<float> floats(4);
  const std::vector<InputSpec> bad{{"x", {4}, DType::kF32, zipf(0, 10, 1.0), "not ids"}};
  EXPECT_THROW(
      SyntheticSource(bad, 1).fill(
          *be, std::vector<Tensor>{Tensor(floats.data(), {4}, DType::kF32, Device::cpu())}),
      Error);
}

// Every sample has an organ (class 1), the background stays the largest class, lesions (class
// 2) appear in some samples of eight and only where an organ could hold them, and a seed pins
// the scenes.
TEST(SyntheticTest, BlobLabelsAreNestedEllipsesOnABackground) {
  const std::int64_t n = 8, h = 64, w = 48;
  const std::vector<std::int32_t> labels = blob_labels(n, h, w, 3, 11);
  EXPECT_EQ(labels, blob_labels(n, h, w, 3, 11));
  EXPECT_NE(labels, blob_labels(n, h, w, 3, 12));
  int with_lesion = 0;
  for (std::int64_t s = 0; s < n; ++s) {
    std::vector<std::int64_t> count(3, 0);
    for (std::int64_t i = s * h * w; i < (s + 1) * h * w; ++i) {
      ASSERT_GE(labels[i], 0);
      ASSERT_LT(labels[i], 3);
      ++count[labels[i]];
    }
    EXPECT_GT(count[1] + count[2], 0) << "sample " << s;
    EXPECT_GT(count[0], count[1] + count[2]) << "sample " << s;
    EXPECT_LT(count[2], count[1] + count[2]) << "a lesion larger than its organ, sample " << s;
    with_lesion += count[2] > 0;
  }
  EXPECT_GT(with_lesion, 0);
  EXPECT_LT(with_lesion, n);
}

// Volumes hold ellipsoids, not a stack of unrelated slices: every volume has an organ, no organ
// reaches every depth (its z radius is at most a fifth of the depth), and the source fills a
// rank-4 label input [n, d, h, w] with these volumes.
TEST(SyntheticTest, BlobVolumesAreEllipsoids) {
  const std::int64_t n = 4, d = 20, h = 24, w = 16;
  const std::vector<std::int32_t> labels = blob_volume_labels(n, d, h, w, 3, 5);
  EXPECT_EQ(labels, blob_volume_labels(n, d, h, w, 3, 5));
  for (std::int64_t s = 0; s < n; ++s) {
    int slices_with_organ = 0;
    for (std::int64_t z = 0; z < d; ++z) {
      bool organ = false;
      for (std::int64_t i = 0; i < h * w; ++i) organ |= labels[(s * d + z) * h * w + i] > 0;
      slices_with_organ += organ;
    }
    EXPECT_GT(slices_with_organ, 0) << "volume " << s;
    EXPECT_LT(slices_with_organ, d) << "volume " << s;
  }
  auto be = backend::make_backend(Device::cpu());
  std::vector<std::int32_t> filled(labels.size());
  SyntheticSource source({{"labels", {n, d, h, w}, DType::kI32, scene_labels(3), "classes"}}, 5);
  source.fill(*be,
              std::vector<Tensor>{Tensor(filled.data(), {n, d, h, w}, DType::kI32, Device::cpu())});
  EXPECT_EQ(filled, labels);
}

// The source draws labels and images of the same scenes: each class's pixels average its
// intensity (class - 1 for three classes; noise 0.5), in every channel.
TEST(SyntheticTest, BlobImagesShowTheirLabels) {
  auto be = backend::make_backend(Device::cpu());
  const std::int64_t n = 4, h = 32, w = 32, channels = 2;
  std::vector<std::int32_t> labels(static_cast<std::size_t>(n * h * w));
  std::vector<float> images(labels.size() * channels);
  SyntheticSource source({{"images", {n, h, w, channels}, DType::kF32, scene_images(3), "images"},
                          {"labels", {n, h, w}, DType::kI32, scene_labels(3), "classes"}},
                         21);
  source.fill(*be, std::vector<Tensor>{
                       Tensor(images.data(), {n, h, w, channels}, DType::kF32, Device::cpu()),
                       Tensor(labels.data(), {n, h, w}, DType::kI32, Device::cpu())});
  EXPECT_EQ(labels, blob_labels(n, h, w, 3, 21));
  std::vector<double> sum(3, 0.0), count(3, 0.0);
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::int64_t c = 0; c < channels; ++c) {
      sum[labels[i]] += images[i * channels + c];
      count[labels[i]] += 1;
    }
  for (int k = 0; k < 3; ++k) {
    if (count[k] < 50) continue;  // too few pixels of the class to average
    EXPECT_NEAR(sum[k] / count[k], k - 1.0, 0.1) << "class " << k;
  }
  EXPECT_GT(count[1], 50);
}

}  // namespace
}  // namespace dlbench::data
