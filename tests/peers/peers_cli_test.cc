// dlbench run --framework and compare --frameworks end to end, with fake_worker.py standing in
// for PyTorch and JAX: a valid session is measured and stored with its framework; a malformed
// line, a crash, a hang and a missing package exit 4 with a useful message and store nothing;
// the real workers, where torch or jax is absent, name the missing package.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::CommandResult;
using testing::dlbench;
using testing::run_command;

const std::string kSource = DLBENCH_SOURCE_DIR;
const std::string kFake = kSource + "/tests/peers/fake_worker.py";
const std::string kTiny = "resnet50 --device cpu --input 32 --batch 2 --steps 3 --warmup 1";

std::string temp_dir(const std::string& name) {
  return testing::temp_folder("peers-" + name);
}

// dlbench with the fake worker playing `scenario`.
CommandResult fake(const std::string& scenario, const std::string& args,
                   const std::string& env = "") {
  return run_command("DLBENCH_FAKE_PEER=" + scenario + " " + env + " " DLBENCH_BINARY " " + args +
                     " --python " DLBENCH_PYTHON " --peer-worker " + kFake);
}

json runs_json(const std::string& db) {
  auto r = dlbench("--db " + db + " --json runs list");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A valid fake session of `framework`, stored in `db`: the run's JSON (discarded when the run
// failed, which the expectations here report).
json valid_run(const std::string& framework, const std::string& db) {
  auto r =
      fake("valid", "--db " + db + " run " + kTiny + " --framework " + framework + " --json -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out, nullptr, false);
  if (!doc.is_discarded()) {
    EXPECT_EQ(doc["config"]["framework"], framework);
  }
  return doc;
}

TEST(PeersCliTest, ValidSessionIsMeasuredByTheHarnessAndStoredWithItsFramework) {
  std::string db = temp_dir("valid") + "/r.db";
  json doc = valid_run("pytorch", db);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["peer"]["versions"]["pytorch"], "0.0-test");
  EXPECT_EQ(doc["parameters"], 23'520'842);  // the CIFAR variant, checked against dlbench's
  EXPECT_EQ(doc["measured_steps"], 3);
  // Throughput from the worker's wall time of the measured steps: 3 x 2 samples / 0.0306 s.
  EXPECT_NEAR(doc["throughput_samples_per_s"].get<double>(), 6 / (3 * 0.01 * 1.02), 0.01);
  EXPECT_NEAR(doc["step_time_ms"]["median"].get<double>(), 10.0, 1e-9);
  EXPECT_FALSE(doc["telemetry"].is_null());  // sampled around the worker's measured steps
  json runs = runs_json(db)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["framework"], "pytorch");
  auto show = dlbench("--db " + db + " runs show 1");
  EXPECT_TRUE(contains(show.out, "pytorch")) << show.out;
}

// tokens/s as native runs count them: a translation model's from the worker's count of a
// step's sentence pairs (none without one), BERT's from its padded length.
TEST(PeersCliTest, SequenceModelsReportTokensPerSecond) {
  auto tokens_per_s = [](const json& doc) -> double {
    for (const json& m : doc["metrics"])
      if (m["tag"] == "throughput/tokens_per_s") return m["value"].get<double>();
    return -1;
  };
  const std::string steps = " --batch 2 --steps 3 --warmup 1 --framework pytorch --no-store";
  // 3 steps of 50 tokens in the fake's 3 x 0.0102 s.
  auto pairs = fake("valid", "run transformer --device cpu --input 32" + steps + " --json -",
                    "DLBENCH_FAKE_PEER_TOKENS=50");
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  EXPECT_NEAR(tokens_per_s(json::parse(pairs.out)), 150 / (3 * 0.01 * 1.02), 0.01);
  auto uncounted = fake("valid", "run transformer --device cpu --input 32" + steps + " --json -");
  ASSERT_EQ(uncounted.exit_code, 0) << uncounted.err;
  EXPECT_EQ(tokens_per_s(json::parse(uncounted.out)), -1);
  // Scoring counts the pairs as training does.
  auto scored =
      fake("valid", "run transformer --mode infer --device cpu --input 32" + steps + " --json -",
           "DLBENCH_FAKE_PEER_TOKENS=50");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_NEAR(tokens_per_s(json::parse(scored.out)), 150 / (3 * 0.01 * 1.02), 0.01);
  // Two sequences of 32 tokens a step, padding included, whatever the worker says.
  auto bert = fake("valid", "run bert-base --device cpu --input 32" + steps + " --json -",
                   "DLBENCH_FAKE_PEER_TOKENS=50");
  ASSERT_EQ(bert.exit_code, 0) << bert.err;
  EXPECT_NEAR(tokens_per_s(json::parse(bert.out)), 64 * 3 / (3 * 0.01 * 1.02), 0.01);
  auto text = fake("valid", "run transformer --device cpu --input 32" + steps,
                   "DLBENCH_FAKE_PEER_TOKENS=50");
  EXPECT_TRUE(contains(text.out, "tokens/s")) << text.out;
}

