// dlbench run --data end to end on the CPU: NCF trains on a small MovieLens ratings file, sized
// by it, and says what it read; every way the file or the flag can be wrong is a one-line usage
// error (exit 2) that stores nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/json_text.h"
#include "tests/support/data_file.h"
#include "tests/support/isolated_home.h"
#include "tests/support/nifti_file.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;

using testing::write_data_file;

// 4 users, 6 movies, 12 ratings: each user's latest held out, 8 to train on.
std::string ratings_file() {
  std::string text;
  const int rows[][3] = {{1, 10, 100}, {1, 20, 200}, {1, 30, 300}, {2, 10, 50},
                         {2, 40, 60},  {2, 50, 70},  {3, 20, 10},  {3, 60, 20},
                         {3, 30, 30},  {4, 10, 5},   {4, 60, 6},   {4, 50, 7}};
  for (const auto& r : rows)
    text +=
        std::to_string(r[0]) + "::" + std::to_string(r[1]) + "::4::" + std::to_string(r[2]) + "\n";
  return write_data_file("ratings.dat", text);
}

TEST(DataCliTest, NcfTrainsOnARatingsFileSizedByIt) {
  const std::string path = ratings_file();
  const std::string json_path = testing::isolated_home() + "/ncf-data.json";
  auto r =
      dlbench("run ncf --device cpu --data " + path +
              " --batch 10 --steps 5 --warmup 1 --no-store --no-telemetry --json " + json_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Data              MovieLens ratings " + path +
                       ": 12 ratings of 6 items by 4 users; 8 train, 4 held out"),
            std::string::npos)
      << r.out;
  std::ifstream in(json_path);
  const json doc = json::parse(in);
  EXPECT_EQ(doc["config"]["data"], path);
  // Tables of 4 users and 6 items: (4 + 6) * (64 + 128) + the MLP and the logit.
  EXPECT_EQ(doc["parameters"], (4 + 6) * (64 + 128) + 106944 + 129);
  EXPECT_NE(doc["data_description"].get<std::string>().find("12 ratings"), std::string::npos);
}

// 60 users in three groups, each rating 10 of its group's 20 movies: what a user rates next is
// in its group, which NCF learns and item popularity (flat here) cannot tell.
std::string grouped_ratings_file() {
  std::string text;
  int timestamp = 1000;
  for (int user = 1; user <= 60; ++user)
    for (int k = 0; k < 10; ++k) {
      const int movie = (user - 1) % 3 * 20 + (user * 7 + 2 * k) % 20 + 1;
      text += std::to_string(user) + "::" + std::to_string(movie) +
              "::" + std::to_string(1 + k % 5) + "::" + std::to_string(++timestamp) + "\n";
    }
  return write_data_file("grouped.dat", text);
}

double metric(const json& doc, const std::string& tag) {
  for (const json& m : doc["metrics"])
    if (m["tag"] == tag) return m["value"].get<double>();
  ADD_FAILURE() << "no metric " << tag;
  return NAN;
}

