// Times batch norm's streaming kernels (cuda_batch_norm_kernels.cuh and _apply.cuh) on ResNet-50's
// shapes at batch 256, fp16 and bf16, for several choices of rows in flight per thread (kRows) and
// blocks per SM (kMinBlocks), and for the apply kernels' grid sized by their occupancy or not, so
// the defaults there follow a measurement. A benchmark, not a test (CTest does not run it); the
// CUDA build makes it: `<build dir>/tests/dlbench_bn_kernels_bench` on a machine with a GPU.
// Per kernel it prints the microseconds summed over the nine shapes for each variant (RxMy[o]: x
// rows, y blocks, o the occupancy grid), then the TB/s each reached at 802816x64, 12544x512 and
// 802816x256 (bytes the kernel must move, mask bits included, over its time). The inputs stay the
// same from launch to launch, so the small shapes partly hit L2, as they do in a training step
// after the layer that wrote them. A D2D memcpy gives the bandwidth to compare with.
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include "engine/backend/cuda/cuda_batch_norm_apply.cuh"
using namespace dlbench::backend::cuda;
#define CK(x)                                                      \
  do {                                                             \
    cudaError_t e_ = (x);                                          \
    if (e_ != cudaSuccess) {                                       \
      printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); \
      exit(1);                                                     \
    }                                                              \
  } while (0)
#define VAR(R, M) , R, M
__global__ void fill(unsigned short* p, long n, unsigned seed, bool bf) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    float f = ((h & 0xffff) / 65536.0f - 0.5f) * 4.0f;
    if (bf) {
      __nv_bfloat16 b = __float2bfloat16(f);
      p[i] = *(unsigned short*)&b;
    } else {
      __half b = __float2half(f);
      p[i] = *(unsigned short*)&b;
    }
  }
}
__global__ void fillf(float* p, long n, float v) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x)
    p[i] = v + (i % 7) * 0.01f;
}
// The launchers' own geometry (cuda_batch_norm_kernels.cuh), for 8-wide packs of 2-byte types.
struct Geo {
  Tiling tiling;
  dim3 block;
  unsigned tiles;
  long chunks, rpc;                  // the backward sums'
  long forward_chunks, forward_rpc;  // the forward sums'
};
int g_sms;
bool g_occupancy_grid;  // the variant being timed sizes apply grids by the kernel's occupancy
Geo geo(long rows, long C) {
  dlbench::backend::BatchNormParams p;
  p.rows = rows, p.channels = C;
  const Tiling t = tiling(p, 8);
  const Chunking k = chunking(p, t, kBackwardPartialBlocks);
  const Chunking f = chunking(p, t, kForwardPartialBlocks);
  return {t, t.block, t.tiles, k.chunks, k.rows_per_chunk, f.chunks, f.rows_per_chunk};
}
// Blocks of `kernel` that the current GPU keeps resident at once, asked once per kernel and
// block size (as CudaBackend::resident_blocks), so the timed loops make no occupancy query.
int resident_blocks(const void* kernel, dim3 block) {
  static std::map<std::pair<const void*, unsigned>, int> known;
  const std::pair<const void*, unsigned> key(kernel, block.x * block.y * block.z);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  return known[key] = resident_blocks_on(0, kernel, static_cast<int>(key.second));
}

// The launchers' apply grid (one wave of as many blocks as `kernel` keeps resident), or, with
// g_occupancy_grid false, the grid they used before 2026-12-01: 8 blocks of 256 threads per SM,
// whatever the kernel's registers allow.
template <class K>
dim3 apply_grid_for(K kernel, const Geo& g) {
  if (g_occupancy_grid)
    return apply_grid(g.tiling, resident_blocks(reinterpret_cast<const void*>(kernel), g.block));
  return apply_grid(g.tiling, g_sms * (2048 / kBlock));
}

