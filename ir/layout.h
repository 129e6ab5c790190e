/* layout.h - the blocked-layout pass for 2-D convolutions (layout.c).
 *
 * ir_layout_nchwc rewrites an imported program so that its convolutions, and the
 * per-channel elementwise computes around them (bias, batch norm folded into it,
 * Relu/Clip, residual Add, the padding of the next conv), compute on activations in the
 * blocked layout [N, ceil(C/block), H, W, block]; the weights are packed (at compile time
 * when they are constants) so the innermost output axis of every conv is the channel
 * block. Conversions back to NCHW are made only where something else reads a blocked
 * tensor (pooling, Reshape, Gemm, graph outputs...), conversions to blocked only where a
 * blocked op reads a full NCHW activation. Channels are padded up to a multiple of the
 * block; padded channels hold zeros and never reach an NCHW tensor.
 */
#ifndef KGEN_LAYOUT_H
#define KGEN_LAYOUT_H

#include "ir.h"
#include "pass.h"   /* ir_pass_layout, its GraphPass */

/* block: 8 or 16. Rewrites p in place (its tensor list; graph outputs keep their names);
 * returns 0, or -1 with ir_fail(). A program without 2-D convs is left as it was. */
int ir_layout_nchwc(Program *p, int block);

/* The block --layout=auto (the default for CPU targets) picks: 16, or 8 for a target with
 * 4- or 8-lane f32 vectors (NEON, AVX2: `lanes`; 0 when unknown), when p has a plain or
 * depthwise 2-D conv with at least 16 output channels over at least 4 pixels (blocking
 * pays there: the register tile vectorizes over the block); else 0 (p stays NCHW). */
int ir_layout_auto_block(const Program *p, int lanes);

#endif