// After training, each user's held-out movie is ranked among the ones the user never rated: the
// model beats the popularity baseline by far, and says so.
TEST(DataCliTest, NcfRanksHeldOutItemsAbovePopularity) {
  const std::string json_path = testing::isolated_home() + "/ncf-ranking.json";
  auto r =
      dlbench("run ncf --device cpu --data " + grouped_ratings_file() +
              " --batch 100 --steps 300 --warmup 1 --no-store --no-telemetry --json " + json_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Ranking           HR@10 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over 60 held-out items (popularity baseline: HR@10 "), std::string::npos)
      << r.out;
  std::ifstream in(json_path);
  const json doc = json::parse(in);
  const double hr = metric(doc, "quality/hr_at_10");
  const double baseline = metric(doc, "quality/popularity_hr_at_10");
  EXPECT_GT(hr, 0.6) << r.out;
  EXPECT_GT(hr, baseline + 0.3) << r.out;
  EXPECT_GT(metric(doc, "quality/ndcg_at_10"), metric(doc, "quality/popularity_ndcg_at_10"));
  EXPECT_EQ(metric(doc, "quality/ranked_lists"), 60);
}

// 120 words, w0 .. w119, in a round twenty times over, so each word's neighbours are its
// neighbours in the round.
std::string round_text() {
  std::string text;
  for (int pass = 0; pass < 20; ++pass) {
    for (int w = 0; w < 120; ++w) {
      const char word[] = {'w', char('a' + w / 26), char('a' + w % 26), ' ', '\0'};
      text += word;
    }
    text += "\n";
  }
  return write_data_file("round.txt", text);
}

TEST(DataCliTest, Word2VecTrainsOnATextSizedByItsVocabularyAndShowsNearestWords) {
  const std::string path = round_text();
  const std::string json_path = testing::isolated_home() + "/w2v-data.json";
  auto r =
      dlbench("run word2vec --device cpu --data " + path +
              " --batch 64 --steps 5 --warmup 1 --no-store --no-telemetry --json " + json_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Data              text corpus " + path +
                       ": 2,400 words; vocabulary 120 words (seen 5 times or more)"),
            std::string::npos)
      << r.out;
  // The words at ranks 50 and 100 of the vocabulary, with five neighbours each.
  EXPECT_NE(r.out.find("Nearest words     wby:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("                  wdw:"), std::string::npos) << r.out;
  std::ifstream in(json_path);
  const json doc = json::parse(in);
  EXPECT_EQ(doc["parameters"], 2 * 120 * 128);  // two tables of the text's 120 words
  // Words read per second beside pairs: each word yields 2 to 10 pairs (nothing here is
  // frequent enough to be subsampled).
  double pairs = 0, words = 0;
  for (const json& m : doc["metrics"]) {
    if (m["tag"] == "throughput/samples_per_s") pairs = m["value"];
    if (m["tag"] == "data/words_per_s") words = m["value"];
  }
  EXPECT_GT(words, pairs / 10) << doc["metrics"];
  EXPECT_LT(words, pairs / 2) << doc["metrics"];
  EXPECT_NE(r.out.find(" words/s: words of the text read"), std::string::npos) << r.out;
  ASSERT_EQ(doc["neighbours"].size(), 2u) << doc["neighbours"];
  EXPECT_EQ(doc["neighbours"][0]["word"], "wby");
  ASSERT_EQ(doc["neighbours"][0]["nearest"].size(), 5u);
  // The nearest first, the word itself not among them.
  double previous = 1.0 + 1e-9;
  for (const json& n : doc["neighbours"][0]["nearest"]) {
    EXPECT_NE(n["word"], "wby");
    EXPECT_LE(n["cosine"].get<double>(), previous) << doc["neighbours"];
    previous = n["cosine"].get<double>();
  }
}

TEST(DataCliTest, SyntheticRunsSayNothingOfData) {
  auto r =
      dlbench("run ncf --device cpu --batch 10 --steps 2 --warmup 1 --no-store --no-telemetry");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("Data  "), std::string::npos) << r.out;
}

// U-Net on three KiTS19-style cases of 32x32 slices: two train, the last is held out and
// segmented after the run, its Dice reported and stored.
TEST(DataCliTest, UNetTrainsOnCtCasesAndScoresTheHeldOutOne) {
  for (const char* name : {"case_00000", "case_00001", "case_00002"})
    testing::write_ct_case("kits-cli", name, 2, 32);
  const std::string root = testing::isolated_home() + "/kits-cli";
  const std::string json_path = testing::isolated_home() + "/unet-data.json";
  auto r = dlbench("run unet --device cpu --input 32 --batch 2 --steps 3 --warmup 1 --data " +
                   root + " --no-store --no-telemetry --json " + json_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CT cases " + root +
                       ": 4 slices of 32x32 from 2 cases train, 2 slices of "
                       "1 case held out for Dice"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("on 2 held-out slices"), std::string::npos) << r.out;
  std::ifstream in(json_path);
  const json doc = json::parse(in);
  bool dice = false;
  for (const json& m : doc["metrics"])
    if (m["tag"] == "quality/dice_mean") {
      dice = true;
      EXPECT_GE(m["value"].get<double>(), 0.0);
      EXPECT_LE(m["value"].get<double>(), 1.0);
    }
  EXPECT_TRUE(dice) << dump_json(doc["metrics"]);
}

// 3D U-Net on three cases of 3 slices of 32x32: patches of 32^3 (padded with air along the
// slices) train; the held-out case is tiled by one patch and scored.
TEST(DataCliTest, UNet3dTrainsOnPatchesOfCtCasesAndScoresTheHeldOutOne) {
  for (const char* name : {"case_00000", "case_00001", "case_00002"})
    testing::write_ct_case("kits3d-cli", name, 3, 32);
  const std::string root = testing::isolated_home() + "/kits3d-cli";
  auto r = dlbench("run unet3d --device cpu --input 32 --batch 1 --steps 2 --warmup 1 --data " +
                   root + " --no-store --no-telemetry");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6 slices of 32x32 from 2 cases train"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on 1 held-out patches"), std::string::npos) << r.out;
}