// pytorch-compile runs the pytorch worker with --compile, and is stored as a framework of its
// own; the compilation the worker timed is reported apart from the measured steps.
TEST(PeersCliTest, PytorchCompileRunsThePytorchWorkerCompiledAndReportsItsCompilation) {
  std::string db = temp_dir("compile") + "/r.db";
  json doc = valid_run("pytorch-compile", db);
  ASSERT_FALSE(doc.is_discarded());
  bool reported = false;
  for (const json& m : doc["metrics"])
    if (m["tag"] == "compile/seconds") reported = m["value"].get<double>() == 1.5;
  EXPECT_TRUE(reported) << doc["metrics"];
  // The measured steps are the worker's own, compilation not among them.
  EXPECT_NEAR(doc["throughput_samples_per_s"].get<double>(), 6 / (3 * 0.01 * 1.02), 0.01);
  EXPECT_EQ(runs_json(db)["runs"][0]["framework"], "pytorch-compile");
  auto text = fake("valid", "run " + kTiny + " --framework pytorch-compile --no-store");
  EXPECT_TRUE(contains(text.out, "Compilation       1.5 s")) << text.out;
  // Without the variant the worker is not asked to compile, and says nothing of it.
  auto plain = fake("valid", "run " + kTiny + " --framework pytorch --no-store");
  EXPECT_FALSE(contains(plain.out, "Compilation")) << plain.out;
}

TEST(PeersCliTest, StderrChatterDoesNotDisturbTheProtocol) {
  auto r =
      fake("noisy", "run " + kTiny + " --framework jax --no-store", "DLBENCH_FAKE_FRAMEWORK=jax");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "jax 0.0-test on Fake Device")) << r.out;
}

TEST(PeersCliTest, MalformedLineExits4NamingTheLineAndStoresNothing) {
  std::string db = temp_dir("malformed") + "/r.db";
  auto r = fake("malformed", "--db " + db + " run " + kTiny + " --framework pytorch");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "line 2 is malformed")) << r.err;
  EXPECT_EQ(runs_json(db)["runs"].size(), 0u);
}

TEST(PeersCliTest, CrashExits4WithTheStderrTail) {
  std::string db = temp_dir("crash") + "/r.db";
  auto r = fake("crash", "--db " + db + " run " + kTiny + " --framework pytorch");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "exited with code 1 before its summary")) << r.err;
  EXPECT_TRUE(contains(r.err, "RuntimeError: CUDA error: fake crash")) << r.err;
  EXPECT_EQ(runs_json(db)["runs"].size(), 0u);
}

bool alive(pid_t pid) {
  // A killed process whose parent is gone may linger as a zombie of a PID 1 that does not
  // reap (containers): that is dead too.
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("State:", 0) == 0) return !contains(line, "Z");
  return false;
}

