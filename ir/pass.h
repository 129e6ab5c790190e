/* pass.h - the compiler's pipeline as named passes: what `kgen --list-passes` prints and
 * what `--dump=NAME` stops after.
 *
 * Every stage that transforms a program has a name (lower case, words joined by '-') and
 * a one-line description, kept beside the code in a PassInfo table of its level:
 *   graph  tensor-IR passes over a Program (import clean-ups, layout, fusion decisions),
 *   loop   loop-IR passes over a kernel's statements (simplify, unroll, peel, ...),
 * plus the fixed steps between them (the schedule, lowering, printing). A driver that
 * runs a pass calls ir_pass_dump(NAME) afterwards and, when it returns a stream, prints
 * its IR there (ir_print_program for graph passes, ir_print_stmt for loop passes).
 *
 * Graph passes share one signature (GraphPass) and get the facts they may depend on in a
 * PassCtx; the driver (gen/driver.c) runs them in its pipeline list, in order.
 */
#ifndef KGEN_IR_PASS_H
#define KGEN_IR_PASS_H

#include "ir.h"

#include <stdio.h>

typedef struct PassInfo {
    const char *name;   /* as --dump=NAME spells it */
    const char *what;   /* one line: what the pass does */
} PassInfo;

/* What a graph pass may depend on besides the program: plain facts of the target and the
 * options, so that ir/ needs no header of the driver or the printers. */
typedef struct PassCtx {
    const char *source;         /* the input file, for messages ("model.onnx: ...") */
    const char *target;         /* the target's name, for messages */
    int gpu;                    /* a GPU schedule follows (a GPU target, or --schedule=gpu) */
    int simd_lanes;             /* f32 lanes of the target's vectors, 0 without */
    int layout;                 /* --layout: IR_LAYOUT_AUTO, IR_LAYOUT_NCHW, or a block (8, 16) */
    int winograd;               /* --winograd: IR_WINOGRAD_AUTO, _OFF or _ALL */
} PassCtx;

enum { IR_LAYOUT_AUTO = 0, IR_LAYOUT_NCHW = 1 };   /* PassCtx.layout besides the blocks */
/* PassCtx.winograd: the 3x3 convs where it pays, none, or every one it can take */
enum { IR_WINOGRAD_AUTO = 0, IR_WINOGRAD_OFF = 1, IR_WINOGRAD_ALL = 2 };

/* A tensor-IR pass over a whole program: rewrites p in place. 0, or -1 with ir_fail()
 * (a whole message: the pass names the input itself where it matters). */
typedef struct GraphPass {
    PassInfo info;
    int (*run)(Program *p, const PassCtx *ctx);
} GraphPass;

/* The graph passes, one file each (in the order gen/driver.c runs them) */
extern const GraphPass ir_pass_prune;    /* ir/prune.c */
extern const GraphPass ir_pass_layout;   /* ir/layout.c */
extern const GraphPass ir_pass_winograd; /* ir/winograd.c */

/* winograd.c: the blocked 3x3 stride-1 convs of p (after ir_layout_nchwc) as Winograd
 * transforms and channel products; mode IR_WINOGRAD_*. 0, or -1 with ir_fail(). */
int ir_winograd(Program *p, int mode);

/* Every tensor t depends on, t included, appended to seen (in no particular order; a
 * run-time loop's state depends on its whole loop). Linear time, no recursion. */
void ir_tensor_closure(const Program *p, Tensor *t, PtrVec *seen);

/* The --dump request: the pass after which to print the IR, and the stream (NULL name:
 * none). Set once by the driver before compiling. */
void ir_pass_dump_set(const char *name, FILE *out);

/* The stream to print to when NAME is the requested pass, else NULL. */
FILE *ir_pass_dump(const char *name);

#endif
