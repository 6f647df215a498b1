// The CT reader behind `dlbench run unet --data`: NIfTI volumes read through libnifti2 with their
// scaling, KiTS19-style case folders cut into slices and split into training and held-out cases,
// the slices served into a graph's inputs; each kind of bad file or folder refused with a
// one-line usage error (exit 2) naming it.
#include <nifti2_io.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/ct_dataset.h"
#include "engine/data/nifti_volume.h"
#include "tests/support/data_file.h"
#include "tests/support/isolated_home.h"
#include "tests/support/nifti_file.h"

namespace dlbench::data {
namespace {

using testing::write_ct_case;
using testing::write_nifti;

// The message of the usage error `read()` throws, checked to be one line naming `path`.
template <class Read>
std::string refusal(const std::string& path, Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << path;
  return {};
}

// Stored int16 times the header's slope plus its intercept; i the fastest axis; .nii and .nii.gz.
TEST(CtDataTest, NiftiVolumesReadWithTheirScaling) {
  const std::vector<float> stored = {0, 1, 2, 3, 4, 5, -6, 7, 8, 9, 10, 11};
  for (const char* name : {"scaled.nii.gz", "scaled.nii"}) {
    const Volume v = read_nifti(write_nifti(name, {2, 3, 2}, stored, DT_INT16, 2.0, -10.0));
    EXPECT_EQ(v.dims, (std::array<std::int64_t, 3>{2, 3, 2}));
    ASSERT_EQ(v.values.size(), stored.size());
    for (std::size_t i = 0; i < stored.size(); ++i) EXPECT_EQ(v.values[i], stored[i] * 2 - 10);
  }
  const Volume plain = read_nifti(write_nifti("plain.nii", {3, 1, 1}, {1.5f, -2, 3}, DT_FLOAT32));
  EXPECT_EQ(plain.values, (std::vector<float>{1.5f, -2, 3}));
}

TEST(CtDataTest, MalformedVolumesAreRefusedNamingTheFile) {
  const std::string noise = testing::write_data_file("noise.nii.gz", std::string(4000, 'x'));
  refusal(noise, [&] { read_nifti(noise); });
  const std::string missing = testing::isolated_home() + "/missing.nii.gz";
  refusal(missing, [&] { read_nifti(missing); });
  // A volume cut short: its header promises more voxels than follow.
  const std::string whole =
      write_nifti("whole.nii", {16, 16, 16}, std::vector<float>(4096, 1.0f), DT_FLOAT32);
  std::filesystem::resize_file(whole, std::filesystem::file_size(whole) / 2);
  refusal(whole, [&] { read_nifti(whole); });
}

// KiTS19 stores [slices, side, side]: 3 slices of 8x8, each the same disc of kidney around a
// tumour; Hounsfield values are clipped to the training window.
TEST(CtDataTest, ACaseIsCutIntoSquareSlicesAcrossItsOddAxis) {
  const std::string folder = write_ct_case("one", "case_00000", 3, 8);
  const CtCase c =
      read_ct_case("case_00000", folder + "/imaging.nii.gz", folder + "/segmentation.nii.gz");
  EXPECT_EQ(c.slices, 3);
  EXPECT_EQ(c.side, 8);
  EXPECT_EQ(c.max_label, 2);
  ASSERT_EQ(c.labels.size(), 3u * 64u);
  for (std::size_t i = 0; i < 64; ++i) {  // every slice alike
    EXPECT_EQ(c.labels[i], c.labels[64 + i]);
    EXPECT_EQ(c.hu[i], c.labels[i] == 2 ? 50 : c.labels[i] == 1 ? 200 : -79) << i;  // -100 clipped
  }
  EXPECT_EQ(c.labels[0], 0);
  EXPECT_EQ(c.labels[3 * 8 + 4], 2);  // the middle
}

TEST(CtDataTest, BadCasesAreRefusedNamingTheFile) {
  const std::string folder = write_ct_case("bad", "case_00000", 3, 8);
  const std::string image = folder + "/imaging.nii.gz";
  const std::string short_labels =
      write_nifti("bad/short.nii.gz", {3, 8, 7}, std::vector<float>(168, 0.0f), DT_UINT8);
  EXPECT_NE(refusal(short_labels, [&] { read_ct_case("c", image, short_labels); }).find("3x8x7"),
            std::string::npos);
  std::vector<float> labels(192, 0.0f);
  labels[5] = 0.5f;
  const std::string fractional = write_nifti("bad/half.nii.gz", {3, 8, 8}, labels, DT_FLOAT32);
  refusal(fractional, [&] { read_ct_case("c", image, fractional); });
  const std::string oblong =
      write_nifti("bad/oblong.nii.gz", {2, 3, 4}, std::vector<float>(24, 0.0f), DT_INT16);
  refusal(oblong, [&] { read_ct_case("c", oblong, oblong); });
}

// Four cases, one without a segmentation (skipped): the last of the three labelled ones is held
// out; the rest train.
TEST(CtDataTest, AFolderOfCasesHoldsOutItsLastFifth) {
  for (const char* name : {"case_00000", "case_00001", "case_00002"})
    write_ct_case("kits", name, 2, 16);
  write_ct_case("kits", "case_00003", 2, 16, false);
  const std::string root = testing::isolated_home() + "/kits";
  const auto data = read_ct_data(root);
  const auto held = data->held_out_cases();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].name, "case_00002");
  const std::string text = data->describe();
  for (const char* part : {"4 slices of 16x16 from 2 cases train", "2 slices of 1 case held out",
                           "1 case without a segmentation skipped"})
    EXPECT_NE(text.find(part), std::string::npos) << text;
  // One case alone: everything trains.
  EXPECT_TRUE(read_ct_data(root + "/case_00000")->held_out_cases().empty());
}

