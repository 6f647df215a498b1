#include "tests/ops/harness/reference_lstm.h"

#include <cmath>
#include <cstdint>

namespace dlbench::ref {
namespace {

using backend::LstmParams;

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// Every step's gate activations [steps, batch, 4 hidden] (i, f, g, o after their
// nonlinearities) and cell states [steps + 1, batch, hidden] (c0 first), and the hidden states
// [steps + 1, batch, hidden] (h0 first).
struct Trace {
  Vec gates, c, h;
};

Trace run(const LstmParams& p, const Vec& x, const Vec& w, const Vec& h0, const Vec& c0) {
  const std::int64_t B = p.batch, T = p.steps, I = p.input, H = p.hidden, G = p.gates();
  const double* w_ih = w.data();
  const double* w_hh = w_ih + G * I;
  const double* b_ih = w_hh + G * H;
  const double* b_hh = b_ih + G;
  Trace tr{Vec(T * B * G), Vec((T + 1) * B * H, 0.0), Vec((T + 1) * B * H, 0.0)};
  for (std::int64_t i = 0; i < B * H; ++i) {
    if (!h0.empty()) tr.h[i] = h0[i];
    if (!c0.empty()) tr.c[i] = c0[i];
  }
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t b = 0; b < B; ++b) {
      const double* xt = &x[(t * B + b) * I];
      const double* h_prev = &tr.h[(t * B + b) * H];
      double* a = &tr.gates[(t * B + b) * G];
      for (std::int64_t r = 0; r < G; ++r) {
        double s = b_ih[r] + b_hh[r];
        for (std::int64_t j = 0; j < I; ++j) s += w_ih[r * I + j] * xt[j];
        for (std::int64_t j = 0; j < H; ++j) s += w_hh[r * H + j] * h_prev[j];
        a[r] = r / H == 2 ? std::tanh(s) : sigmoid(s);
      }
      for (std::int64_t u = 0; u < H; ++u) {
        const double c = a[H + u] * tr.c[(t * B + b) * H + u] + a[u] * a[2 * H + u];
        tr.c[((t + 1) * B + b) * H + u] = c;
        tr.h[((t + 1) * B + b) * H + u] = a[3 * H + u] * std::tanh(c);
      }
    }
  return tr;
}

}  // namespace

LstmForward lstm_forward(const LstmParams& p, const Vec& x, const Vec& w, const Vec& h0,
                         const Vec& c0) {
  const Trace tr = run(p, x, w, h0, c0);
  const std::int64_t BH = p.batch * p.hidden, T = p.steps;
  return {Vec(tr.h.begin() + BH, tr.h.end()), Vec(tr.h.begin() + T * BH, tr.h.end()),
          Vec(tr.c.begin() + T * BH, tr.c.end())};
}

LstmGrads lstm_backward(const LstmParams& p, const Vec& x, const Vec& w, const Vec& h0,
                        const Vec& c0, const Vec& dy, const Vec& dhn, const Vec& dcn) {
  const std::int64_t B = p.batch, T = p.steps, I = p.input, H = p.hidden, G = p.gates();
  const Trace tr = run(p, x, w, h0, c0);
  const double* w_ih = w.data();
  const double* w_hh = w_ih + G * I;
  LstmGrads g{Vec(T * B * I, 0.0), Vec(B * H, 0.0), Vec(B * H, 0.0), Vec(w.size(), 0.0)};
  double* dw_ih = g.dw.data();
  double* dw_hh = dw_ih + G * I;
  double* db_ih = dw_hh + G * H;
  double* db_hh = db_ih + G;
  // The gradients flowing into step t from step t + 1 (from dhn and dcn at the last step).
  Vec dh_next = dhn.empty() ? Vec(B * H, 0.0) : dhn;
  Vec dc_next = dcn.empty() ? Vec(B * H, 0.0) : dcn;
  Vec da(G);
  for (std::int64_t t = T - 1; t >= 0; --t) {
    Vec dh_prev(B * H, 0.0), dc_prev(B * H, 0.0);
    for (std::int64_t b = 0; b < B; ++b) {
      const double* a = &tr.gates[(t * B + b) * G];
      for (std::int64_t u = 0; u < H; ++u) {
        const std::int64_t s = b * H + u;
        const double i = a[u], f = a[H + u], gg = a[2 * H + u], o = a[3 * H + u];
        const double c = tr.c[(t + 1) * B * H + s], c_prev = tr.c[t * B * H + s];
        const double dh = dy[(t * B + b) * H + u] + dh_next[s];
        const double tc = std::tanh(c);
        const double dc = dc_next[s] + dh * o * (1 - tc * tc);
        da[u] = dc * gg * i * (1 - i);
        da[H + u] = dc * c_prev * f * (1 - f);
        da[2 * H + u] = dc * i * (1 - gg * gg);
        da[3 * H + u] = dh * tc * o * (1 - o);
        dc_prev[s] = dc * f;
      }
      const double* xt = &x[(t * B + b) * I];
      const double* h_prev = &tr.h[(t * B + b) * H];
      for (std::int64_t r = 0; r < G; ++r) {
        for (std::int64_t j = 0; j < I; ++j) {
          g.dx[(t * B + b) * I + j] += da[r] * w_ih[r * I + j];
          dw_ih[r * I + j] += da[r] * xt[j];
        }
        for (std::int64_t j = 0; j < H; ++j) {
          dh_prev[b * H + j] += da[r] * w_hh[r * H + j];
          dw_hh[r * H + j] += da[r] * h_prev[j];
        }
        db_ih[r] += da[r];
        db_hh[r] += da[r];
      }
    }
    dh_next = dh_prev;
    dc_next = dc_prev;
  }
  g.dh0 = dh_next;
  g.dc0 = dc_next;
  return g;
}

}  // namespace dlbench::ref