struct BadData {
  std::string args;
  std::string message;
};

std::string empty_folder() {
  const std::string path = testing::isolated_home() + "/ct-empty";
  std::filesystem::create_directories(path);
  return path;
}

// A case whose segmentation is not NIfTI.
std::string corrupt_ct_case() {
  const std::string folder = testing::write_ct_case("ct-corrupt", "case_0", 2, 32, false);
  std::ofstream(folder + "/segmentation.nii.gz") << "not a volume";
  return folder;
}

// The Transformer reads a parallel corpus of token ids, says what it read and counts the tokens
// it served (the full model scoring at the shortest length, to keep CI short; training's batches
// are the same rows).
TEST(DataCliTest, TheTransformerReadsSentencePairs) {
  std::string text;
  for (int k = 0; k < 20; ++k)
    text += std::to_string(10 + k) + " " + std::to_string(500 + k) + "\t" +
            std::to_string(900 + k) + "\n";
  const std::string pairs = write_data_file("pairs.ids", text);
  auto r = dlbench(
      "run transformer --device cpu --mode infer --input 32 --batch 2 --steps 2 "
      "--warmup 0 --no-store --no-telemetry --data " +
      pairs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* shown : {"sentence pairs", "20 pairs, 40 source and 20 target tokens",
                            "tokens/s: source and target tokens of the sentence pairs served"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;
}

// Sentence pairs whose targets are their sources: `count` of them, of 3 to 3 + spread words.
std::string copy_pairs(const char* name, int count, int spread) {
  std::string text;
  for (int k = 0; k < count; ++k) {
    std::string sentence;
    for (int w = 0; w < 3 + k % (spread + 1); ++w)
      sentence += std::to_string(10 + (k * 7 + w * 13) % 300) + ' ';
    sentence.pop_back();
    text += sentence + "\t" + sentence + "\n";
  }
  return write_data_file(name, text);
}

// After training on sentence pairs, GNMT translates a test set (here with a beam of 2) and scores
// it by BLEU: said in a line of the output, stored as quality metrics with the test set in the
// configuration, and a source too long for the model's longest sentence length is counted as left
// out, not translated. (The full model after one step on the CPU: what it translates is noise,
// and only the plumbing is checked here; tests/engine/gnmt_model_test.cc checks a trained model's
// translations, tests/unit/bleu_test.cc the score.)
TEST(DataCliTest, GnmtTranslatesATestSetAfterTrainingAndScoresItsBleu) {
  const std::string train = copy_pairs("train.ids", 12, 6);
  // Five pairs, the middle one's source too long for any sentence length gnmt takes; the others'
  // references of 2, 3, 4 and 5 tokens.
  std::string longest;
  for (int w = 0; w < 140; ++w) longest += std::to_string(40 + w) + ' ';
  const std::string test =
      write_data_file("test.ids",
                      "11 12 13 20\t11 12\n"
                      "11 12 13 21\t11 12 13\n" +
                          longest + "\t5 6 7 8 9 10 11\n" +  // a trailing space is no token
                          "11 12 13 22\t11 12 13 14\n"
                          "11 12 13 23\t11 12 13 14 15\n");
  const std::string json_path = testing::isolated_home() + "/gnmt-bleu.json";
  auto r = dlbench(
      "run gnmt --device cpu --input 16 --batch 2 --steps 1 --warmup 0 --beam 2 "
      "--no-store --no-telemetry --data " +
      train + " --test-data " + test + " --json " + json_path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* shown :
       {"BLEU              ", " on 4 test sentences (beam 2; 1-4-gram precisions ",
        "; 1 left out, longer than the model's longest sentence length"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;
  // The beam searched the test set, not the measured steps: the title names no beam.
  EXPECT_NE(r.out.find("gnmt train fp32 on cpu, batch 2, length 16 tokens\n"), std::string::npos)
      << r.out;
  std::ifstream in(json_path);
  const json doc = json::parse(in);
  EXPECT_EQ(doc["config"]["test_data"], test);
  EXPECT_EQ(metric(doc, "quality/test_sentences"), 4);
  EXPECT_EQ(metric(doc, "quality/test_sentences_left_out"), 1);
  const double bleu = metric(doc, "quality/bleu");
  EXPECT_GE(bleu, 0);
  EXPECT_LE(bleu, 100);
  for (int n = 1; n <= 4; ++n) metric(doc, "quality/bleu_precision_" + std::to_string(n));
  // The references scored are the four kept ones' (2 + 3 + 4 + 5 tokens), each beside its own
  // translation, and no translation is longer than 149 tokens and its [EOS].
  std::string lengths;
  for (const json& m : doc["metrics"])
    if (m["tag"] == "quality/bleu_brevity_penalty") lengths = m["description"];
  EXPECT_NE(lengths.find(", references 14"), std::string::npos) << lengths;
  const std::size_t at = lengths.find("translations ");
  ASSERT_NE(at, std::string::npos) << lengths;
  std::string count = lengths.substr(at + 13, lengths.find(" tokens", at) - at - 13);
  std::erase(count, ',');  // 1,234
  EXPECT_LE(std::stol(count), 4 * 149) << lengths;
}

TEST(DataCliTest, BadFilesAndFlagsAreOneLineUsageErrorsThatStoreNothing) {
  const std::string good = ratings_file();
  const std::string db = testing::isolated_home() + "/data-errors.db";
  const BadData cases[] = {
      {"run ncf --data " + write_data_file("three.dat", "1::10::4::5\n1::10::4\n"),
       "three.dat:2: expected 4 fields separated by '::', found 3 in '1::10::4'"},
      {"run ncf --data " + write_data_file("csv.dat", "userId,movieId,rating,timestamp\n"),
       "csv.dat:1: expected 4 fields"},
      {"run ncf --data " + write_data_file("empty.dat", ""), "empty.dat holds no ratings"},
      {"run ncf --data " + testing::isolated_home() + "/missing.dat", "--data cannot read"},
      {"run ncf --data ''", "an empty value"},
      {"run word2vec --data " + write_data_file("binary.txt", std::string("one\ntwo\0", 8)),
       "binary.txt:2: control byte 0x00; this is not a text file"},
      {"run word2vec --data " + write_data_file("text8.zip", "PK\x03\x04text8"),
       "text8.zip is a zip archive, not text"},
      {"run word2vec --data " + good, "holds 0 word(s) seen 5 times or more"},
      {"run resnet50 --input 32 --data " + good, "resnet50 reads no data file yet"},
      {"run transformer --input 32 --data " + write_data_file("untabbed.ids", "5 6 7\n"),
       "untabbed.ids:1: no tab between the source and the target sentence"},
      {"run transformer --input 32 --data " + write_data_file("wide.ids", "5 6\t40000\n"),
       "holds token id 40,000, past the model's vocabulary of 32,000 ids"},
      {"run unet3d --input 32 --data " + good, "not a folder"},
      {"run ncf --framework pytorch --data " + good, "--data is read by dlbench's own engine"},
      {"run unet --input 32 --data " + empty_folder(), "no case folder with imaging.nii(.gz)"},
      {"run unet --input 32 --data " + good, "not a folder"},
      {"run unet --input 32 --data " + corrupt_ct_case(), "cannot read the NIfTI volume"},
      {"run unet --data " + testing::write_ct_case("ct-small", "case_0", 2, 32),
       "the model takes 512x512 (run it at input size 32)"},
      // A translation test set: its file, its ids, and the runs it can score.
      {"run gnmt --input 16 --data " + copy_pairs("pairs.ids", 4, 2) + " --test-data " +
           write_data_file("test-untabbed.ids", "5 6 7\n"),
       "test-untabbed.ids:1: no tab between the source and the target sentence"},
      {"run gnmt --input 16 --data " + copy_pairs("pairs.ids", 4, 2) + " --test-data " +
           write_data_file("test-wide.ids", "5 6\t40000\n"),
       "test-wide.ids holds token id 40,000, past the model's vocabulary of 32,320 ids"},
      {"run gnmt --input 16 --data " + copy_pairs("pairs.ids", 4, 2) + " --test-data " +
           testing::isolated_home() + "/missing.ids",
       "--test-data cannot read"},
      {"run gnmt --input 16 --test-data ''", "an empty value"},
      {"run gnmt --input 16 --test-data " + copy_pairs("pairs.ids", 4, 2),
       "--test-data scores what a training run on real data learned: it needs --mode train and "
       "--data"},
      {"run gnmt --mode infer --input 16 --data " + copy_pairs("pairs.ids", 4, 2) +
           " --test-data " + copy_pairs("pairs.ids", 4, 2),
       "it needs --mode train and --data"},
      {"run transformer --input 32 --data " + copy_pairs("pairs.ids", 4, 2) + " --test-data " +
           copy_pairs("pairs.ids", 4, 2),
       "--test-data is a translation model's test set (gnmt); transformer translates nothing"},
      {"run gnmt --framework pytorch --test-data " + copy_pairs("pairs.ids", 4, 2),
       "--test-data is translated by dlbench's own engine"},
      // A beam searches decoding: gnmt's inference or its test set, from 1 to 8 hypotheses.
      {"run gnmt --input 16 --beam 2", "--beam searches only a translation model's inference"},
      {"run resnet50 --input 32 --mode infer --beam 2", "not resnet50 infer"},
      {"run gnmt --mode infer --input 16 --beam 9", "--beam must be from 1 to 8, not 9"},
  };
  for (const BadData& b : cases) {
    auto r =
        dlbench("--db " + db + " " + b.args + " --device cpu --batch 10 --steps 2 --no-telemetry");
    EXPECT_EQ(r.exit_code, 2) << b.args << "\n" << r.err;
    EXPECT_NE(r.err.find(b.message), std::string::npos) << b.message << "\n" << r.err;
    int lines = 0;
    for (char c : r.err) lines += c == '\n';
    EXPECT_LE(lines, 2) << r.err;  // the error and its hint
  }
  // The database may not even exist; where it does, it holds no run.
  if (std::filesystem::exists(db)) {
    auto runs = dlbench("--db " + db + " runs list --json");
    ASSERT_EQ(runs.exit_code, 0) << runs.err;
    EXPECT_EQ(json::parse(runs.out)["runs"].size(), 0u) << runs.out;
  }
}

}  // namespace
}  // namespace dlbench
