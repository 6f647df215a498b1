#include "tests/ops/harness/perf.h"

#include <cstdio>
#include <exception>
#include <memory>

#include "tests/ops/harness/backends.h"
#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {
namespace {

constexpr int kWarmup = 3;

double tensor_bytes(const std::vector<HostTensor>& t, const Precision& p) {
  double bytes = 0;
  for (const HostTensor& h : t)
    if (h.role != Role::kScratch)
      bytes += static_cast<double>(h.shape.numel()) * static_cast<double>(size_of(dtype_of(h, p)));
  return bytes;
}

}  // namespace

int run_perf(const PerfOptions& options) {
  const Variant* variant = nullptr;
  const std::vector<Variant> all = variants();
  for (const Variant& v : all)
    if (v.name == options.backend) variant = &v;
  const Precision* precision = nullptr;
  for (const Precision* p : {&kF32, &kTf32, &kF16, &kBf16})
    if (options.precision == p->name) precision = p;
  if (!variant || !precision) {
    std::fprintf(stderr, "dlbench_ops --perf: no backend '%s' or precision '%s' in this build\n",
                 options.backend.c_str(), options.precision.c_str());
    return 2;
  }
  std::string why_not;
  std::unique_ptr<backend::Backend> be = variant->make(&why_not);
  if (!be) {
    std::fprintf(stderr, "dlbench_ops --perf: %s\n", why_not.c_str());
    return 2;
  }
  if (variant->for_perf) variant->for_perf(*be);
  std::printf("backend %s (%s), %s, %d runs after %d warm-up, timer: %s\n", variant->name.c_str(),
              be->name().c_str(), precision->name, options.repeats, kWarmup,
              be->make_timer(2)->clock().c_str());
  std::printf("%-70s %10s %9s %9s\n", "case", "ms", "TFLOP/s", "GB/s");
  int matched = 0, skipped = 0;
  for (OpCaseMaker make : registry().op_makers) {
    for (const std::unique_ptr<OpCase>& c : make()) {
      const std::string name = "ops/perf/" + c->op() + "." + c->params();
      if (name.find(options.filter) == std::string::npos) continue;
      ++matched;
      const backend::Support support =
          variant->supports(c->kind(), c->op_params(*precision), precision->dtype);
      if (!support) {
        // Named where a filter asked for cases; counted only when every case was asked for.
        ++skipped;
        if (!options.filter.empty())
          std::printf("%-70s skipped: %s\n", name.c_str(), support.reason.c_str());
        continue;
      }
      try {
        std::vector<HostTensor> host = c->tensors(*be);
        round_inputs(host, *precision);
        DeviceTensors dev(*be, host, *precision);
        for (int i = 0; i < kWarmup; ++i) c->run(*be, *precision, dev.tensors());
        std::unique_ptr<backend::DeviceTimer> timer = be->make_timer(2);
        be->synchronize();
        timer->mark(0);
        for (int i = 0; i < options.repeats; ++i) c->run(*be, *precision, dev.tensors());
        timer->mark(1);
        be->synchronize();
        const double ms = timer->elapsed_ms(0, 1) / options.repeats;
        const double seconds = ms / 1e3;
        char tflops[32] = "-";
        if (c->flops() > 0)
          std::snprintf(tflops, sizeof tflops, "%.2f", c->flops() / seconds / 1e12);
        std::printf("%-70s %10.4f %9s %9.1f\n", name.c_str(), ms, tflops,
                    tensor_bytes(host, *precision) / seconds / 1e9);
      } catch (const std::exception& e) {
        std::printf("%-70s failed: %s\n", name.c_str(), e.what());
      }
    }
  }
  if (skipped > 0 && options.filter.empty())
    std::printf("%d cases skipped: %s does not run them in %s\n", skipped, variant->name.c_str(),
                precision->name);
  if (options.show_conv_routes && variant->print_conv_routes) variant->print_conv_routes(*be);
  // A filter is a substring, so a typo or a pattern ("a|b") matches nothing: say so, not an
  // empty table.
  if (matched == 0) {
    std::fprintf(stderr, "dlbench_ops --perf: no case name contains '%s' (a plain substring)\n",
                 options.filter.c_str());
    return 2;
  }
  return 0;
}

}  // namespace dlbench::op_harness
