// Decoding's choices per sentence on the device, as the CPU backend makes them (cpu_decoding.cc).
// Greedy (Backend::greedy_pick): a block per sentence reduces (score, id) keys to their maximum.
// Beam search (Backend::beam_pick): a block per sentence takes each hypothesis's log-softmax
// normalizer and its beam best ids (each thread keeps its own best, the block merges them a
// maximum at a time), then one thread ranks the beam x beam candidates and the block rewrites the
// sentence's rows. Then one block counts the sentences still open. No atomics: the same choices
// on every run.
#include <cstdint>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

// A score and its id as one key whose maximum is the highest score, and among equal scores the
// lowest id: the score's bits made to order as unsigned integers above, the id inverted below.
// NaN counts as -inf, so it is never above another score.
__device__ __forceinline__ unsigned long long pick_key(float score, std::int64_t id) {
  if (isnan(score)) score = -INFINITY;
  unsigned int bits = __float_as_uint(score);
  bits = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  return (static_cast<unsigned long long>(bits) << 32) | (0xffffffffu - static_cast<unsigned>(id));
}

// The score a pick_key holds (NaN came in as -inf).
__device__ __forceinline__ float key_score(unsigned long long key) {
  unsigned int bits = static_cast<unsigned int>(key >> 32);
  bits = (bits & 0x80000000u) != 0 ? bits & 0x7fffffffu : ~bits;
  return __uint_as_float(bits);
}

__device__ __forceinline__ std::int64_t key_id(unsigned long long key) {
  return 0xffffffffu - static_cast<unsigned>(key & 0xffffffffu);
}

struct MaxKey {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a > b ? a : b;
  }
};

template <class T>
__global__ void greedy_pick_kernel(const T* logits, std::int64_t vocabulary, std::int32_t eos,
                                   std::int32_t pad, std::int32_t* tokens, std::int32_t* finished,
                                   std::int32_t* lengths) {
  const std::int64_t n = blockIdx.x;
  if (finished[n] != 0) {  // the same for every thread of the block
    if (threadIdx.x == 0) tokens[n] = pad;
    return;
  }
  const T* row = logits + n * vocabulary;
  // -inf at id 0: what a row without any score above -inf chooses.
  unsigned long long best = pick_key(-INFINITY, 0);
  for (std::int64_t j = threadIdx.x; j < vocabulary; j += blockDim.x)
    best = MaxKey{}(best, pick_key(to_f32(row[j]), j));
  best = block_reduce(best, MaxKey{});
  if (threadIdx.x != 0) return;
  const auto id = static_cast<std::int32_t>(0xffffffffu - static_cast<unsigned>(best));
  tokens[n] = id;
  lengths[n] += 1;
  finished[n] = id == eos ? 1 : 0;
}

// Sentences of `per_sentence` rows with a row not finished.
__global__ void count_unfinished_kernel(const std::int32_t* finished, std::int64_t batch,
                                        std::int64_t per_sentence, std::int32_t* unfinished) {
  int open = 0;
  for (std::int64_t n = threadIdx.x; n < batch; n += blockDim.x) {
    bool any = false;
    for (std::int64_t k = 0; k < per_sentence; ++k)
      any = any || finished[n * per_sentence + k] == 0;
    open += any ? 1 : 0;
  }
  open = block_reduce(open, Add{});
  if (threadIdx.x == 0) unfinished[0] = open;
}

constexpr int kMaxBeam = static_cast<int>(BeamParams::kMaxBeam);

struct BeamArgs {
  const float* attention;
  float *scores, *coverage;
  std::int32_t *finished, *lengths, *tokens, *parents;
  std::int64_t beam, vocabulary, sources;
  std::int32_t eos, pad;
};