template <class F>
float timeit(F f) {
  for (int i = 0; i < 3; ++i) f();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  for (int i = 0; i < 20; ++i) f();
  cudaEventRecord(b);
  CK(cudaEventSynchronize(b));
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  CK(cudaGetLastError());
  return ms * 1000 / 20;
}
struct Bufs {
  void *x, *dy, *r, *y, *dr;
  unsigned char* mask;
  float *coef, *coef2, *partial, *partial2, *mean;
};
const char* kNames[] = {"fwd bn+relu",    "fwd bn+add+relu", "fwd dual",    "bwd partial relu",
                        "bwd apply relu", "bwd apply tail",  "fwd partial", "bwd partial pair"};
// bytes per element moved by each kernel (2-byte types), mask bits counted
double bytes_per(int k) {
  const double m = 1.0 / 8;
  switch (k) {
    case 0:
      return 4 + m;
    case 1:
    case 2:
      return 6 + m;
    case 3:
      return 4 + m;
    case 4:
      return 6 + m;
    case 5:
      return 8 + m;
    case 6:
      return 2;
    default:
      return 6 + m;
  }
}
template <class T, int R, int M>
float run(int k, const Bufs& b, long rows, long C) {
  Geo g = geo(rows, C);
  const T *x = (const T*)b.x, *dy = (const T*)b.dy, *r = (const T*)b.r;
  T *y = (T*)b.y, *dr = (T*)b.dr;
  switch (k) {
    case 0:
      return timeit([&] {
        bn_forward_apply_kernel<T, 8, true VAR(R, M)>
            <<<apply_grid_for(bn_forward_apply_kernel<T, 8, true VAR(R, M)>, g), g.block>>>(
                x, b.coef, rows, C, ForwardTail<T>{nullptr, true, b.mask, nullptr}, y);
      });
    case 1:
      return timeit([&] {
        bn_forward_apply_kernel<T, 8, true VAR(R, M)>
            <<<apply_grid_for(bn_forward_apply_kernel<T, 8, true VAR(R, M)>, g), g.block>>>(
                x, b.coef, rows, C, ForwardTail<T>{r, true, b.mask, nullptr}, y);
      });
    case 2:
      return timeit([&] {
        bn_forward_apply_kernel<T, 8, true VAR(R, M)>
            <<<apply_grid_for(bn_forward_apply_kernel<T, 8, true VAR(R, M)>, g), g.block>>>(
                x, b.coef, rows, C, ForwardTail<T>{r, true, b.mask, b.coef2}, y);
      });
    case 3:
      return timeit([&] {
        bn_partial_kernel<T, 8, SumKind::kBackward, true, false VAR(R, M)>
            <<<dim3(g.tiles, g.chunks), g.block>>>(x, dy, b.mean, b.mask, rows, C, g.rpc, b.partial,
                                                   ResidualSums<T>{});
      });
    case 4:
      return timeit([&] {
        bn_backward_apply_kernel<T, 8, true VAR(R, M)>
            <<<apply_grid_for(bn_backward_apply_kernel<T, 8, true VAR(R, M)>, g), g.block>>>(
                x, dy, b.coef, rows, C, false,
                BackwardTail<T>{b.mask, nullptr, false, nullptr, nullptr}, y);
      });
    case 5:
      return timeit([&] {
        bn_backward_apply_kernel<T, 8, true VAR(R, M)>
            <<<apply_grid_for(bn_backward_apply_kernel<T, 8, true VAR(R, M)>, g), g.block>>>(
                x, dy, b.coef, rows, C, false, BackwardTail<T>{b.mask, dr, false, nullptr, nullptr},
                y);
      });
    case 6:
      return timeit([&] {
        bn_partial_kernel<T, 8, SumKind::kForward, false, false VAR(R, M)>
            <<<dim3(g.tiles, g.forward_chunks), g.block>>>(
                x, nullptr, nullptr, nullptr, rows, C, g.forward_rpc, b.partial, ResidualSums<T>{});
      });
    default:
      return timeit([&] {
        bn_partial_kernel<T, 8, SumKind::kBackward, true, true VAR(R, M)>
            <<<dim3(g.tiles, g.chunks), g.block>>>(x, dy, b.mean, b.mask, rows, C, g.rpc, b.partial,
                                                   ResidualSums<T>{r, b.mean, b.partial2});
      });
  }
}
// ResNet-50 at batch 256: the stem, then each stage's narrow and wide activations (rows = N*H*W).
struct Shape {
  long rows, C;
};
Shape shapes[] = {{3211264, 64}, {802816, 64},  {802816, 256}, {200704, 128}, {200704, 512},
                  {50176, 256},  {50176, 1024}, {12544, 512},  {12544, 2048}};
