// GPU peer baselines that ../shared/research/cuda_peers.cu does not cover, for the cases the
// prefix-ops issues name: CUB InclusiveSumByKey over variable segments (uniform 1..2048, 2^24 f32),
// CUB DeviceSegmentedSort over variable segments (uniform 1..4096, 2^24 f32), and cuSPARSE
// gtsv2_nopivot / gtsv2 on one system of 2^24 unknowns (f32 and f64). Prints one JSON object.
//
// Build and run (scripts/gpu-bundle-run.sh peers does this):
//   nvcc -O3 -std=c++17 -arch=sm_90 extra_peers.cu -lcusparse -o extra_peers && ./extra_peers
#include <cub/cub.cuh>
#include <cusparse.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)
#define SK(x) do { cusparseStatus_t e = (x); if (e != CUSPARSE_STATUS_SUCCESS) { printf("cuSPARSE error %d at line %d\n", (int)e, __LINE__); exit(1); } } while (0)

// Median of `reps` CUDA-event timings of f(), after one warm-up call.
template <class F> float time_ms(F f, int reps = 20) {
  f();
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    ts.push_back(t);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

// Segment offsets covering n elements, lengths uniform in 1..max_len (the last one cut at n).
std::vector<int> segment_offsets(int n, int max_len, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> len(1, max_len);
  std::vector<int> off{0};
  while (off.back() < n) off.push_back(std::min(n, off.back() + len(rng)));
  return off;
}

template <class T> std::vector<T> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = (T)u(rng);
  return v;
}

template <class T> T* upload(const std::vector<T>& h) {
  T* d;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

void scan_by_key_variable(int n) {
  std::vector<int> off = segment_offsets(n, 2048, 11);
  std::vector<unsigned> keys(n);
  for (size_t s = 0; s + 1 < off.size(); ++s)
    for (int i = off[s]; i < off[s + 1]; ++i) keys[i] = (unsigned)s;
  unsigned* dk = upload(keys);
  float* x = upload(random_values<float>(n, 1));
  float* y;
  CK(cudaMalloc(&y, n * sizeof(float)));
  void* tmp = nullptr;
  size_t tb = 0;
  CK(cub::DeviceScan::InclusiveSumByKey(tmp, tb, dk, x, y, n));
  CK(cudaMalloc(&tmp, tb));
  float t = time_ms([&] { CK(cub::DeviceScan::InclusiveSumByKey(tmp, tb, dk, x, y, n)); });
  printf(" \"cub_inclusive_sum_by_key_segments_1..2048_2^24_f32_ms\": %.4f, \"segments_1..2048\": %zu,\n", t,
         off.size() - 1);
  CK(cudaFree(tmp));
  CK(cudaFree(dk));
  CK(cudaFree(x));
  CK(cudaFree(y));
}

void segmented_sort_variable(int n) {
  std::vector<int> off = segment_offsets(n, 4096, 13);
  int segments = (int)off.size() - 1;
  int* doff = upload(off);
  float* k = upload(random_values<float>(n, 2));
  float* k2;
  CK(cudaMalloc(&k2, n * sizeof(float)));
  void* tmp = nullptr;
  size_t tb = 0;
  CK(cub::DeviceSegmentedSort::SortKeys(tmp, tb, k, k2, n, segments, doff, doff + 1));
  CK(cudaMalloc(&tmp, tb));
  float t = time_ms([&] { CK(cub::DeviceSegmentedSort::SortKeys(tmp, tb, k, k2, n, segments, doff, doff + 1)); });
  printf(" \"cub_segmented_sort_f32_segments_1..4096_2^24_ms\": %.4f, \"segments_1..4096\": %d,\n", t, segments);
  CK(cudaFree(tmp));
  cudaFree(doff);
  cudaFree(k);
  cudaFree(k2);
}

// One dominant system of n unknowns: dl = -1 (0 in row 0), d = 4, du = -1 (0 in the last row).
template <class T, class Size, class Solve>
void one_system(cusparseHandle_t h, int n, const char* name, Size size_fn, Solve solve_fn) {
  std::vector<T> dl(n, (T)-1), d(n, (T)4), du(n, (T)-1);
  dl[0] = 0;
  du[n - 1] = 0;
  T *ddl = upload(dl), *dd = upload(d), *ddu = upload(du);
  T* rhs = upload(random_values<T>(n, 3));
  T* x;
  CK(cudaMalloc(&x, n * sizeof(T)));
  size_t bytes = 0;
  SK(size_fn(h, n, 1, ddl, dd, ddu, x, n, &bytes));
  void* buf;
  CK(cudaMalloc(&buf, bytes));
  // gtsv overwrites its right-hand side: restore it each time and subtract the copy.
  float tc = time_ms([&] { CK(cudaMemcpyAsync(x, rhs, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
  float t = time_ms([&] {
    CK(cudaMemcpyAsync(x, rhs, n * sizeof(T), cudaMemcpyDeviceToDevice));
    SK(solve_fn(h, n, 1, ddl, dd, ddu, x, n, buf));
  });
  printf(" \"cusparse_%s_one_system_2^24_ms\": %.4f,\n", name, t - tc);
  cudaFree(buf);
  cudaFree(ddl);
  cudaFree(dd);
  cudaFree(ddu);
  cudaFree(rhs);
  cudaFree(x);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("{\n \"device\": \"%s\",\n", p.name);
  const int n = 1 << 24;
  scan_by_key_variable(n);
  segmented_sort_variable(n);
  cusparseHandle_t h;
  SK(cusparseCreate(&h));
  one_system<float>(h, n, "sgtsv2_nopivot", cusparseSgtsv2_nopivot_bufferSizeExt, cusparseSgtsv2_nopivot);
  one_system<float>(h, n, "sgtsv2", cusparseSgtsv2_bufferSizeExt, cusparseSgtsv2);
  one_system<double>(h, n, "dgtsv2_nopivot", cusparseDgtsv2_nopivot_bufferSizeExt, cusparseDgtsv2_nopivot);
  SK(cusparseDestroy(h));
  printf(" \"done\": true\n}\n");
  return 0;
}