// One block per sentence; dynamic shared memory holds the sentence's coverage rows (beam x
// sources floats) while they are rewritten.
template <class T>
__global__ void beam_pick_kernel(const T* logits, BeamArgs a) {
  extern __shared__ float old_cover[];
  __shared__ float cand_score[kMaxBeam * kMaxBeam];
  __shared__ int cand_k[kMaxBeam * kMaxBeam], cand_j[kMaxBeam * kMaxBeam];
  __shared__ float old_score[kMaxBeam];
  __shared__ int old_done[kMaxBeam], old_length[kMaxBeam], chosen[kMaxBeam];
  const std::int64_t n = blockIdx.x;
  const int K = static_cast<int>(a.beam);
  for (int k = 0; k < K; ++k) {
    const std::int64_t row = n * K + k;
    const bool done = a.finished[row] != 0;  // the same for every thread
    if (done) {
      if (threadIdx.x == 0)
        for (int r = 0; r < K; ++r) {
          cand_score[k * K + r] = r == 0 ? a.scores[row] : -INFINITY;
          cand_k[k * K + r] = r == 0 ? k : kMaxBeam;  // never ahead of a real candidate
          cand_j[k * K + r] = r == 0 ? a.pad : 0;
        }
      continue;
    }
    const T* x = logits + row * a.vocabulary;
    float top = -INFINITY;
    unsigned long long best[kMaxBeam];
    for (int r = 0; r < K; ++r) best[r] = 0;  // below every real key
    for (std::int64_t j = threadIdx.x; j < a.vocabulary; j += blockDim.x) {
      const float v = to_f32(x[j]);
      top = fmaxf(top, v);
      unsigned long long key = pick_key(v, j);
      for (int r = 0; r < K; ++r)  // insert into the thread's sorted best
        if (key > best[r]) {
          const unsigned long long moved = best[r];
          best[r] = key, key = moved;
        }
    }
    top = block_reduce(top, Max{});
    float sum = 0;
    for (std::int64_t j = threadIdx.x; j < a.vocabulary; j += blockDim.x)
      sum += __expf(to_f32(x[j]) - top);
    sum = block_reduce(sum, Add{});
    const float log_sum = top + __logf(sum);
    int head = 0;
    for (int r = 0; r < K; ++r) {
      const unsigned long long mine = head < K ? best[head] : 0;
      const unsigned long long winner = block_reduce(mine, MaxKey{});
      if (mine == winner && winner != 0) ++head;  // keys hold their ids: one thread owns it
      if (threadIdx.x == 0) {
        const float value = a.scores[row] + (key_score(winner) - log_sum);
        cand_score[k * K + r] = isnan(value) ? -INFINITY : value;  // as the CPU backend
        cand_k[k * K + r] = k;
        cand_j[k * K + r] = static_cast<int>(key_id(winner));
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // The sentence's best K candidates, by score, then k, then j.
    bool taken[kMaxBeam * kMaxBeam];
    for (int c = 0; c < K * K; ++c) taken[c] = false;
    for (int i = 0; i < K; ++i) {
      int pick = -1;
      for (int c = 0; c < K * K; ++c) {
        if (taken[c] || cand_k[c] >= K) continue;
        if (pick < 0 || cand_score[c] > cand_score[pick] ||
            (cand_score[c] == cand_score[pick] &&
             (cand_k[c] < cand_k[pick] || (cand_k[c] == cand_k[pick] && cand_j[c] < cand_j[pick]))))
          pick = c;
      }
      taken[pick] = true;
      chosen[i] = pick;
    }
    for (int k = 0; k < K; ++k) {
      const std::int64_t row = n * K + k;
      old_score[k] = a.scores[row], old_done[k] = a.finished[row], old_length[k] = a.lengths[row];
    }
  }
  for (std::int64_t e = threadIdx.x; e < K * a.sources; e += blockDim.x)
    old_cover[e] = a.coverage[n * K * a.sources + e];
  __syncthreads();
  for (std::int64_t e = threadIdx.x; e < K * a.sources; e += blockDim.x) {
    const int i = static_cast<int>(e / a.sources);
    const std::int64_t s = e - i * a.sources;
    const int k = cand_k[chosen[i]];
    const float add = old_done[k] != 0 ? 0.0f : a.attention[(n * K + k) * a.sources + s];
    a.coverage[(n * K + i) * a.sources + s] = old_cover[k * a.sources + s] + add;
  }
  if (threadIdx.x < K) {
    const int i = threadIdx.x, c = chosen[i], k = cand_k[c];
    const std::int64_t row = n * K + i;
    const bool was_done = old_done[k] != 0;
    a.tokens[row] = cand_j[c];
    a.parents[row] = static_cast<std::int32_t>(n * K + k);
    a.scores[row] = cand_score[c];
    a.finished[row] = was_done || cand_j[c] == a.eos ? 1 : 0;
    a.lengths[row] = old_length[k] + (was_done ? 0 : 1);
  }
}

}  // namespace

void CudaBackend::greedy_pick_impl(const GreedyParams& p, const Tensor& logits,
                                   const Tensor& tokens, const Tensor& finished,
                                   const Tensor& lengths, const Tensor& unfinished) {
  activate();
  const char* op = "greedy_pick";
  require_here(logits, op, "logits"), require_here(tokens, op, "tokens");
  require_here(finished, op, "finished"), require_here(lengths, op, "lengths");
  require_here(unfinished, op, "unfinished");
  DLBENCH_CHECK(p.batch <= std::int64_t{0x7fffffff},
                std::string(op) + ": at most 2^31 - 1 sentences on CUDA");
  dispatch_float(logits.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    greedy_pick_kernel<T><<<static_cast<unsigned>(p.batch), kBlock, 0, stream_>>>(
        static_cast<const T*>(logits.data()), p.vocabulary, p.eos, p.pad,
        tokens.data_as<std::int32_t>(), finished.data_as<std::int32_t>(),
        lengths.data_as<std::int32_t>());
    CUDA_CHECK_LAUNCH();
  });
  count_unfinished_kernel<<<1, kBlock, 0, stream_>>>(finished.data_as<std::int32_t>(), p.batch, 1,
                                                     unfinished.data_as<std::int32_t>());
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::beam_pick_impl(const BeamParams& p, const Tensor& logits, const Tensor& attention,
                                 const BeamState& state, const Tensor& tokens,
                                 const Tensor& parents, const Tensor& unfinished) {
  activate();
  const char* op = "beam_pick";
  for (const auto& [t, what] : {std::pair{&logits, "logits"},
                                {&attention, "attention"},
                                {&state.scores, "scores"},
                                {&state.finished, "finished"},
                                {&state.lengths, "lengths"},
                                {&state.coverage, "coverage"},
                                {&tokens, "tokens"},
                                {&parents, "parents"},
                                {&unfinished, "unfinished"}})
    require_here(*t, op, what);
  const std::size_t cover_bytes = static_cast<std::size_t>(p.beam * p.sources) * sizeof(float);
  DLBENCH_CHECK(cover_bytes <= 40 * 1024,
                std::string(op) +
                    ": a sentence's coverage (beam x sources floats) must fit in 40 "
                    "KiB of shared memory on CUDA");
  DLBENCH_CHECK(p.batch <= std::int64_t{0x7fffffff},
                std::string(op) + ": at most 2^31 - 1 sentences on CUDA");
  const BeamArgs args{attention.data_as<float>(),
                      state.scores.data_as<float>(),
                      state.coverage.data_as<float>(),
                      state.finished.data_as<std::int32_t>(),
                      state.lengths.data_as<std::int32_t>(),
                      tokens.data_as<std::int32_t>(),
                      parents.data_as<std::int32_t>(),
                      p.beam,
                      p.vocabulary,
                      p.sources,
                      p.eos,
                      p.pad};
  dispatch_float(logits.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    beam_pick_kernel<T><<<static_cast<unsigned>(p.batch), kBlock, cover_bytes, stream_>>>(
        static_cast<const T*>(logits.data()), args);
    CUDA_CHECK_LAUNCH();
  });
  count_unfinished_kernel<<<1, kBlock, 0, stream_>>>(
      state.finished.data_as<std::int32_t>(), p.batch, p.beam, unfinished.data_as<std::int32_t>());
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda
