/* launch.h - the GPU launch pass: a kernel's loop IR split into launches (host and device,
 * as TVM's SplitHostDevice), each with its grid, its shared memory and its barriers
 * checked, as plain data that every GPU printer consumes (emit/cprint.c today). */
#ifndef KGEN_LOWER_LAUNCH_H
#define KGEN_LOWER_LAUNCH_H

#include "../ir/ir.h"
#include "../ir/pass.h"

/* Which GPU index a loop's bind tag names: 0..2 for blockIdx.x/y/z, 3..5 for
 * threadIdx.x/y/z, -1 for anything else. */
int lower_launch_slot(const char *tag);

/* One launch: a top-level statement of the kernel's body, run after the previous one
 * finished, on a grid of blocks of threads. */
typedef struct {
    const Stmt *body;          /* the statement (below the workspace allocations) */
    int64_t ext[6];            /* extents of blockIdx.x/y/z, threadIdx.x/y/z (1 where unbound);
                                  the bound's where dext is set */
    Expr *dext[3];             /* a block index's extent decided at run time (an index Expr of
                                  dims: the host computes the grid), or NULL */
    int64_t shared_bytes;      /* SCOPE_SHARED memory per block */
} LowerLaunch;

/* Does a loop bound to index slot with this extent need a guard in launch l (the launch
 * has more blocks or threads than the loop has iterations)? */
int lower_launch_guarded(const LowerLaunch *l, int slot, const Expr *extent);

typedef struct {
    LowerLaunch *items;        /* malloc'd, n of them */
    int n;
    PtrVec workspace;          /* Buffer*: the workspace allocations around the body, outermost
                                  first (each launch re-allocates the ones it uses) */
} LowerLaunchPlan;

/* What the target allows a launch. */
typedef struct {
    const char *lang;          /* the dialect's name, for messages ("metal") */
    int max_threads;           /* threads per block (-max-threads) */
    int64_t max_shared;        /* shared bytes per block (-max-shared) */
    int no_f64;                /* the language has no double */
} LowerLaunchLimits;

/* Plan the launches of kernel k. 0, or -1 with ir_fail() when the kernel cannot run on the
 * target as scheduled: a loop bound to something other than a GPU index, a bound loop not
 * starting at 0 or with a run-time extent (but for a block index: an Expr of dims, whose
 * largest value counts against the limits), an index bound twice in one nest (but for a cooperative copy into shared
 * memory), f64 where the language has none, a barrier under divergent control flow, a
 * block or grid beyond the limits. With --dump=gpu-launch it prints each launch. Free the
 * plan with lower_launch_free (also after a failure). */
int lower_launch_plan(const Kernel *k, const LowerLaunchLimits *lim, LowerLaunchPlan *plan);
void lower_launch_free(LowerLaunchPlan *plan);

/* The pass's name and line for --list-passes and --dump. */
const PassInfo *lower_launch_pass(void);

#endif
