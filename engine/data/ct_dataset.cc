#include "engine/data/ct_dataset.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/ct_patches.h"
#include "engine/data/ct_source.h"
#include "engine/data/dataset_helpers.h"

namespace dlbench::data {
namespace {

namespace fs = std::filesystem;

// The case's volume named `stem` (.nii.gz, else .nii); empty when it has neither.
std::string volume_in(const fs::path& folder, const std::string& stem) {
  for (const char* ext : {".nii.gz", ".nii"}) {
    const fs::path p = folder / (stem + ext);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

// "1 case", "3 cases".
std::string cases_text(std::size_t n) {
  return with_commas(static_cast<std::int64_t>(n)) + (n == 1 ? " case" : " cases");
}

// Every training slice once a pass (case, slice).
std::vector<std::pair<std::size_t, std::int64_t>> training_slices(const CtData& data) {
  std::vector<std::pair<std::size_t, std::int64_t>> out;
  const std::vector<CtCase>& cases = data.train_cases();
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (std::int64_t s = 0; s < cases[c].slices; ++s) out.emplace_back(c, s);
  return out;
}

class CtSliceSource final : public CtSource<std::pair<std::size_t, std::int64_t>> {
 public:
  CtSliceSource(std::shared_ptr<const CtData> data, std::size_t images, std::size_t labels,
                std::uint64_t seed)
      : CtSource(data, images, labels, seed, training_slices(*data)) {}
  std::string name() const override { return "ct"; }

 private:
  void write(const std::pair<std::size_t, std::int64_t>& slice, const Tensor& images, float* image,
             std::int32_t* labels) override {
    ct_slices_to_host(data_->train_cases()[slice.first], slice.second, 1, images.dim(3), image,
                      labels);
  }
};

}  // namespace

CtData::CtData(std::string path, std::vector<CtCase> train, std::vector<CtCase> held_out,
               std::int64_t unlabelled)
    : path_(std::move(path)),
      train_(std::move(train)),
      held_out_(std::move(held_out)),
      unlabelled_(unlabelled) {}

std::string CtData::describe() const {
  std::int64_t train_slices = 0, held_slices = 0;
  for (const CtCase& c : train_) train_slices += c.slices;
  for (const CtCase& c : held_out_) held_slices += c.slices;
  const std::int64_t side = train_.front().side;
  std::string out = "CT cases " + path_ + ": " + with_commas(train_slices) + " slices of " +
                    std::to_string(side) + "x" + std::to_string(side) + " from " +
                    cases_text(train_.size()) + " train, ";
  out += held_out_.empty() ? "none held out (one case)"
                           : with_commas(held_slices) + " slices of " +
                                 cases_text(held_out_.size()) + " held out for Dice";
  if (unlabelled_ > 0)
    out += "; " + cases_text(static_cast<std::size_t>(unlabelled_)) +
           " without a segmentation skipped";
  return out;
}

std::unique_ptr<DataSource> CtData::source(const std::vector<InputSpec>& inputs,
                                           std::uint64_t seed) const {
  // Volumes (rank-5 images) take patches of any size; slices must match the cases' side.
  const bool volumes = std::any_of(inputs.begin(), inputs.end(), [](const InputSpec& in) {
    return in.name == "images" && in.shape.rank() == 5;
  });
  const std::size_t images = input_index(inputs, "images", volumes ? 5 : 4, "CT data");
  const std::size_t labels = input_index(inputs, "labels", volumes ? 4 : 3, "CT data");
  const Shape& s = inputs[images].shape;
  const std::int64_t side = train_.front().side;
  if (!volumes && (s[1] != side || s[2] != side))
    throw Error(ErrorKind::kUsage, "the CT slices in " + path_ + " are " + std::to_string(side) +
                                       "x" + std::to_string(side) + " pixels; the model takes " +
                                       std::to_string(s[1]) + "x" + std::to_string(s[2]) +
                                       " (run it at input size " + std::to_string(side) + ")");
  const auto classes = static_cast<std::int64_t>(inputs[labels].values.b);
  for (const std::vector<CtCase>* cases : {&train_, &held_out_})
    for (const CtCase& c : *cases)
      if (c.max_label >= classes)
        throw Error(ErrorKind::kUsage, "the segmentation of " + c.name + " in " + path_ +
                                           " has class " + std::to_string(c.max_label) +
                                           "; the model has " + std::to_string(classes) +
                                           " classes (0 to " + std::to_string(classes - 1) + ")");
  if (volumes) return make_ct_patch_source(shared_from_this(), images, labels, seed);
  return std::make_unique<CtSliceSource>(shared_from_this(), images, labels, seed);
}

void ct_slices_to_host(const CtCase& c, std::int64_t first, std::int64_t n, std::int64_t channels,
                       float* images, std::int32_t* labels) {
  const std::int64_t pixels = c.side * c.side;
  const std::size_t from = static_cast<std::size_t>(first * pixels);
  for (std::int64_t i = 0; i < n * pixels; ++i) {
    const float v = normalized_hu(c.hu[from + static_cast<std::size_t>(i)]);
    for (std::int64_t k = 0; k < channels; ++k) images[i * channels + k] = v;
    labels[i] = c.labels[from + static_cast<std::size_t>(i)];
  }
}

std::shared_ptr<const Dataset> read_ct_data(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    throw Error(ErrorKind::kUsage,
                "cannot use " + path +
                    " as CT data: not a folder (a folder of KiTS19-style case "
                    "folders, each with imaging.nii.gz and segmentation.nii.gz, is)");
  std::vector<fs::path> folders;
  if (!volume_in(path, "imaging").empty()) {
    folders.push_back(path);
  } else {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
      if (e.is_directory(ec) && !volume_in(e.path(), "imaging").empty())
        folders.push_back(e.path());
    std::sort(folders.begin(), folders.end());
  }
  std::vector<CtCase> cases;
  std::int64_t unlabelled = 0;
  for (const fs::path& folder : folders) {
    const std::string labels = volume_in(folder, "segmentation");
    if (labels.empty()) {
      ++unlabelled;
      continue;
    }
    cases.push_back(read_ct_case(folder.filename().string(), volume_in(folder, "imaging"), labels));
    if (cases.back().side != cases.front().side)
      throw Error(ErrorKind::kUsage, "cannot use " + path + " as CT data: " + cases.front().name +
                                         "'s slices are " + std::to_string(cases.front().side) +
                                         " pixels across, " + cases.back().name + "'s " +
                                         std::to_string(cases.back().side));
  }
  if (cases.empty())
    throw Error(ErrorKind::kUsage, "cannot use " + path +
                                       " as CT data: no case folder with imaging.nii(.gz) and "
                                       "segmentation.nii(.gz) in it");
  const std::size_t held = cases.size() < 2 ? 0 : std::max<std::size_t>(1, cases.size() / 5);
  std::vector<CtCase> held_out(std::make_move_iterator(cases.end() - held),
                               std::make_move_iterator(cases.end()));
  cases.resize(cases.size() - held);
  return std::make_shared<CtData>(path, std::move(cases), std::move(held_out), unlabelled);
}

}  // namespace dlbench::data
