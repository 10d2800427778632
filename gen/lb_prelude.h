/*
** lb_prelude.h: the device-side format prelude every kernel kind builds
** on.  What a template may use of it:
**   types      lb_act_t, lb_scale_t, lb_zero_t, lb_out_t and their
**              conversions (lb_act2_f32, lb_scale_f32, lb_zero_f32,
**              lb_out_f32, lb_out_from_f32)
**   layout     LB_BITS, LB_WORDS, LB_CODES, LB_TILE; lb_flip (signed
**              codes to offset binary), lb_pair_at (code i of two lanes
**              as a pair of 16-bit A values)
**   dequant    LB_FOLD, LB_CLS, lb_cls, lb_group, lb_dq2, LB_ONES, lb_mma
**   groups     LB_GROUP (grouped), lb_groups, lb_group_of, LB_GPT,
**              lb_gslot, lb_gfirst, lb_slot_group, LB_ZEROS, lb_offset
**   epilogue   lb_epilogue
** and, from lb_emit_prelude_w16 (kernels that dequantise before the MMA:
** the GEMM, the GEMV's two-fragment kernel):
**   lb_crow, lb_crow_of (where code row i sits in its words), lb_gpair
**   (the pair, any code row, no classes), lb_wgroup / lb_w2 (a group's
**   scale and offset; the weight pair in the activation type, its code at
**   bit crow.pos of base + code: lb_pair_at's class c rows have it at 4 c).
*/
#ifndef lb_prelude_h
#define lb_prelude_h

#include "lb_buf.h"
#include "lb_format.h"

/* The prelude, then templates/common.cu (cp.async helpers every kind
** uses). */
void lb_emit_prelude(lb_buf *b, const lb_format *f);
void lb_emit_prelude_w16(lb_buf *b, const lb_format *f);

extern const char lb_tpl_common[];   /* templates/common.cu, embedded */

#endif
