// dlbench_ops: every registered op case, on every backend variant and precision, as gtest
// tests named ops/<mode>/<op>.<params>/<backend>/<precision> (registered at run time with
// ::testing::RegisterTest, so the names come from the cases).
#include <gtest/gtest.h>

#include <string>

#include "tests/ops/harness/modes.h"

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
}

}  // namespace
}  // namespace dlbench::op_harness

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  dlbench::op_harness::register_all();
  return RUN_ALL_TESTS();
}
