// sg_eval_f64_d1_p{1,2,4}: evaluation at d = 1 (templates in ../sg_evaluate.cuh).
#include "../sg_evaluate.cuh"

SG_EVAL_PTS(double, f64, 1)