TEST(PeersCliTest, HangIsKilledWithItsProcessGroupAfterTheTimeout) {
  std::string pids = temp_dir("hang") + "/pids";
  auto start = std::chrono::steady_clock::now();
  auto r = fake("hang", "run " + kTiny + " --framework pytorch --no-store --peer-timeout 2",
                "DLBENCH_FAKE_PEER_PIDS=" + pids);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "--peer-timeout 2 s")) << r.err;
  EXPECT_TRUE(contains(r.err, "hanging now")) << r.err;  // the stderr tail
  EXPECT_LT(seconds, 20);
  std::ifstream in(pids);
  pid_t worker = 0, helper = 0;
  in >> worker >> helper;
  ASSERT_GT(helper, 0);
  EXPECT_FALSE(alive(worker));
  EXPECT_FALSE(alive(helper));  // the worker's own child went with the group
}

TEST(PeersCliTest, MissingFrameworkExits4NamingThePackageAndHowToInstallIt) {
  auto r = fake("missing", "run " + kTiny + " --framework jax --no-store",
                "DLBENCH_FAKE_PEER_PACKAGE=jax");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "Python package 'jax'")) << r.err;
  EXPECT_TRUE(contains(r.err, "pip install")) << r.err;
}

TEST(PeersCliTest, ParameterMismatchExits4) {
  auto r = fake("mismatch", "run " + kTiny + " --framework pytorch --no-store");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "23520843 parameters; dlbench's has 23520842")) << r.err;
}

TEST(PeersCliTest, MissingPythonExits4) {
  auto r = dlbench("run " + kTiny + " --framework pytorch --no-store --python /nonexistent/py3");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "cannot run /nonexistent/py3: No such file")) << r.err;
}

TEST(PeersCliTest, UnknownFrameworkIsAUsageError) {
  auto r = dlbench("run " + kTiny + " --framework tensorflow --no-store");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "unknown framework 'tensorflow'")) << r.err;
}

// A worker started by hand: the model and the inputs dlbench would send for `kTiny`.
testing::CommandResult run_worker(const std::string& worker, const std::string& model) {
  const std::string inputs =
      R"x('[{"name":"images","shape":[2,32,32,3],"dtype":"f32","meaning":"images (NHWC)",)x"
      R"("distribution":{"kind":"normal","mean":0,"stddev":1}},)"
      R"({"name":"labels","shape":[2],"dtype":"i32","meaning":"class labels",)"
      R"("distribution":{"kind":"uniform_int","low":0,"high":10}}]')";
  return run_command("PYTHONDONTWRITEBYTECODE=1 " DLBENCH_PYTHON " " + kSource + "/peers/" +
                     worker + " --model " + model + " --batch 2 --input 32 --inputs " + inputs);
}

// The real workers, run where their framework is absent (CI): one error line naming it.
void expect_missing(const std::string& worker, const std::string& package) {
  std::string probe = DLBENCH_PYTHON " -c 'import " + package + "' 2>/dev/null";
  if (run_command(probe).exit_code == 0) GTEST_SKIP() << package << " is installed here";
  auto direct = run_worker(worker, "resnet50");
  EXPECT_EQ(direct.exit_code, 3) << direct.err;
  json line = json::parse(direct.out);
  EXPECT_EQ(line["type"], "error");
  EXPECT_EQ(line["kind"], "missing_package");
  EXPECT_EQ(line["package"], package);
  auto r = run_command("PYTHONDONTWRITEBYTECODE=1 " DLBENCH_BINARY " run " + kTiny +
                       " --no-store --python " DLBENCH_PYTHON " --framework " +
                       (package == "torch" ? "pytorch" : "jax"));
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "Python package '" + package + "'")) << r.err;
}

TEST(PeersCliTest, PytorchWorkerWithoutTorchSaysTorchIsMissing) {
  expect_missing("pytorch_worker.py", "torch");
}

TEST(PeersCliTest, JaxWorkerWithoutJaxSaysJaxIsMissing) {
  expect_missing("jax_worker.py", "jax");
}

