// sg_eval_f32_generic: evaluation at any d up to SG_GENERIC_MAX_D (templates in ../sg_evaluate.cuh).
#include "../sg_evaluate.cuh"

SG_EVAL_GENERIC(float, f32)
