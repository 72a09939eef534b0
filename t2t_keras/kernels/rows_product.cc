// y = x W for the few rows of a decoding step, at the speed of reading W.
//
// A step multiplies one row a hypothesis by every decoder matrix and the
// pre-softmax one: the product reads each weight once and does one
// multiply-add with it a row. XLA's CPU dot packs W into panels on every
// call, which at one to a few rows costs more than the arithmetic; here W
// is packed once a set of weights, [ceil(N / P), K, P] (panel p holds
// columns p P .. p P + P - 1 of every row k, zero past N), and each panel is
// read once, front to back, into P / kLanes vector accumulators a row.
// No software prefetch: the CPU's stream prefetchers follow the panels; a
// prefetch 8 panel rows ahead made the chain 1.1-1.2x slower (AVX-512 EPYC).
//
// Computes exactly sum_k x[r, k] W[k, n] in float32, k in order (a
// different rounding order from a library product: values equal to within
// float32 rounding).
//
// The XLA FFI handler t2t_rows_product: x f32[R, K], packed f32[Q, K, P]
// -> y f32[R, N] (N <= Q P). Rounded weights (kernels/quantize.py) are read
// at a quarter or half the bytes: t2t_rows_product_int8 (packed s8[Q, K, P]
// and one scale a column, f32[Q P]: y = (x Q) * s) and
// t2t_rows_product_bf16 (packed bf16[Q, K, P]); each weight converted to
// float32 in registers, the sums in float32. Panels are split in chunks over the calling
// thread and XLA's intra-op thread pool. Compiled on the user's machine by
// rows_product.py (-march=native); P = t2t_rows_panel_width().

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// One vector register's floats, and vectors a row's accumulators take: 4 rows
// of accumulators, a panel's vectors and a broadcast fit in the registers
// (32 with AVX-512, 16 with AVX2 or SSE). A vector type wider than the
// registers is lowered through memory, 3-9x slower.
#if defined(__AVX512F__)
constexpr int kLanes = 16, kVectors = 4;   // 16 + 4 + 1 of 32
#elif defined(__AVX__)
constexpr int kLanes = 8, kVectors = 3;    // 12 + 3 + 1 of 16
#else
constexpr int kLanes = 4, kVectors = 3;
#endif
typedef float Vec __attribute__((vector_size(4 * kLanes)));
constexpr int kPanel = kLanes * kVectors;

// W's kLanes weights at w as float32 lanes: float32 as they are, int8
// converted (sign-extended, then to float), bfloat16 as the high half of a
// float32.
inline Vec Load(const float* w) {
  Vec v;
  std::memcpy(&v, w, sizeof(Vec));
  return v;
}
inline Vec Load(const int8_t* w) {
  // GCC's __builtin_convertvector from 16 bytes runs element by element
  // (the int8 chain 2-4x slower than float32's); the intrinsics are one
  // sign extension and one conversion.
#if defined(__AVX512F__)
  const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
#elif defined(__AVX2__)
  const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w))));
#else
  float f[kLanes];
  for (int i = 0; i < kLanes; ++i) f[i] = w[i];
#endif
  Vec v;
  std::memcpy(&v, &f, sizeof(Vec));
  return v;
}
inline Vec Load(const uint16_t* w) {
  typedef uint16_t Halves __attribute__((vector_size(2 * kLanes)));
  typedef uint32_t Words __attribute__((vector_size(4 * kLanes)));
  Halves h;
  std::memcpy(&h, w, sizeof(Halves));
  const Words bits = __builtin_convertvector(h, Words) << 16;
  Vec v;
  std::memcpy(&v, &bits, sizeof(Vec));
  return v;
}

// Rows r0 .. r0 + RR - 1 of y, columns of panel `panel` (its first `width`
// columns written), each column times its scale where `scale` is given.
template <int RR, typename W>
void PanelRows(const float* x, int64_t k_size, const W* panel,
               const float* scale, float* y, int64_t n_size, int64_t width) {
  Vec acc[RR][kVectors];
  for (int r = 0; r < RR; ++r)
    for (int j = 0; j < kVectors; ++j) acc[r][j] = Vec{};
  for (int64_t k = 0; k < k_size; ++k) {
    const W* w = panel + k * kPanel;
    Vec wv[kVectors];
    for (int j = 0; j < kVectors; ++j) wv[j] = Load(w + j * kLanes);
    for (int r = 0; r < RR; ++r) {
      const float xr = x[r * k_size + k];
      for (int j = 0; j < kVectors; ++j) acc[r][j] += xr * wv[j];
    }
  }
  if (scale != nullptr) {
    for (int j = 0; j < kVectors; ++j) {
      const Vec s = Load(scale + j * kLanes);
      for (int r = 0; r < RR; ++r) acc[r][j] *= s;
    }
  }
  for (int r = 0; r < RR; ++r) {
    if (width == kPanel) {
      for (int j = 0; j < kVectors; ++j)
        std::memcpy(y + r * n_size + j * kLanes, &acc[r][j], sizeof(Vec));
    } else {
      float tail[kPanel];
      for (int j = 0; j < kVectors; ++j)
        std::memcpy(tail + j * kLanes, &acc[r][j], sizeof(Vec));
      std::memcpy(y + r * n_size, tail, width * sizeof(float));
    }
  }
}

