/*
** lb_layout.h: where each weight code lives in packed memory.
**
** This one description drives the host packer, the host unpacker and the
** generated device unpack code, so the two sides cannot disagree.
**
** gemlite32 (GemLite's warp-tiled int32 packing, tile 32): the codes of one
** output channel, K of them (zero-padded to kpad), are cut into tiles of
** 32 * codes k-values.  In a tile, lane l (0..31) owns the k-values
** l, l + 32, l + 64, ... as one bit stream of `codes` codes spread over
** `words` 32-bit words; word p of lane l is word p * 32 + l of the tile.
** The stream is big-endian: code 0 sits in the top bits of word 0, as in
** GemLite and HQQ.  For bits 1, 2, 4, 8 one word holds 32 / bits codes;
** other widths run across word boundaries (3 bits: 32 codes in 3 words).
*/
#ifndef lb_layout_h
#define lb_layout_h

#include <stddef.h>
#include <stdint.h>

#include "lb_recipe.h"

typedef struct lb_layout {
  int bits;
  int words;   /* words per lane in a tile */
  int codes;   /* codes per lane in a tile */
  int tile;    /* k-values per tile = 32 * codes */
  int cross;   /* codes run across word boundaries (3, 5, 6, 7 bits) */
} lb_layout;

/* Position of lane code i (0 <= i < codes): word index p in the lane and
** the bit offset of the code's top bit from the top of that word.  When
** off + bits > 32 the code continues in word p + 1. */
typedef struct lb_codepos {
  int word;
  int off;
} lb_codepos;

void lb_layout_of(const lb_recipe *r, lb_layout *lay);
lb_codepos lb_code_pos(const lb_layout *lay, int i);
int lb_kpad(const lb_layout *lay, int k);
size_t lb_row_words(const lb_layout *lay, int k);

#endif
