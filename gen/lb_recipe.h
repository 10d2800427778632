/*
** lb_recipe.h: a recipe after loading: a validated C struct.  Lua runs only
** while loading; nothing downstream touches Lua.
*/
#ifndef lb_recipe_h
#define lb_recipe_h

#include "lowbit.h"

typedef enum lb_dtype { LB_F16, LB_BF16, LB_F32 } lb_dtype;

typedef enum lb_packing { LB_PACK_GEMLITE32 } lb_packing;

/* How a code q becomes a weight, given scale s and zero z. */
typedef enum lb_dequant {
  LB_DQ_SUBMUL,  /* (q - z) * s */
  LB_DQ_MULADD,  /* q * s + z */
  LB_DQ_MUL      /* q * s */
} lb_dequant;

/* Sections of the recipe language, in the order the docs list them. */
typedef enum lb_section {
  LB_S_NAME, LB_S_ACT, LB_S_WEIGHTS, LB_S_SCALES, LB_S_ZEROS, LB_S_DEQUANT,
  LB_S_ACC, LB_S_OUTPUT, LB_S_EPILOGUE, LB_NSECTION
} lb_section;

struct lb_recipe {
  char name[64];
  char file[4096];     /* file name as given, for messages and comments */
  lb_dtype act;        /* activations */
  int bits;            /* weights.bits, 1..8 */
  int is_signed;       /* weights.signed */
  lb_packing packing;  /* weights.packing */
  int group;           /* scales.group; 0 = per channel */
  lb_dtype sdtype;     /* scales.dtype */
  int zeros;           /* 1 when a zeros section is present */
  lb_dtype zdtype;     /* zeros.dtype */
  lb_dequant dequant;
  lb_dtype acc;        /* accumulator */
  lb_dtype out;        /* output */
  int bias;            /* epilogue.bias */
  int line[LB_NSECTION];  /* line of each section, 0 when absent */
};

const char *lb_dtype_name(lb_dtype t);
int lb_dtype_size(lb_dtype t);
const char *lb_dequant_text(lb_dequant d);
const char *lb_section_name(lb_section s);

#endif