// The workers keep no list of dlbench's models: a model a worker does not build is its usage
// error, before it imports its framework.
TEST(PeersCliTest, WorkersAnswerAModelTheyDoNotBuildWithAUsageError) {
  for (const char* worker : {"pytorch_worker.py", "jax_worker.py"}) {
    auto r = run_worker(worker, "faster-rcnn");  // a model no worker builds (yet)
    EXPECT_EQ(r.exit_code, 3) << worker << ": " << r.err;
    json line = json::parse(r.out);
    EXPECT_EQ(line["type"], "error") << worker;
    EXPECT_EQ(line["kind"], "usage") << worker;
    EXPECT_TRUE(contains(line["message"].get<std::string>(), "no model 'faster-rcnn'")) << r.out;
  }
}

TEST(PeersCliTest, CompareFrameworksStoresTheGroupAndReportsIt) {
  std::string dir = temp_dir("compare");
  std::string db = dir + "/r.db";
  auto r = fake("valid", "--db " + db + " compare --frameworks native,pytorch " + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Frameworks side by side")) << r.out;
  EXPECT_TRUE(contains(r.out, "1.00x")) << r.out;  // native against itself
  json runs = runs_json(db)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  auto md = dlbench("--db " + db + " report --last-suite --format md");
  EXPECT_EQ(md.exit_code, 0) << md.err;
  EXPECT_TRUE(contains(md.out, "Frameworks side by side")) << md.out;
  std::string html = dir + "/report.html";
  auto h = dlbench("--db " + db + " report --last-suite --out " + html);
  EXPECT_EQ(h.exit_code, 0) << h.err;
  std::ifstream in(html);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(contains(text.str(), "Throughput per framework"));  // the grouped bar chart
}

// compare's --class-weights reach every framework: native's config and the peer's worker.
TEST(PeersCliTest, CompareHandsTheClassWeightsToEveryFramework) {
  std::string db = temp_dir("compare-weights") + "/r.db";
  auto r = fake("valid", "--db " + db +
                             " compare --frameworks native,pytorch unet --device cpu --input 32 "
                             "--batch 1 --steps 1 --warmup 0 --class-weights 0.5,2,4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "unet train")) << r.out;
  for (int id : {1, 2}) {
    auto show = dlbench("--db " + db + " --json runs show " + std::to_string(id));
    ASSERT_EQ(show.exit_code, 0) << show.err;
    const json run = json::parse(show.out);
    EXPECT_EQ(run["result"]["config"]["class_weights"], json::parse("[0.5, 2.0, 4.0]"))
        << run["framework"];
    if (run["framework"] == "pytorch") {  // the fake worker's first loss is the weights' sum
      EXPECT_DOUBLE_EQ(run["result"]["loss"]["first"].get<double>(), 6.5);
    }
  }
  auto bad = fake("valid",
                  "compare --frameworks native,pytorch unet --device cpu --input 32 "
                  "--no-store --class-weights 1,2");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(contains(bad.err, "takes 3 class weights, not 2")) << bad.err;
}

TEST(PeersCliTest, CompareKeepsGoingPastAFailedFrameworkThenExits4) {
  std::string db = temp_dir("compare-fail") + "/r.db";
  auto r = fake("crash", "--db " + db + " compare --frameworks native,pytorch " + kTiny);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.out, "failed: pytorch worker exited with code 1")) << r.out;
  json runs = runs_json(db)["runs"];
  ASSERT_EQ(runs.size(), 2u);  // native ok, pytorch stored as failed like a failed suite entry
  int failed = 0;
  for (const json& run : runs) failed += run["status"] == "failed";
  EXPECT_EQ(failed, 1);
}

TEST(PeersCliTest, CompareWithoutFrameworksStillNeedsTwoThings) {
  auto r = dlbench("compare 3");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "needs two things")) << r.err;
}

}  // namespace
}  // namespace dlbench
