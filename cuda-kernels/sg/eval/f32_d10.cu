// sg_eval_f32_d10_p{1,2,4}: evaluation at d = 10 (templates in ../sg_evaluate.cuh).
#include "../sg_evaluate.cuh"

SG_EVAL_PTS(float, f32, 10)