template <typename W>
struct Product {
  const float* x;
  const W* packed;
  const float* scales;   // [Q P], or nullptr
  float* y;
  int64_t rows, k_size, n_size, panels, chunk, chunks;
  std::atomic<int64_t> next{0}, done{0};

  // Panels [c chunk, (c + 1) chunk) for every row.
  void Chunk(int64_t c) {
    const int64_t end = std::min(panels, (c + 1) * chunk);
    for (int64_t p = c * chunk; p < end; ++p) {
      const W* panel = packed + p * k_size * kPanel;
      const float* scale = scales ? scales + p * kPanel : nullptr;
      const int64_t width = std::min<int64_t>(kPanel, n_size - p * kPanel);
      for (int64_t r = 0; r < rows; r += 4) {
        const float* xr = x + r * k_size;
        float* yr = y + r * n_size + p * kPanel;
        switch (std::min<int64_t>(4, rows - r)) {
          case 4: PanelRows<4>(xr, k_size, panel, scale, yr, n_size, width); break;
          case 3: PanelRows<3>(xr, k_size, panel, scale, yr, n_size, width); break;
          case 2: PanelRows<2>(xr, k_size, panel, scale, yr, n_size, width); break;
          default: PanelRows<1>(xr, k_size, panel, scale, yr, n_size, width);
        }
      }
    }
  }

  // Claims and computes chunks until none is left.
  void Work() {
    for (int64_t c; (c = next.fetch_add(1)) < chunks;) {
      Chunk(c);
      done.fetch_add(1, std::memory_order_release);
    }
  }
};

template <typename W>
ffi::Error Run(ffi::ThreadPool& pool, const float* x, const W* packed,
               const float* scales, float* y, int64_t rows, int64_t k_size,
               int64_t n_size) {
  auto product = std::make_shared<Product<W>>();
  product->x = x;
  product->packed = packed;
  product->scales = scales;
  product->y = y;
  product->rows = rows;
  product->k_size = k_size;
  product->n_size = n_size;
  product->panels = (n_size + kPanel - 1) / kPanel;
  if (rows == 0 || product->panels == 0) return ffi::Error::Success();
  const int64_t helpers = std::max<int64_t>(0, pool.num_threads() - 1);
  const int64_t per_chunk_target = 4 * (helpers + 1);
  product->chunk = std::max<int64_t>(1, product->panels / per_chunk_target);
  product->chunks = (product->panels + product->chunk - 1) / product->chunk;
  for (int64_t h = 0; h < helpers && h + 1 < product->chunks; ++h)
    pool.Schedule([product] { product->Work(); });
  product->Work();
  // A helper that has not started finds no chunk left and returns; wait
  // only for the chunks claimed by helpers already running.
  while (product->done.load(std::memory_order_acquire) < product->chunks)
    std::this_thread::yield();
  return ffi::Error::Success();
}

template <typename XD, typename WD, typename YD>
bool Shaped(const XD& xd, const WD& wd, const YD& yd) {
  return xd.size() == 2 && wd.size() == 3 && yd.size() == 2 &&
         wd[2] == kPanel && wd[1] == xd[1] && yd[0] == xd[0] &&
         yd[1] <= wd[0] * kPanel;
}

ffi::Error RowsProduct(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                       ffi::Buffer<ffi::F32> packed,
                       ffi::ResultBuffer<ffi::F32> y) {
  const auto xd = x.dimensions(), yd = y->dimensions();
  if (!Shaped(xd, packed.dimensions(), yd)) {
    return ffi::Error::InvalidArgument(
        "t2t_rows_product: expected x [R, K], packed [Q, K, panel width], "
        "y [R, N <= Q panel width]");
  }
  return Run(pool, x.typed_data(), packed.typed_data(), nullptr,
             y->typed_data(), xd[0], xd[1], yd[1]);
}

ffi::Error RowsProductInt8(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                           ffi::Buffer<ffi::S8> packed,
                           ffi::Buffer<ffi::F32> scales,
                           ffi::ResultBuffer<ffi::F32> y) {
  const auto xd = x.dimensions(), wd = packed.dimensions(),
             yd = y->dimensions();
  const auto sd = scales.dimensions();
  if (!Shaped(xd, wd, yd) || sd.size() != 1 || sd[0] != wd[0] * kPanel) {
    return ffi::Error::InvalidArgument(
        "t2t_rows_product_int8: expected x [R, K], packed int8 [Q, K, panel "
        "width], scales [Q panel width], y [R, N <= Q panel width]");
  }
  return Run(pool, x.typed_data(), packed.typed_data(), scales.typed_data(),
             y->typed_data(), xd[0], xd[1], yd[1]);
}

ffi::Error RowsProductBf16(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                           ffi::Buffer<ffi::BF16> packed,
                           ffi::ResultBuffer<ffi::F32> y) {
  const auto xd = x.dimensions(), yd = y->dimensions();
  if (!Shaped(xd, packed.dimensions(), yd)) {
    return ffi::Error::InvalidArgument(
        "t2t_rows_product_bf16: expected x [R, K], packed bfloat16 [Q, K, "
        "panel width], y [R, N <= Q panel width]");
  }
  return Run(pool, x.typed_data(), packed.typed_data(), nullptr,
             y->typed_data(), xd[0], xd[1], yd[1]);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(t2t_rows_product, RowsProduct,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(t2t_rows_product_int8, RowsProductInt8,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::S8>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(t2t_rows_product_bf16, RowsProductBf16,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

extern "C" int t2t_rows_panel_width() { return kPanel; }
