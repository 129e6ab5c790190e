/* passes.c - the loop passes: what every kernel's nest goes through once lower.c has built
 * it, as a table run in order (lower_finish), the list --list-passes prints
 * (lower_loop_passes), and the --dump hook after each of them.
 * requires: a nest of lower_root (or several in a sequence, ir_lower); produces: the
 * kernel's final loops, or -1 with ir_fail() when an annotation cannot hold.
 *
 * A pass may ask for the simplifier after it: always, or only when the loops changed
 * since the last simplification (the passes before it with no simplification of their
 * own included: peeling the tails and the heads share one).
 */
#include "passes.h"

enum {
    RESIMPLIFY_NO,        /* the next pass takes the loops as they are */
    RESIMPLIFY_ALWAYS,
    RESIMPLIFY_CHANGED    /* when they differ from what the last simplification produced */
};

typedef struct {
    PassInfo info;
    int (*run)(Stmt **s);   /* 0, or -1 with ir_fail(); NULL: the simplification alone */
    int resimplify;
} LoopPass;

static int run_unroll(Stmt **s)
{
    *s = lower_unroll(*s);
    return 0;
}

static int run_runtime_tails(Stmt **s)
{
    *s = lower_runtime_tails(*s);
    return 0;
}

static int run_peel_tails(Stmt **s)
{
    *s = lower_peel_tails(*s);
    return 0;
}

static int run_peel_heads(Stmt **s)
{
    *s = lower_peel_heads(*s);
    return 0;
}

static int run_unswitch(Stmt **s)
{
    *s = lower_unswitch(*s);
    return 0;
}

static int run_interchange(Stmt **s)
{
    *s = lower_reduce_interchange(*s);
    return 0;
}

static int run_divisions(Stmt **s)
{
    *s = lower_runtime_divisions(*s);
    return 0;
}

static int run_lanes(Stmt **s)
{
    *s = lower_reduce_lanes(*s);
    return 0;
}

static const LoopPass loop_passes[] = {
    {{"simplify", "fold constants and index arithmetic, drop the guards that always hold"}, NULL,
     RESIMPLIFY_ALWAYS},
    {{"runtime-tails", "a loop whose chunks are guarded by a run-time extent (or a tile loop by a constant one it "
                       "overhangs) runs its whole chunks unguarded, then the rest"},
     run_runtime_tails, RESIMPLIFY_CHANGED},
    {{"unroll", "replicate the body of each unrolled loop, one copy per iteration"}, run_unroll, RESIMPLIFY_ALWAYS},
    {{"peel-tails", "a chunked vector loop's guarded last chunk becomes a loop of its own"}, run_peel_tails,
     RESIMPLIFY_NO},
    {{"peel-heads", "a chunked vector loop's first chunks, where a select's condition varies, become a loop of "
                    "their own"},
     run_peel_heads, RESIMPLIFY_CHANGED},
    {{"unswitch", "a vector loop choosing on a loop-invariant condition becomes an if over two loops"}, run_unswitch,
     RESIMPLIFY_CHANGED},
    {{"reduce-interchange", "a vector loop of dot products gets an accumulator per element, the element loop "
                            "inside the reduction"},
     run_interchange, RESIMPLIFY_CHANGED},
    {{"reduce-lanes", "a serial reduction reading along its loop folds its terms into lanes, a vector loop over "
                      "each chunk of 8, then the lanes into its accumulators"},
     run_lanes, RESIMPLIFY_CHANGED},
    {{"tensorize", "tensorized loops checked against their micro-kernel's pattern (ir/tensorize.c)"}, ir_tensorize,
     RESIMPLIFY_NO},
    {{"runtime-divisions", "a serial loop dividing by a run-time divisor steps the quotient and remainder "
                           "instead; a vector loop's divisions its variable does not change are computed before it"},
     run_divisions, RESIMPLIFY_NO},
    {{"check-loops", "vector loops have constant extents, parallel loops do not nest"}, lower_check_loops,
     RESIMPLIFY_NO},
};
#define NLOOP_PASSES ((int)(sizeof loop_passes / sizeof *loop_passes))

const PassInfo *lower_loop_passes(int *n)
{
    static PassInfo info[NLOOP_PASSES];
    for (int i = 0; i < NLOOP_PASSES; i++)
        info[i] = loop_passes[i].info;
    *n = NLOOP_PASSES;
    return info;
}

int lower_finish(Stmt **b, const char *kernel)
{
    Stmt *simplified = NULL;   /* what the last simplification produced */
    for (int i = 0; i < NLOOP_PASSES; i++) {
        const LoopPass *lp = &loop_passes[i];
        /* an empty nest (every tensor of the kernel is empty) has nothing left to do */
        if (*b) {
            if (lp->run && lp->run(b))
                return -1;
            if (*b && (lp->resimplify == RESIMPLIFY_ALWAYS || (lp->resimplify == RESIMPLIFY_CHANGED && *b != simplified)))
                simplified = *b = ir_simplify_stmt(*b);
        }
        FILE *f = ir_pass_dump(lp->info.name);
        if (f) {
            fprintf(f, "kernel %s after %s:\n", kernel, lp->info.name);
            ir_print_stmt(f, *b, 1);
        }
    }
    return 0;
}