int main() {
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  long E = 3211264L * 64;
  Bufs b;
  for (void** p : {&b.x, &b.dy, &b.r, &b.y, &b.dr}) CK(cudaMalloc(p, E * 2));
  CK(cudaMalloc(&b.mask, E / 8 + 64));
  for (float** p : {&b.coef, &b.coef2, &b.partial, &b.partial2, &b.mean})
    CK(cudaMalloc(p, 64 << 20));
  CK(cudaMemset(b.mask, 0x5a, E / 8 + 64));
  fillf<<<1024, 256>>>(b.coef, 16 << 20, 0.1f);
  fillf<<<1024, 256>>>(b.coef2, 16 << 20, 0.2f);
  fillf<<<1024, 256>>>(b.mean, 16 << 20, 0.0f);
  {  // copy bandwidth for reference
    float us = timeit([&] { cudaMemcpyAsync(b.y, b.x, E * 2, cudaMemcpyDeviceToDevice); });
    printf("memcpy D2D %ld MB: %.1f us, %.2f TB/s (read+write)\n", E * 2 >> 20, us,
           2.0 * E * 2 / us / 1e6);
  }
  for (int bf = 0; bf < 2; ++bf) {
    for (void* p : {b.x, b.dy, b.r})
      fill<<<4096, 256>>>((unsigned short*)p, E, (unsigned)(size_t)p, bf);
    CK(cudaDeviceSynchronize());
    // Rx: rows in flight per thread; My: __launch_bounds__' blocks per SM; o: the apply grid
    // sized by occupancy (the sums kernels keep their shape-only grid).
    const char* vn[] = {"R1M1", "R1M1o", "R1M2o", "R1M3o", "R1M4o", "R2M3o"};
    const int nv = 6;
    printf("%s: kernel: total us over 9 shapes per variant [%s", bf ? "bf16" : "fp16", vn[0]);
    for (int v = 1; v < nv; ++v) printf(" %s", vn[v]);
    printf("]; TB/s at 802816x64 / 12544x512 / 802816x256\n");
    for (int k = 0; k < 8; ++k) {
      printf("  %-17s", kNames[k]);
      std::vector<float> tot(nv, 0);
      std::vector<std::vector<float>> per(nv);
      for (const Shape& s : shapes)
        for (int v = 0; v < nv; ++v) {
          float us = 0;
#define V(i, R, M) \
  if (v == i)      \
    us = bf ? run<__nv_bfloat16, R, M>(k, b, s.rows, s.C) : run<__half, R, M>(k, b, s.rows, s.C);
          g_occupancy_grid = v > 0;
          V(0, 1, 1) V(1, 1, 1) V(2, 1, 2) V(3, 1, 3) V(4, 1, 4) V(5, 2, 3) tot[v] += us;
          per[v].push_back(us);
        }
      for (int v = 0; v < nv; ++v) printf(" %8.1f", tot[v]);
      printf(" |");
      for (int v = 0; v < nv; ++v) {
        double e1 = 802816.0 * 64, e2 = 12544.0 * 512, e3 = 802816.0 * 256;
        printf(" %.2f/%.2f/%.2f", e1 * bytes_per(k) / per[v][1] / 1e6,
               e2 * bytes_per(k) / per[v][7] / 1e6, e3 * bytes_per(k) / per[v][2] / 1e6);
      }
      printf("\n");
    }
  }
}