TEST(CtDataTest, BadFoldersAreRefusedNamingThem) {
  const std::string empty = testing::isolated_home() + "/empty";
  std::filesystem::create_directories(empty);
  refusal(empty, [&] { read_ct_data(empty); });
  const std::string file = testing::write_data_file("not-a-folder", "x");
  refusal(file, [&] { read_ct_data(file); });
  write_ct_case("mixed", "case_a", 2, 16);
  write_ct_case("mixed", "case_b", 2, 8);
  const std::string mixed = testing::isolated_home() + "/mixed";
  EXPECT_NE(refusal(mixed, [&] { read_ct_data(mixed); }).find("case_b"), std::string::npos);
}

// The source writes normalized slices and their labels; a model of another size or fewer
// classes is refused.
TEST(CtDataTest, TheSourceServesNormalizedSlicesAndLabels) {
  write_ct_case("serve", "case_00000", 2, 8);
  const auto data = read_ct_data(testing::isolated_home() + "/serve/case_00000");
  auto be = backend::make_backend(Device::cpu());
  const std::vector<InputSpec> specs{
      {"images", {3, 8, 8, 1}, DType::kF32, scene_images(3), "images (NHWC)"},
      {"labels", {3, 8, 8}, DType::kI32, scene_labels(3), "a class per pixel"}};
  std::vector<float> images(3 * 64);
  std::vector<std::int32_t> labels(3 * 64);
  const std::vector<Tensor> inputs{Tensor(images.data(), {3, 8, 8, 1}, DType::kF32, Device::cpu()),
                                   Tensor(labels.data(), {3, 8, 8}, DType::kI32, Device::cpu())};
  data->source(specs, 7)->fill(*be, inputs);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const float hu = labels[i] == 2 ? 50.0f : labels[i] == 1 ? 200.0f : -79.0f;
    EXPECT_FLOAT_EQ(images[i], (hu - kHuMean) / kHuStd) << i;
  }
  EXPECT_EQ(labels[3 * 8 + 4], 2);
  std::vector<InputSpec> other = specs;
  other[0].shape = {3, 16, 16, 1};
  EXPECT_NE(refusal("serve", [&] { data->source(other, 7); }).find("input size 8"),
            std::string::npos);
  other = specs;
  other[1].values = scene_labels(2);
  EXPECT_NE(refusal("serve", [&] { data->source(other, 7); }).find("has class 2"),
            std::string::npos);
}

}  // namespace
}  // namespace dlbench::data
