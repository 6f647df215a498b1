// dlbench_ops: every registered op and layer case, on every backend variant and precision, as gtest
// tests named ops/<mode>/<op>.<params>/<backend>/<precision> (registered at run time with
// ::testing::RegisterTest, so the names come from the cases).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/ops/harness/layer_case.h"
#include "tests/ops/harness/modes.h"
#include "tests/ops/harness/perf.h"

namespace dlbench::op_harness {

Registry& registry() {
  static Registry r;
  return r;
}

namespace {

class HarnessTest : public ::testing::Test {
 public:
  explicit HarnessTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

void register_test(const std::string& suite, const std::string& name, std::function<void()> body) {
  ::testing::RegisterTest(
      suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
      [body = std::move(body)]() -> ::testing::Test* { return new HarnessTest(body); });
}

void register_all() {
  const std::vector<Variant> all = variants();
  for (OpCaseMaker make : registry().op_makers) {
    for (std::unique_ptr<OpCase>& made : make()) {
      const std::shared_ptr<OpCase> c = std::move(made);
      if (c->perf_only()) continue;
      for (const Variant& v : all) {
        if (v.conv_only && !is_conv(c->kind())) continue;
        for (const Precision& p : v.precisions) {
          if (p.math != MathMode::kStrict && !c->has_math_mode()) continue;
          register_test("ops/test/" + c->op(), c->params() + "/" + v.name + "/" + p.name,
                        [c, v, p] { run_test_mode(*c, v, p); });
        }
      }
    }
  }
  for (GradCaseMaker make : registry().grad_makers) {
    for (GradCase& g : make()) {
      auto c = std::make_shared<GradCase>(std::move(g));
      for (const Variant& v : all) {
        if (v.conv_only && !is_conv(c->kind)) continue;
        register_test("ops/grad/" + c->op, c->params + "/" + v.name + "/f32",
                      [c, v] { run_grad_mode(*c, v); });
      }
    }
  }
  // Layers run on the default route of each backend (a pinned convolution route is an op's).
  for (LayerCaseMaker make : layer_makers()) {
    for (LayerCase& l : make()) {
      auto c = std::make_shared<LayerCase>(std::move(l));
      for (const Variant& v : all) {
        if (v.conv_only) continue;
        register_test("ops/layer/" + c->layer, c->params + "/" + v.name + "/f32",
                      [c, v] { run_layer_mode(*c, v); });
      }
    }
  }
}

}  // namespace
}  // namespace dlbench::op_harness

// dlbench_ops --perf [--backend cpu|cuda|cuda/cudnn|cuda/gemm|cuda/graph|cuda/padded|cuda/stem|
//                              cuda/sliced]
//                    [--precision f32|tf32|f16|bf16]
//                    [--filter SUBSTRING] [--repeats N] [--show-conv-routes]: perf mode;
// anything else runs the tests.
int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--perf") {
    dlbench::op_harness::PerfOptions options;
    std::vector<std::string> rest;
    for (const std::string& a : args)
      if (a == "--show-conv-routes")
        options.show_conv_routes = true;
      else
        rest.push_back(a);
    for (std::size_t i = 1; i + 1 < rest.size(); i += 2) {
      if (rest[i] == "--backend") {
        options.backend = rest[i + 1];
      } else if (rest[i] == "--precision") {
        options.precision = rest[i + 1];
      } else if (rest[i] == "--filter") {
        options.filter = rest[i + 1];
      } else if (rest[i] == "--repeats") {
        options.repeats = std::max(1, std::atoi(rest[i + 1].c_str()));
      } else {
        std::fprintf(stderr, "dlbench_ops --perf: unknown option %s\n", rest[i].c_str());
        return 2;
      }
    }
    if (rest.size() % 2 == 0) {
      std::fprintf(stderr, "dlbench_ops --perf: %s needs a value\n", rest.back().c_str());
      return 2;
    }
    return dlbench::op_harness::run_perf(options);
  }
  ::testing::InitGoogleTest(&argc, argv);
  dlbench::op_harness::register_all();
  return RUN_ALL_TESTS();
}
