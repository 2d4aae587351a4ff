// Scans with a user-defined operator compiled by NVRTC at run time. The host prepends
//   #define HK_USER_T <C type>   #define HK_USER_IDENTITY <expr>   #define HK_USER_COMBINE(a, b) <expr>
// to this file's embedded source; `a` is the earlier operand. Without them (the nvcc build)
// a float sum is instantiated, which keeps the file compiled and checked on every build.
#include "scan_lookback.cuh"
#include "scan_rows.cuh"

#ifndef HK_USER_T
#define HK_USER_T float
#define HK_USER_IDENTITY (-0.0f)
#define HK_USER_COMBINE(a, b) ((a) + (b))
#endif
#ifndef HK_USER_P
#define HK_USER_P (sizeof(HK_USER_T) > 4 ? 8 : 16)
#endif

struct UserOp {
    typedef HK_USER_T value_type;
    HK_DEVICE HK_USER_T identity() const { return (HK_USER_T)(HK_USER_IDENTITY); }
    HK_DEVICE HK_USER_T operator()(HK_USER_T a, HK_USER_T b) const { return (HK_USER_T)(HK_USER_COMBINE(a, b)); }
};

typedef HK_USER_T UserT;
enum { USER_P = HK_USER_P };

extern "C" __global__ void __launch_bounds__(256)
    scan_user_lookback(const UserT* in, UserT* out, u64 n, u64 row_len, const u64* offsets, u64 n_offsets,
                       u32* status, void* values, int exclusive) {
    scan_lookback_tile<UserT, UserOp, 256, USER_P, KOGGE_STONE, HEADS_NONE>(in, out, n, row_len, offsets,
                                                                            n_offsets, status, values, exclusive);
}

extern "C" __global__ void __launch_bounds__(256)
    scan_user_lookback_rows(const UserT* in, UserT* out, u64 n, u64 row_len, const u64* offsets, u64 n_offsets,
                            u32* status, void* values, int exclusive) {
    scan_lookback_tile<UserT, UserOp, 256, USER_P, KOGGE_STONE, HEADS_ROWS>(in, out, n, row_len, offsets,
                                                                            n_offsets, status, values, exclusive);
}

extern "C" __global__ void __launch_bounds__(256)
    scan_user_lookback_seg(const UserT* in, UserT* out, u64 n, u64 row_len, const u64* offsets, u64 n_offsets,
                           u32* status, void* values, int exclusive) {
    scan_lookback_tile<UserT, UserOp, 256, USER_P, KOGGE_STONE, HEADS_OFFSETS>(in, out, n, row_len, offsets,
                                                                               n_offsets, status, values, exclusive);
}
