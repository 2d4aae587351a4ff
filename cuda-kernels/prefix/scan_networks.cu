// The prefix-network study variants of the f32 sum (Kogge-Stone, Sklansky, Ladner-Fischer):
// scan_lookback_add_f32_{ks,sk,lf} and scan_rows_warp_l_add_f32_{ks,sk,lf}, in a module of their
// own so that the per-type scan modules compile only what a default scan needs.
#include "scan_lookback_entries.cuh"
#include "scan_batched.cuh"

HK_LOOKBACK_NET(ks, KOGGE_STONE)
HK_LOOKBACK_NET(sk, SKLANSKY)
HK_LOOKBACK_NET(lf, LADNER_FISCHER)

HK_ROWS_NET(ks, KOGGE_STONE)
HK_ROWS_NET(sk, SKLANSKY)
HK_ROWS_NET(lf, LADNER_FISCHER)
