/* default.c - the default schedule for imported models: operator fusion and simple
 * per-stage loop schedules for the C target.
 * requires: a verified program with its schedule fresh from sch_create.
 *
 * Fusion is expressed with the ordinary primitives:
 *   - an injective compute (no reduction) read by exactly one stage, or read anywhere
 *     but cheap (a pure index shuffle: transpose, reshape, slice, pad), is inlined into
 *     its readers, so chains of elementwise and layout ops become index arithmetic;
 *     except where a reduction would read through it with a computed or strided index
 *     (computed_operands: the cost model for inlining), which makes it a root stage;
 *   - a reduction (conv, matmul, pooling, a norm's statistics) whose only reader reaches
 *     it through same-shaped, identically indexed elementwise steps (bias, activation,
 *     residual add) is computed at that reader's innermost loop: the epilogue runs on
 *     the accumulator while it is in a register;
 *   - everything else (outputs, tensors with several readers, scans) is a root stage
 *     with its own kernel and, if it is an intermediate, a place in the arena.
 */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

/* How many times e reads t. */
static int count_reads(const Expr *e, const Tensor *t)
{
    switch (e->kind) {
    case E_ACCESS: {
        int n = e->u.access.t == t;
        for (int i = 0; i < e->u.access.n; i++)
            n += count_reads(e->u.access.idx[i], t);
        return n;
    }
    case E_BIN: return count_reads(e->u.bin.a, t) + count_reads(e->u.bin.b, t);
    case E_UN: return count_reads(e->u.un.a, t);
    case E_CAST:
    case E_BITCAST: return count_reads(e->u.cast.a, t);
    case E_CALL: {
        int n = 0;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            n += count_reads(e->u.call.args[i], t);
        return n;
    }
    case E_SELECT: return count_reads(e->u.sel.cond, t) + count_reads(e->u.sel.t, t) + count_reads(e->u.sel.f, t);
    case E_REDUCE: return count_reads(e->u.reduce.body, t);
    default: return 0;
    }
}

static int reads_count(const Tensor *r, const Tensor *t)
{
    if (r->kind == T_COMPUTE)
        return count_reads(r->body, t);
    if (r->kind == T_SCAN)
        return count_reads(r->init, t) + count_reads(r->update, t);
    return 0;
}

/* Does e read t inside a reduction (where an inlined body would be recomputed for every
 * step of the reduction)? */
static int read_in_reduce(const Expr *e, const Tensor *t, int in)
{
    switch (e->kind) {
    case E_ACCESS:
        if (e->u.access.t == t && in)
            return 1;
        for (int i = 0; i < e->u.access.n; i++)
            if (read_in_reduce(e->u.access.idx[i], t, in))
                return 1;
        return 0;
    case E_BIN: return read_in_reduce(e->u.bin.a, t, in) || read_in_reduce(e->u.bin.b, t, in);
    case E_UN: return read_in_reduce(e->u.un.a, t, in);
    case E_CAST:
    case E_BITCAST: return read_in_reduce(e->u.cast.a, t, in);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (read_in_reduce(e->u.call.args[i], t, in))
                return 1;
        return 0;
    case E_SELECT:
        return read_in_reduce(e->u.sel.cond, t, in) || read_in_reduce(e->u.sel.t, t, in) ||
               read_in_reduce(e->u.sel.f, t, in);
    case E_REDUCE: return read_in_reduce(e->u.reduce.body, t, 1);
    default: return 0;
    }
}

/* Pure data movement: the body reads one element (maybe under selects, casts). */
static int is_shuffle(const Expr *e)
{
    switch (e->kind) {
    case E_ACCESS:
    case E_INT:
    case E_FLOAT: return 1;
    case E_CAST:
    case E_BITCAST: return is_shuffle(e->u.cast.a);
    case E_SELECT: return is_shuffle(e->u.sel.t) && is_shuffle(e->u.sel.f);
    default: return 0;
    }
}

/* Every access of t in e reads t[axes...] exactly (t has the reader's shape). */
static int identity_reads(const Expr *e, const Tensor *t, IterVar *const *axes, int ndim)
{
    switch (e->kind) {
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            if (!identity_reads(e->u.access.idx[i], t, axes, ndim))
                return 0;
        if (e->u.access.t != t)
            return 1;
        if (e->u.access.n != ndim)
            return 0;
        for (int d = 0; d < ndim; d++) {
            const Expr *x = e->u.access.idx[d];
            int64_t v;
            if (axes[d]->extent == 1 && ir_expr_is_const(x, &v) && v == 0)
                continue;   /* a broadcast read of a size-1 dimension */
            if (x->kind != E_VAR || x->u.var != axes[d]->var)
                return 0;
        }
        return 1;
    case E_BIN: return identity_reads(e->u.bin.a, t, axes, ndim) && identity_reads(e->u.bin.b, t, axes, ndim);
    case E_UN: return identity_reads(e->u.un.a, t, axes, ndim);
    case E_CAST:
    case E_BITCAST: return identity_reads(e->u.cast.a, t, axes, ndim);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (!identity_reads(e->u.call.args[i], t, axes, ndim))
                return 0;
        return 1;
    case E_SELECT:
        return identity_reads(e->u.sel.cond, t, axes, ndim) && identity_reads(e->u.sel.t, t, axes, ndim) &&
               identity_reads(e->u.sel.f, t, axes, ndim);
    case E_REDUCE: return count_reads(e, t) == 0;
    default: return 1;
    }
}


/* The operations e computes on values (its accesses' index arithmetic left out), counted
 * up to max + 1; a division by a value that is not a constant counts max + 1 alone (tens
 * of cycles, a scalar one in a vector loop: a ranged U-Net's nearest Resize table, its
 * input position o * L / O over extents decided at run time, inlined back into the Add
 * that reads it, divided in every element). */
static int value_ops(const Expr *e, int max)
{
    int n = 0;
    int64_t k;
    switch (e->kind) {
    case E_BIN:
        if ((e->u.bin.op == OP_DIV || e->u.bin.op == OP_MOD || e->u.bin.op == OP_FLOORDIV ||
             e->u.bin.op == OP_FLOORMOD) && !ir_expr_is_const(e->u.bin.b, &k) && e->u.bin.b->kind != E_FLOAT)
            return max + 1;
        n = 1 + value_ops(e->u.bin.a, max);
        return n > max ? n : n + value_ops(e->u.bin.b, max - n);
    case E_UN: return 1 + value_ops(e->u.un.a, max);
    case E_CAST:
    case E_BITCAST: return 1 + value_ops(e->u.cast.a, max);
    case E_CALL:
        n = 1;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn) && n <= max; i++)
            n += value_ops(e->u.call.args[i], max - n);
        return n;
    case E_SELECT:
        n = 1 + value_ops(e->u.sel.cond, max);
        n += n > max ? 0 : value_ops(e->u.sel.t, max - n);
        return n > max ? n : n + value_ops(e->u.sel.f, max - n);
    case E_REDUCE: return max + 1;
    default: return 0;
    }
}

/* The stages that read s's tensor. */
static int readers(Schedule *s, Stage *st, Stage **out, int max)
{
    int n = 0;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *r = s->stages.items[i];
        if (r != st && ir_tensor_reads(r->t, st->t)) {
            if (n < max)
                out[n] = r;
            n++;
        }
    }
    return n;
}

/* How many times st's body would run per element of the stages it ends in, were it
 * inlined: its reads by each reader, times the reader's own count where that reader is
 * inlined (decided already: inlining goes from the last stage back). A linear Resize
 * reads its input 4 times; a nearest one inlined into it, reading a stage once, runs that
 * stage 4 times. Capped at cap. */
static int64_t evaluations(Schedule *s, const Stage *st, int64_t cap, int depth)
{
    int64_t n = 0;
    for (int i = 0; i < s->stages.n && n < cap; i++) {
        Stage *r = s->stages.items[i];
        if (r == st || !ir_tensor_reads(r->t, st->t))
            continue;
        int64_t k = reads_count(r->t, st->t);
        if (r->attach == ATTACH_INLINE && k > 0)
            k *= depth < 8 ? evaluations(s, r, cap, depth + 1) : cap;
        n += k;
    }
    return n < cap ? n : cap;
}

/* Would inlining st repeat its work: a body of more than REPEAT_OPS value operations (a
 * linear Resize's weights and taps, not a bias add) whose values end, through one reader
 * at a time, in a stage with more elements than st has (an upsampling Resize: each of
 * st's values computed again for every output that reads it)? */
enum { REPEAT_OPS = 8 };

static int repeats_work(Schedule *s, Stage *st)
{
    if (value_ops(st->t->body, REPEAT_OPS) <= REPEAT_OPS)
        return 0;
    Stage *r = st;
    for (int depth = 0; depth < 8; depth++) {
        Stage *rd[2];
        if (readers(s, r, rd, 2) != 1)
            return 0;
        r = rd[0];
        if (r->attach != ATTACH_INLINE)
            break;
    }
    return r != st && r->attach != ATTACH_INLINE && ir_tensor_numel(r->t) > ir_tensor_numel(st->t);
}

/* The one stage that consumes st's tensor once inlined stages are substituted: every
 * reader of st is that stage or an inlined stage that it consumes in turn, each reading at
 * its own position with st's shape (SiLU's Mul, reading a conv's bias add directly and
 * through the inlined Sigmoid); NULL when there is none. */
static Stage *sole_consumer(Schedule *s, Stage *st, int depth)
{
    Stage *R = NULL;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *r = s->stages.items[i];
        if (r == st || !ir_tensor_reads(r->t, st->t))
            continue;
        if (r->t->kind != T_COMPUTE || !ir_tensor_same_shape(r->t, st->t) ||
            !identity_reads(r->t->body, st->t, r->t->axes, r->t->ndim))
            return NULL;
        Stage *c = r->attach != ATTACH_INLINE ? r : depth < 4 ? sole_consumer(s, r, depth + 1) : NULL;
        if (!c || (R && c != R))
            return NULL;
        R = c;
    }
    return R;
}

/* A cheap step (a bias add, a folded batch norm: at most EPILOGUE_DUP_OPS operations)
 * whose one consumer (sole_consumer) reads it a few times: SiLU's x * sigmoid(x),
 * HardSwish written as x * HardSigmoid(x), GELU's x * (1 + erf(x / sqrt 2)) on a conv's
 * bias add. Repeating it there (the compiler shares the loads) lets the activation join
 * the reduction's epilogue, on the accumulator in registers, instead of a pass of its own
 * over memory (EfficientNet-B0: 65 such passes). */
enum { EPILOGUE_DUP_OPS = 2, EPILOGUE_DUP_READS = 3 };

static int cheap_repeated_step(Schedule *s, Stage *st)
{
    Stage *R = value_ops(st->t->body, EPILOGUE_DUP_OPS) <= EPILOGUE_DUP_OPS ? sole_consumer(s, st, 0) : NULL;
    if (!R)
        return 0;
    int n = 0;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *r = s->stages.items[i];
        if (r != st && (r == R || r->attach == ATTACH_INLINE))
            n += reads_count(r->t, st->t);
    }
    return n <= EPILOGUE_DUP_READS;
}

static int has_select(const Expr *e)
{
    switch (e->kind) {
    case E_SELECT: return 1;
    case E_CAST:
    case E_BITCAST: return has_select(e->u.cast.a);
    default: return 0;
    }
}

/* Is stage si (already decided) inlined somewhere a reduction repeats it: read inside a
 * reduction by a reader, or inlined into a stage that is? memo[i] for stage i: 0 not known
 * yet, 1 no, 2 yes; its readers are decided before it is asked, so an answer stays true,
 * and a chain of n stages costs n scans, not n per stage. */
static int in_reduce_context(Schedule *s, int si, unsigned char *memo, int depth)
{
    Stage *st = s->stages.items[si];
    if (st->attach != ATTACH_INLINE || depth > 64)
        return 0;
    if (memo[si])
        return memo[si] == 2;
    int yes = 0;
    for (int i = 0; i < s->stages.n && !yes; i++) {
        Stage *r = s->stages.items[i];
        if (r == st || !ir_tensor_reads(r->t, st->t))
            continue;
        yes = (r->t->kind == T_COMPUTE && read_in_reduce(r->t->body, st->t, 0)) ||
              in_reduce_context(s, i, memo, depth + 1);
    }
    memo[si] = (unsigned char)(yes + 1);
    return yes;
}

/* A read of t in r's reduction red that indexes t with an axis of red alone, not beside
 * one of r's own axes: x[rc, ...] (a sum over channels, where the guard would repeat for
 * each of them), where a sliding window reads x[c, h + kh, w + kw]. */
typedef struct {
    const Tensor *t, *r;
    const Expr *red;
} WindowRead;

static int reduced_alone(const Expr *e, const void *ctx)
{
    const WindowRead *w = ctx;
    if (e->kind != E_ACCESS || e->u.access.t != w->t)
        return 0;
    for (int i = 0; i < e->u.access.n; i++) {
        const Expr *ix = e->u.access.idx[i];
        int reduced = 0, beside = 0;
        for (int a = 0; a < w->red->u.reduce.naxes && !reduced; a++)
            reduced = ir_expr_uses_var(ix, w->red->u.reduce.axes[a]->var);
        for (int a = 0; a < w->r->ndim && !beside; a++)
            beside = ir_expr_uses_var(ix, w->r->axes[a]->var);
        if (reduced && !beside)
            return 1;
    }
    return 0;
}

/* Do all of st's readers read it only in a sum over a small window (at most WINDOW_MAX
 * steps: depthwise convs, average pooling), not over channels? (A max pool keeps its
 * padded copy: gcc 12 turns its guarded reads into masked gathers, 2.4x slower. A conv
 * over a few channels, 2 x 4 x 4 taps, keeps it too: with the guard inside, its register
 * tile is not taken and it ran 8x slower.) */
enum { WINDOW_MAX = 64 };

static int window_readers(Schedule *s, Stage *st)
{
    int any = 0;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *r = s->stages.items[i];
        if (r == st || !ir_tensor_reads(r->t, st->t))
            continue;
        if (r->t->kind != T_COMPUTE || r->t->body->kind != E_REDUCE || r->t->body->u.reduce.op != RED_SUM)
            return 0;
        int64_t steps = 1;
        for (int a = 0; a < r->t->body->u.reduce.naxes; a++)
            steps *= r->t->body->u.reduce.axes[a]->extent;
        WindowRead w = {st->t, r->t, r->t->body};
        if (steps > WINDOW_MAX || ir_expr_find(r->t->body, reduced_alone, &w))
            return 0;
        any = 1;
    }
    return any;
}

/* A tile size for an extent: the largest divisor of the extent between want/2 and want
 * (no tail, no guard in the vector loop), else want itself (a guarded tail), or the
 * extent when it is smaller. */
static int64_t tile_size(int64_t extent, int64_t want)
{
    if (extent <= want)
        return extent;
    for (int64_t v = want; v * 2 > want; v--)
        if (extent % v == 0)
            return v;
    return want;
}

/* A register tile's rows: tile_size's divisor, else (even_rows) the extent split into
 * equal tiles of at most want (13 rows: 7 and 6, not 8 and 5: the guarded last tile wastes
 * less). */
static int64_t even_rows(int64_t extent, int64_t want)
{
    int64_t tiles = (extent + want - 1) / want;
    return (extent + tiles - 1) / tiles;
}

static int64_t tile_rows(int64_t extent, int64_t want)
{
    int64_t v = tile_size(extent, want);
    return extent % v == 0 ? v : even_rows(extent, want);
}

/* The vectorized columns of a tile: a multiple of 4 lanes that divides the extent (1000
 * classes: 8), else `want` with a guarded last tile; an odd width such as 10 would leave
 * the vector loop with a scalar remainder in every tile. */
static int64_t tile_cols(int64_t extent, int64_t want)
{
    if (extent <= want)
        return extent;
    for (int64_t v = want - want % 4; v >= 4; v -= 4)
        if (extent % v == 0)
            return v;
    return want;
}

/* A run-time extent `dyn` (bound `bound`) at s->plan's dims (a kernel's version for
 * smaller extents, gen/driver.c); the bound for a fixed one, or without a plan. */
static int64_t at_plan(const Schedule *s, const Expr *dyn, int64_t bound)
{
    int64_t e;
    if (!s->plan || !dyn || !ir_dims_fold(s->prog, s->plan, dyn, &e))
        return bound;
    return e >= 1 && e < bound ? e : bound;
}

/* The extent a register tile is chosen for: a run-time axis' extent at the plan */
static int64_t plan_extent(const Schedule *s, const IterVar *iv) { return at_plan(s, iv->dyn, iv->extent); }

static void collect_reads(const Expr *e, PtrVec *out)
{
    switch (e->kind) {
    case E_ACCESS:
        ir_vec_push(out, (void *)e, 1 << 20, "accesses");
        for (int i = 0; i < e->u.access.n; i++)
            collect_reads(e->u.access.idx[i], out);
        return;
    case E_BIN:
        collect_reads(e->u.bin.a, out);
        collect_reads(e->u.bin.b, out);
        return;
    case E_UN: collect_reads(e->u.un.a, out); return;
    case E_CAST:
    case E_BITCAST: collect_reads(e->u.cast.a, out); return;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            collect_reads(e->u.call.args[i], out);
        return;
    case E_SELECT:
        collect_reads(e->u.sel.cond, out);
        collect_reads(e->u.sel.t, out);
        collect_reads(e->u.sel.f, out);
        return;
    case E_REDUCE: collect_reads(e->u.reduce.body, out); return;
    default: return;
    }
}

/* Does one of the indices of access acc use v? */
static int access_uses(const Expr *acc, const Var *v)
{
    for (int k = 0; k < acc->u.access.n; k++)
        if (ir_expr_uses_var(acc->u.access.idx[k], v))
            return 1;
    return 0;
}

/* Which reads of a reduction's body use axis d: *vec_uses, those along the innermost
 * (vectorized) axis (vector loads); *bcast_uses, the others (a value broadcast across the
 * vector). */
static void axis_uses(const PtrVec *reads, const Var *inner, const Var *d, int *vec_uses, int *bcast_uses)
{
    *vec_uses = *bcast_uses = 0;
    for (int i = 0; i < reads->n; i++) {
        const Expr *acc = reads->items[i];
        if (access_uses(acc, inner))
            *vec_uses |= access_uses(acc, d);
        else
            *bcast_uses |= access_uses(acc, d);
    }
}

/* The first input (or constant) that P's body reads along its vector axis, with an index
 * that also uses c (unless NULL), of at least min_bytes: a conv's or a matmul's weights. */
static Tensor *vector_operand(const Stage *P, const Var *c, int64_t min_bytes)
{
    PtrVec reads = {0};
    collect_reads(P->t->body, &reads);
    const Var *v = P->t->axes[P->t->ndim - 1]->var;
    for (int i = 0; i < reads.n; i++) {
        const Expr *acc = reads.items[i];
        Tensor *t = acc->u.access.t;
        if (ir_tensor_is_leaf(t) && access_uses(acc, v) && (!c || access_uses(acc, c)) &&
            ir_tensor_numel(t) * ir_dtype_bytes(t->dtype) >= min_bytes)
            return t;
    }
    return NULL;
}

/* Weight panels. A register tile of V columns reads a matmul's constant B[k, j] at V
 * consecutive columns of every row k, N columns apart: for a transformer's 768 x 3072
 * weights a new page every row, 16 of 64 bytes used per cache line fetched... Stored as
 * panels of V columns (sch_const_panels) each tile reads one contiguous block instead:
 * a 197 x 768 x 3072 product ran at about twice the speed so, AVX2, one core. Only for
 * constants wider than one tile (an NCHWc conv's weights already end in their block). */
static void weight_panels(Schedule *s, Stage *P, int64_t V)
{
    PtrVec reads = {0};
    collect_reads(P->t->body, &reads);
    for (int i = 0; i < reads.n; i++) {
        Tensor *t = ((const Expr *)reads.items[i])->u.access.t;
        if (t->kind == T_CONSTANT && t->ndim >= 2 && t->shape[t->ndim - 1] > V && t->shape[t->ndim - 2] > 1)
            sch_const_panels(s, P, t, V);
    }
}

/* Do neighbouring rows of a register tile on axis `rows` read overlapping windows along
 * the innermost reduce loop (a stride-2 stem conv over NCHW input: x[2w + kw], kw
 * innermost; a depthwise conv's x[w + kw])? gcc then keeps the values one row's step reads
 * for the next rows' steps (predictive commoning), which with 14 rows spills: ResNet-18's
 * stem ran 3.6 -> 6.6 ms. Such tiles keep 8 rows. */
enum { WINDOW_REUSE = 8 };   /* steps of the reduce axis within which a row's reads return */
static int window_rows(const Stage *P, int rows)
{
    const Expr *red = P->t->body;
    if (red->kind != E_REDUCE || red->u.reduce.naxes < 1)
        return 0;
    const Var *inner = red->u.reduce.axes[red->u.reduce.naxes - 1]->var, *w = P->t->axes[rows]->var;
    PtrVec reads = {0};
    collect_reads(red, &reads);
    for (int i = 0; i < reads.n; i++) {
        const Expr *acc = reads.items[i];
        for (int x = 0; x < acc->u.access.n; x++) {
            Expr *ix = acc->u.access.idx[x];
            if (!ir_expr_uses_var(ix, inner) || !ir_expr_uses_var(ix, w))
                continue;
            /* (a row's values come back within a few steps only where the rows' stride is
             * a few of the reduce axis' steps: an STFT's frames, 160 apart, never do) */
            Var *vars[2] = {(Var *)w, (Var *)inner};
            int64_t coef[2];
            RangeMap m = {0};
            if (!ir_index_affine(ix, &m, vars, 2, coef) || !coef[1] || llabs(coef[0]) <= WINDOW_REUSE * llabs(coef[1]))
                return 1;
        }
    }
    return 0;
}

/* The output axis to tile as the register tile's rows: one whose index the reads along
 * the innermost (vectorized) axis do not use, so each vector load serves every row (the
 * output channels of a convolution, the rows of a matmul); else the second innermost. */
static int tile_rows_axis(const Tensor *t, int r)
{
    if (r < 2)
        return -1;
    PtrVec reads = {0};
    collect_reads(t->body, &reads);
    for (int d = r - 2; d >= 0; d--) {
        int vec_uses, bcast_uses;
        if (t->axes[d]->extent < 2)
            continue;
        axis_uses(&reads, t->axes[r - 1]->var, t->axes[d]->var, &vec_uses, &bcast_uses);
        if (!vec_uses)
            return d;
    }
    return r - 2;
}

/* Does P's body read a value that its vector lanes share (an access not along the vector
 * axis: a conv's input value against a vector of weights)? A depthwise conv reads none,
 * its input and weights both along the channels. */
static int broadcast_reads(const Stage *P)
{
    PtrVec reads = {0};
    collect_reads(P->t->body, &reads);
    const Var *v = P->t->axes[P->t->ndim - 1]->var;
    for (int i = 0; i < reads.n; i++)
        if (!access_uses(reads.items[i], v))
            return 1;
    return 0;
}

/* The output axis to tile in blocks of the register tile (beside the rows): one the
 * broadcast reads (those not along the vector axis) do not use, so each broadcast value
 * serves every block, while a vector read does (an NCHWc conv's output channel blocks:
 * one input value, a weight vector per block); -1 when there is none (a matmul). */
static int tile_block_axis(const Tensor *t, int r, int rows)
{
    if (r < 3)
        return -1;
    PtrVec reads = {0};
    collect_reads(t->body, &reads);
    for (int d = r - 2; d >= 0; d--) {
        int vec_uses, bcast_uses;
        if (d == rows || t->axes[d]->extent < 2)
            continue;
        axis_uses(&reads, t->axes[r - 1]->var, t->axes[d]->var, &vec_uses, &bcast_uses);
        if (vec_uses && !bcast_uses)
            return d;
    }
    return -1;
}

/* Weight streaming. A register tile reads its weights (the vector operand) once per
 * output row; when the weights of one group of blocks are about as large as the L2 cache
 * (ResNet-18's 14x14 and 7x7 convs: 295 and 590 KB per two blocks of 16 channels), every
 * row streams them from L2, and the first row of each group from memory, a stall the
 * hardware prefetchers do not hide (a 7x7 conv of 512 channels: 1.40 ms, 1.16 with its
 * weights kept in L2). Streaming instead computes the reduction at the group loop (`at`):
 * its outer reduce loop runs outside the rows, so each chunk of weights (one input-channel
 * block: 18 KB) comes from memory once, prefetched during the previous chunk, and then
 * from L1 for every row; the accumulators of all the group's rows live in a local array
 * that fits L1 beside the chunk (at most 32 KB). */
enum { STREAM_MIN_BYTES = 256 << 10, STREAM_MAX_LOCAL_BYTES = 32 << 10 };

static int streams_weights(const Stage *P, const Stage *E, const IterVar *at, int64_t vector)
{
    int nsp = P->t->ndim, pos = -1, bytes = ir_dtype_bytes(P->t->dtype);
    if (P->leaf.n < nsp + 2)
        return 0;   /* one reduce axis: no chunk to hoist */
    int64_t weights = vector * bytes, local = bytes;
    for (int k = nsp; k < P->leaf.n; k++)
        weights *= ((IterVar *)P->leaf.items[k])->extent;
    for (int k = 0; k < E->leaf.n; k++) {
        if (E->leaf.items[k] == at)
            pos = k;
        else if (pos >= 0)
            local *= ((IterVar *)E->leaf.items[k])->extent;
    }
    return pos >= 0 && weights >= STREAM_MIN_BYTES && local <= STREAM_MAX_LOCAL_BYTES;
}

/* The rest of a streaming tile (streams_weights), P's loops in `order`: the chunk loop
 * first, then the rows, the other reduce loops and the tile. The rows are unrolled, so
 * that each row's tile again has constant indices into the local array and the compiler
 * keeps it in registers while it sums the chunk; and w's next chunk is prefetched, a line
 * per step of the innermost reduce loop, the tile's blocks (pc) taking turns by row. */
static int stream_rows(Stage *P, IterVar **order, int n, IterVar *pc, Tensor *w)
{
    IterVar *rows = NULL;
    for (int k = 1; k < n && order[k]->kind == IV_SPATIAL; k++)
        if (order[k]->extent > 1) {
            if (sch_unroll(P, order[k]))
                return -1;
            rows = order[k];
        }
    return sch_prefetch(P, w, order[0], rows, rows ? pc : NULL);
}

enum { L2_BYTES = 512 << 10 };

/* The bytes of the distinct tensors P reads along its vector axis (*vec: the vector
 * operand, a matmul's or conv's weights) and not along it (*bcast: the broadcast
 * operands); the reads themselves into reads. */
static void operand_bytes(const Stage *P, PtrVec *reads, int64_t *vec, int64_t *bcast)
{
    PtrVec seen = {0};
    collect_reads(P->t->body, reads);
    const Var *v = P->t->axes[P->t->ndim - 1]->var;
    *vec = *bcast = 0;
    for (int i = 0; i < reads->n; i++) {
        const Expr *acc = reads->items[i];
        Tensor *t = acc->u.access.t;
        int dup = 0;
        for (int k = 0; k < seen.n && !dup; k++)
            dup = seen.items[k] == t;
        if (dup)
            continue;
        ir_vec_push(&seen, t, 1 << 20, "tensors");
        *(access_uses(acc, v) ? vec : bcast) += ir_tensor_numel(t) * ir_dtype_bytes(t->dtype);
    }
}

/* Column tiles outside the row tiles. A register tile (rows x columns) reads its vector
 * operand (what the body reads along the columns: a matmul's weights) once per row tile,
 * and its broadcast operands (the other reads: the matmul's left side) once per column
 * tile. With the row tiles outside, each row tile reads the whole vector operand, from
 * memory when it exceeds the L2 cache (a CRNN's classifier: [80, 256] x [256, 6000], 6 MB
 * of weights read for each of 10 row tiles; with the column tiles outside, each weight
 * column tile is read once and then from L1 for every row tile: 4-5x faster, measured
 * side by side on a loaded machine). The bytes each order reads
 * from memory are estimated as the operand's size times the tiles that re-read it when
 * it is over L2_BYTES, its size once otherwise; the column tiles go outside when that
 * reads fewer (a conv's columns are one tile of channels: never). A vector operand that
 * fits L2 is read from memory once either way: the tiles keep their order (an NCHW conv
 * over 2 channels, its columns along W, accumulated a whole 49-row strip in memory). */
static int cols_outer(const Stage *P, int64_t row_tiles, int64_t col_tiles)
{
    if (row_tiles < 2 || col_tiles < 2)
        return 0;
    PtrVec reads = {0};
    int64_t vec, bcast;
    operand_bytes(P, &reads, &vec, &bcast);
    if (vec <= L2_BYTES)
        return 0;
    int64_t rows_outer = vec * row_tiles;
    int64_t cols_out = bcast > L2_BYTES ? bcast * col_tiles : bcast;
    return cols_out < rows_outer;
}

/* The loops of E outside its row tiles `ao` over more rows of the vector operand's (axes
 * that operand does not read: a 4-D matmul's [1, 7, 7, 768] x [768, 3072], the 7 rows of
 * dim 1 outside dim 2's tiles, whose loop re-read the weights, 9 MB, 7 times): the
 * outermost of them (ao itself when there are none), their extents times ao's in *tiles. */
static IterVar *outer_rows(const Stage *P, const Stage *E, IterVar *ao, int64_t *tiles)
{
    PtrVec reads = {0};
    collect_reads(P->t->body, &reads);
    const Var *inner = P->t->axes[P->t->ndim - 1]->var;
    IterVar *first = ao;
    int pos = 0;
    while (pos < E->leaf.n && E->leaf.items[pos] != ao)
        pos++;
    for (int k = pos - 1; k >= 0; k--) {
        IterVar *iv = E->leaf.items[k];
        int d = 0;
        while (d < E->t->ndim && E->t->axes[d] != iv)
            d++;
        if (d == E->t->ndim || d >= P->t->ndim || iv->kind != IV_SPATIAL)
            break;
        int vec_uses, bcast_uses;
        axis_uses(&reads, inner, P->t->axes[d]->var, &vec_uses, &bcast_uses);
        if (vec_uses)
            break;
        *tiles *= iv->extent;
        first = iv;
    }
    return first;
}

/* A tile's output channel blocks (blk: an axis the broadcast operand does not read, a
 * conv's output channels) outside its spatial tiles re-read the input (the broadcast
 * operand) for every block, from L3 or memory when it exceeds L2 (DenseNet's 1x1 convs
 * over 56x56 maps of 224 channels: 2.8 MB, read 16 times, in 28 streams of channel planes
 * that the prefetchers lose); inside, each spatial tile's input stays in L1 for every
 * block, and the weights are what each tile re-reads, from L2 when they fit. For 1x1
 * convs (reductions over channels alone), the bytes each order reads beyond L2 decide,
 * as in cols_outer. */
static int blocks_inner(const Stage *P, const Stage *E, const IterVar *blk, const IterVar *at)
{
    PtrVec reads = {0};
    int64_t vec, bcast;
    operand_bytes(P, &reads, &vec, &bcast);
    const Var *v = P->t->axes[P->t->ndim - 1]->var;
    int64_t tiles = 1;
    int pos = -1;
    for (int k = 0; k < E->leaf.n; k++) {
        IterVar *iv = E->leaf.items[k];
        if (iv == blk)
            pos = k;
        else if (iv == at)
            break;
        else if (pos >= 0)
            tiles *= iv->extent;
    }
    if (pos < 0 || tiles < 2 || blk->extent < 2)
        return 0;
    /* a 1x1 conv's: with a window, each input row serves several output rows from L1 in
     * the blocks-outside order already (ResNet's 3x3 convs ran 15% slower inside) */
    const Expr *red = P->t->body;
    if (red->kind != E_REDUCE)
        return 0;
    for (int i = 0; i < reads.n; i++) {
        const Expr *acc = reads.items[i];
        if (access_uses(acc, v))
            continue;
        for (int x = 0; x < acc->u.access.n; x++) {
            int spatial = 0, window = 0;
            for (int d = 0; d < P->t->ndim; d++)
                spatial |= ir_expr_uses_var(acc->u.access.idx[x], P->t->axes[d]->var);
            for (int k = 0; k < red->u.reduce.naxes; k++)
                window |= red->u.reduce.axes[k]->extent > 1 && ir_expr_uses_var(acc->u.access.idx[x], red->u.reduce.axes[k]->var);
            if (spatial && window)
                return 0;   /* an output position plus a window offset */
        }
    }
    int64_t outer = (bcast > L2_BYTES ? bcast * blk->extent : bcast) + vec;
    int64_t inner = (vec > L2_BYTES ? vec * tiles : vec) + bcast;
    return inner < outer;
}

/* Move loop x of st to just before loop y (the others keep their order). */
static int move_before(Stage *st, IterVar *x, IterVar *y)
{
    IterVar *order[KG_MAX_DIMS + 16];
    int n = 0;
    if (st->leaf.n > KG_MAX_DIMS + 16)
        return ir_fail("%s: too many loops to reorder", st->t->name);
    for (int k = 0; k < st->leaf.n; k++) {
        IterVar *iv = st->leaf.items[k];
        if (iv == y)
            order[n++] = x;
        if (iv != x)
            order[n++] = iv;
    }
    return sch_reorder(st, order, n);
}

/* A matrix-vector product (one output row: a batch-1 Gemm, a classifier) reads each weight
 * once; a register tile of 8 columns with the reduction inside walks the weights down a
 * column, 8 of a cache line's 16 floats at a time (MobileNetV2's 1280 x 1000 classifier:
 * 0.57 ms, a third of memory's speed). Instead its reduction runs over the whole row: the
 * reduce loop outside, the row's accumulators in a local array (at most 32 KB), so the
 * weights stream through in memory order. Is P (computed for epilogue E, whose innermost
 * axis is the vector axis) such a product, with weights of at least STREAM_MIN_BYTES? */
static int is_gemv(const Stage *P, const Stage *E)
{
    int r = E->t->ndim, bytes = ir_dtype_bytes(P->t->dtype);
    if (r < 2 || P->leaf.n <= P->t->ndim || E->t->shape[r - 1] * bytes > STREAM_MAX_LOCAL_BYTES)
        return 0;
    for (int d = 0; d < r - 1; d++)
        if (E->t->shape[d] != 1)
            return 0;
    return vector_operand(P, NULL, STREAM_MIN_BYTES) != NULL;
}

/* The schedule of a matrix-vector product (is_gemv): P computed at E's outermost loop (a
 * unit batch loop) over the whole row, its reduce loops outside, the row in vectors of
 * `lanes`; E's row in vectors of V. With threads (Schedule.threads), weights of
 * GEMV_PARTS_MIN_BYTES or more and a row of whole vectors known when compiling, the row is
 * cut into GEMV_PARTS parts first, outermost and parallel, P computed at the part: each
 * thread streams its part of every weight row (its output elements are too few for the
 * threads' threshold, so it ran on one: a classifier's 1024 x 1000, 4 MB, 55 us of a 0.5 ms
 * MobileNetV3 on two threads). 4 parts: the same columns a thread for 1, 2 or 4 threads. */
enum { GEMV_PARTS = 4, GEMV_PARTS_MIN_BYTES = 1 << 20 };

static int gemv_schedule(Schedule *s, Stage *P, Stage *E, int64_t V, int64_t lanes)
{
    int r = E->t->ndim, nsp = P->t->ndim;
    IterVar *bo, *bi, *po, *pi, *order[KG_MAX_DIMS + 16];
    IterVar *row = E->leaf.items[r - 1];
    int fixed = !E->t->dyn[r - 1] && !row->dyn;
    if (sch_split(E, row, V, &bo, &bi) || (V > 1 && sch_vectorize(E, bi)))
        return -1;
    int64_t weights = ir_dtype_bytes(P->t->dtype) * E->t->shape[r - 1];
    for (int k = nsp; k < P->leaf.n; k++)
        weights *= ((IterVar *)P->leaf.items[k])->extent;
    IterVar *at = E->leaf.items[0];
    if (s->threads && fixed && weights >= GEMV_PARTS_MIN_BYTES && bo->extent >= 2 * GEMV_PARTS) {
        /* parts of whole vectors of P's too (`lanes` columns), so that only the last part
         * has a short one */
        int64_t f = (bo->extent + GEMV_PARTS - 1) / GEMV_PARTS, g = lanes % V == 0 ? lanes / V : 1;
        IterVar *part, *rest;
        if (sch_split(E, bo, (f + g - 1) / g * g, &part, &rest))
            return -1;
        int n = 0;
        order[n++] = part;
        for (int k = 0; k < E->leaf.n && n < KG_MAX_DIMS + 16; k++)
            if (E->leaf.items[k] != part)
                order[n++] = E->leaf.items[k];
        if (sch_reorder(E, order, n) || sch_parallel(E, part))
            return -1;
        at = part;
        /* each part's weights one block in memory: a part's slice of every weight row, 1 KB
         * of a 4 KB row, streamed 1.5x slower (one thread) */
        weight_panels(s, P, rest->extent * V);
    }
    if (sch_compute_at(s, P, E, at))
        return -1;
    int n = 0;
    for (int k = nsp; k < P->leaf.n && n < KG_MAX_DIMS + 16; k++)
        order[n++] = P->leaf.items[k];
    for (int k = 0; k < nsp && n < KG_MAX_DIMS + 16; k++)
        order[n++] = P->leaf.items[k];
    if (sch_reorder(P, order, n) || sch_split(P, P->leaf.items[P->leaf.n - 1], lanes, &po, &pi))
        return -1;
    return sch_vectorize(P, pi);
}

Stage *sch_reduction_at(Schedule *s, Stage *st, Stage **P)
{
    Stage *E = sch_reduction_epilogue(s, st);
    *P = st;
    if (E)
        return E;
    /* no epilogue to ride on: compute into a local copy, then store */
    *P = sch_cache_write(s, st, SCOPE_LOCAL);
    return *P ? st : NULL;
}

int sch_reorder_innermost(Stage *st, IterVar *c, IterVar *a, IterVar *b)
{
    IterVar *order[KG_MAX_DIMS + 16];
    int n = 0;
    if (st->leaf.n > KG_MAX_DIMS + 16)
        return ir_fail("%s: too many loops to reorder", st->t->name);
    for (int k = 0; k < st->leaf.n; k++)
        if (st->leaf.items[k] != a && st->leaf.items[k] != b && st->leaf.items[k] != c)
            order[n++] = st->leaf.items[k];
    if (c)
        order[n++] = c;
    order[n++] = a;
    order[n++] = b;
    return sch_reorder(st, order, n);
}

/* The deepest expression inlining may build here (operations from the root to a leaf,
 * through the inlined bodies): a long chain of elementwise nodes would otherwise become one
 * expression thousands of operations deep, which every pass recurses over; the stage that
 * would pass it is materialized instead. Half of lower/check.c's MAX_INLINED_DEPTH. */
#define MAX_INLINED_DEPTH 1000

/* mark[k] for the stage named as t (passes such as the layout pass rebuild tensors under
 * their names) */
static void mark_named(const Schedule *s, unsigned char *mark, const Tensor *t)
{
    for (int k = 0; t && k < s->stages.n; k++)
        if (!strcmp(((Stage *)s->stages.items[k])->t->name, t->name))
            mark[k] = 1;
}

/* ---------------------------------------------------------------- positions unrolled
 *
 * A body that picks one of several expressions by an axis' position within groups of k
 * (IterVar.unroll_mod: Winograd's transforms, ir/winograd.c, select over ah == 0, ah == 1,
 * ... or over h mod 4) costs a chain of selects per element when that axis is a loop. Split
 * by k with the position unrolled, each copy folds to its one expression (the simplifier
 * decides the selects); the positions go inside the vector loop, so that the copies are one
 * loop body whose common parts the C compiler computes once. A stage that inlines such a
 * body inherits the hint on its axis that indexes the hinted dimension (that axis plus a
 * constant: an epilogue reading the conv at (h, w), the next conv's padding at
 * (h - 1, w - 1)). */
enum { POSITIONS_MAX = 64, POSITIONS_DEPTH = 16 };

typedef struct {
    Schedule *s;
    const Tensor *t;      /* the root stage's tensor */
    int64_t *mods;        /* per axis of t: the period found, 0 none, -1 conflicting ones */
} Positions;

static void note_mod(Positions *c, int d, int64_t k)
{
    if (c->mods[d] == 0)
        c->mods[d] = k;
    else if (c->mods[d] != k)
        c->mods[d] = -1;
}

/* Walks e (a body inlined into c->t, its variables c->t's) for reads of hinted axes. */
static void find_positions(Positions *c, const Expr *e, int depth)
{
    switch (e->kind) {
    case E_ACCESS: {
        Tensor *x = e->u.access.t;
        int n = e->u.access.n;
        for (int i = 0; i < n; i++)
            find_positions(c, e->u.access.idx[i], depth);
        Stage *xs = sch_stage(c->s, x);
        if (!xs || xs->attach != ATTACH_INLINE || x->kind != T_COMPUTE || n != x->ndim || depth >= POSITIONS_DEPTH)
            return;
        for (int d = 0; d < n; d++) {
            int64_t k = x->axes[d]->unroll_mod, off;
            for (int a = 0; k > 1 && a < c->t->ndim; a++)
                if (ir_expr_is_const(ir_sub(e->u.access.idx[d], ir_varref(c->t->axes[a]->var)), &off))
                    note_mod(c, a, k);
        }
        Var *vars[KG_MAX_DIMS];
        for (int d = 0; d < n; d++)
            vars[d] = x->axes[d]->var;
        find_positions(c, ir_subst(x->body, vars, e->u.access.idx, n), depth + 1);
        return;
    }
    case E_BIN:
        find_positions(c, e->u.bin.a, depth);
        find_positions(c, e->u.bin.b, depth);
        return;
    case E_UN: find_positions(c, e->u.un.a, depth); return;
    case E_CAST:
    case E_BITCAST: find_positions(c, e->u.cast.a, depth); return;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            find_positions(c, e->u.call.args[i], depth);
        return;
    case E_SELECT:
        find_positions(c, e->u.sel.cond, depth);
        find_positions(c, e->u.sel.t, depth);
        find_positions(c, e->u.sel.f, depth);
        return;
    case E_REDUCE: find_positions(c, e->u.reduce.body, depth); return;
    default: return;
    }
}

/* The axes of st's tensor to unroll by position (find_positions), their periods in mods;
 * how many (none when the periods multiply past POSITIONS_MAX). The innermost axis, the
 * vector loop's, is not one. */
static int position_axes(Schedule *s, const Stage *st, int64_t *mods, IterVar **pos)
{
    const Tensor *t = st->t;
    int64_t copies = 1;
    int hints = 0;   /* (a program without hints is not walked) */
    for (int i = 0; i < s->stages.n && !hints; i++) {
        const Tensor *x = ((Stage *)s->stages.items[i])->t;
        for (int d = 0; d < x->ndim && x->kind == T_COMPUTE; d++)
            hints |= x->axes[d]->unroll_mod > 1;
    }
    if (!hints)
        return 0;
    for (int d = 0; d < t->ndim; d++)
        mods[d] = t->axes[d]->unroll_mod;
    Positions c = {s, t, mods};
    if (t->kind == T_COMPUTE)
        find_positions(&c, t->body, 0);
    int npos = 0;
    for (int d = 0; d + 1 < t->ndim; d++)
        if (mods[d] > 1 && mods[d] <= t->axes[d]->extent) {
            copies *= mods[d];
            pos[npos++] = t->axes[d];
        }
    return copies > POSITIONS_MAX ? 0 : npos;
}

/* Root stage st (injective, untouched) with its positions unrolled: the hinted axes split
 * by their periods and the positions unrolled, inside the vector loop (*vec, the
 * innermost axis), or just outside it for an axis whose extent the period does not divide
 * or that is decided at run time: each of those positions is guarded in the last group
 * (h < H), and a guard inside the vector loop keeps it from vectorizing (a ranged CRNN's
 * output transform ran 20x slower so); outside, each copy is a vector loop behind its
 * guard. Returns how many position loops it made, or -1 on failure. */
static int unroll_positions(Schedule *s, Stage *st, IterVar **vec)
{
    Tensor *t = st->t;
    int64_t mods[KG_MAX_DIMS] = {0};
    IterVar *pos[KG_MAX_DIMS];
    int npos = position_axes(s, st, mods, pos), ragged[KG_MAX_DIMS] = {0};
    *vec = t->axes[t->ndim - 1];
    for (int i = 0; i < npos; i++) {
        IterVar *o, *in;
        int d = 0;
        while (t->axes[d] != pos[i])
            d++;
        ragged[i] = pos[i]->dyn || pos[i]->extent % mods[d];
        if (mods[d] < pos[i]->extent) {
            if (sch_split(st, pos[i], mods[d], &o, &in))
                return -1;
            pos[i] = in;
        }
    }
    IterVar *order[KG_MAX_DIMS * 2];
    int n = 0;
    for (int k = 0; k < st->leaf.n; k++) {
        IterVar *iv = st->leaf.items[k];
        int is_pos = iv == *vec;
        for (int i = 0; i < npos; i++)
            is_pos |= iv == pos[i];
        if (!is_pos)
            order[n++] = iv;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < npos; i++)
            if (ragged[i] == !pass)
                order[n++] = pos[i];
        if (!pass)
            order[n++] = *vec;
    }
    if (sch_reorder(st, order, n))
        return -1;
    for (int i = 0; i < npos; i++)
        if (sch_unroll(st, pos[i]))
            return -1;
    return npos;
}

/* ---------------------------------------------------------------- inlining cost model
 *
 * A reduction R (a root stage whose body is a reduction: conv, matmul, pooling) evaluates
 * its body once per step of its reduce loops, in its innermost loops, so the index
 * arithmetic of a stage inlined into that body runs at every step. For each operand X that
 * R reads directly inside its reduction and that is inlined, the reads of real buffers
 * (root stages, inputs, constants) that X's body and the bodies inlined into it make are
 * composed into R's variables (substitution) and judged, each as the flat row-major offset
 * into its buffer, simplified under the ranges of R's axes (spatial and reduce):
 *   - computed: the offset is not affine in plain variables (ir_index_affine): a division
 *     or modulo that the ranges do not remove (the NCHWc-to-NCHW conversion's c / 16 and
 *     c % 16, a reshape of blocked data), a min, max, select or cast inside an index, or
 *     a tensor read (a gather);
 *   - strided where R's direct read of X is not: the coefficient on R's innermost output
 *     axis (the axis the default schedule vectorizes) is neither 0 nor 1 while in R's own
 *     index of X it is (a transpose turning vector loads into gathers); or, for a read
 *     that does not use that axis (a broadcast operand, a matmul's rows), the coefficient
 *     on R's innermost reduce axis is neither 0 nor 1 while in R's index of X it is.
 * Such an X is materialized: a root stage of X's own shape, computed once per element in
 * one pass, which R then reads through its own (affine) index: the layout R asks for.
 * Reads that keep an affine index, unit-stride where R's is, stay inlined: a slice, a
 * padding in a depthwise window (a guard is a select around the read, not in its index;
 * sch_default_fuse's own rules decide those), a channel block R reads whole. An X whose
 * own index in R is computed, or whose chain cannot be followed (over COMPOSE_DEPTH_MAX
 * bodies deep, indices of different types), stays as it is. */
enum { COMPOSE_DEPTH_MAX = 32 };

typedef struct {
    Var *vars[2 * KG_MAX_DIMS + 2];
    int nvars;
    int vec, red;       /* vars[] positions of R's innermost output and reduce axes (-1: none) */
    RangeMap ranges;
} ReadCtx;

/* The flat offset of t[idx] (row-major in t's shape) affine in c's variables? 1 with its
 * coefficients in coefs, 0 computed, -1 not judged (indices of different types). */
static int flat_coefs(ReadCtx *c, const Tensor *t, Expr *const *idx, int n, int64_t *coefs)
{
    Expr *off = NULL;
    int64_t stride = 1;
    for (int d = n - 1; d >= 0; d--) {
        if (idx[d]->dtype != idx[n - 1]->dtype)
            return -1;
        Expr *term = ir_mul(idx[d], ir_int(stride, idx[d]->dtype));
        off = off ? ir_add(off, term) : term;
        stride *= t->shape[d];
    }
    if (!off)
        off = ir_idx(0);
    return ir_index_affine(off, &c->ranges, c->vars, c->nvars, coefs);
}

/* Is a composed read, with flat coefficients got (or computed: ok 0), worse than R's
 * direct read of X with coefficients want (see the rule above)? */
static int worse_read(const ReadCtx *c, int ok, const int64_t *got, const int64_t *want)
{
    if (!ok)
        return 1;
    if (c->vec >= 0 && (got[c->vec] != 0 || want[c->vec] != 0))
        return got[c->vec] != 0 && got[c->vec] != 1 && (want[c->vec] == 0 || want[c->vec] == 1);
    return c->red >= 0 && got[c->red] != 0 && got[c->red] != 1 && (want[c->red] == 0 || want[c->red] == 1);
}

static int has_access(const Expr *e)
{
    PtrVec ts = {0};
    ir_expr_tensors(e, &ts);
    return ts.n > 0;
}

/* Does e (a body inlined into R, its variables already R's) read a real buffer through a
 * read worse than want (worse_read)? 1 yes, 0 no, -1 not judged. */
static int composed_worse(Schedule *s, ReadCtx *c, const Expr *e, const int64_t *want, int depth)
{
    switch (e->kind) {
    case E_ACCESS: {
        Tensor *t = e->u.access.t;
        int n = e->u.access.n;
        for (int i = 0; i < n; i++)
            if (has_access(e->u.access.idx[i]))
                return 1;   /* a gather */
        Stage *st = sch_stage(s, t);
        if (st && st->attach == ATTACH_INLINE && t->kind == T_COMPUTE) {
            if (depth >= COMPOSE_DEPTH_MAX || n != t->ndim)
                return -1;
            Var *vars[KG_MAX_DIMS];
            for (int d = 0; d < n; d++)
                vars[d] = t->axes[d]->var;
            return composed_worse(s, c, ir_subst(t->body, vars, e->u.access.idx, n), want, depth + 1);
        }
        int64_t got[2 * KG_MAX_DIMS + 2];
        int ok = flat_coefs(c, t, e->u.access.idx, n, got);
        return ok < 0 ? -1 : worse_read(c, ok, got, want);
    }
    case E_BIN: {
        int a = composed_worse(s, c, e->u.bin.a, want, depth);
        return a ? a : composed_worse(s, c, e->u.bin.b, want, depth);
    }
    case E_UN: return composed_worse(s, c, e->u.un.a, want, depth);
    case E_CAST:
    case E_BITCAST: return composed_worse(s, c, e->u.cast.a, want, depth);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++) {
            int r = composed_worse(s, c, e->u.call.args[i], want, depth);
            if (r)
                return r;
        }
        return 0;
    case E_SELECT: {
        int r = composed_worse(s, c, e->u.sel.t, want, depth);
        return r ? r : composed_worse(s, c, e->u.sel.f, want, depth);
    }
    default: return 0;
    }
}

/* Mark in keep[] the inlined operands that R's reduction body e reads worse composed than
 * directly (the rule above); returns how many it marked. */
static int mark_operands(Schedule *s, ReadCtx *c, const Expr *e, unsigned char *keep)
{
    switch (e->kind) {
    case E_ACCESS: {
        Stage *st = sch_stage(s, e->u.access.t);
        int k = -1, n = e->u.access.n;
        for (int i = 0; st && i < s->stages.n; i++)
            if (s->stages.items[i] == st)
                k = i;
        if (k < 0 || keep[k] || st->attach != ATTACH_INLINE || st->t->kind != T_COMPUTE || n != st->t->ndim)
            return 0;
        int64_t want[2 * KG_MAX_DIMS + 2];
        if (flat_coefs(c, st->t, e->u.access.idx, n, want) != 1)
            return 0;   /* R's own index is computed: materializing X would not fix it */
        Var *vars[KG_MAX_DIMS];
        for (int d = 0; d < n; d++)
            vars[d] = st->t->axes[d]->var;
        if (composed_worse(s, c, ir_subst(st->t->body, vars, e->u.access.idx, n), want, 0) != 1)
            return 0;
        keep[k] = 1;
        return 1;
    }
    case E_BIN: return mark_operands(s, c, e->u.bin.a, keep) + mark_operands(s, c, e->u.bin.b, keep);
    case E_UN: return mark_operands(s, c, e->u.un.a, keep);
    case E_CAST:
    case E_BITCAST: return mark_operands(s, c, e->u.cast.a, keep);
    case E_CALL: {
        int n = 0;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            n += mark_operands(s, c, e->u.call.args[i], keep);
        return n;
    }
    case E_SELECT:
        return mark_operands(s, c, e->u.sel.cond, keep) + mark_operands(s, c, e->u.sel.t, keep) +
               mark_operands(s, c, e->u.sel.f, keep);
    default: return 0;
    }
}

/* The cost model over every root reduction: marks in keep[] the operands to materialize;
 * returns how many it newly marked. */
static int computed_operands(Schedule *s, unsigned char *keep)
{
    int marked = 0;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if (t->kind != T_COMPUTE || st->attach == ATTACH_INLINE || t->body->kind != E_REDUCE ||
            t->ndim + t->body->u.reduce.naxes > 2 * KG_MAX_DIMS + 2)
            continue;
        ReadCtx c = {.vec = -1, .red = -1};
        for (int d = 0; d < t->ndim; d++) {
            ir_range_push(&c.ranges, t->axes[d]->var, 0, t->axes[d]->extent - 1);
            c.vars[c.nvars++] = t->axes[d]->var;
        }
        if (t->ndim > 0 && t->axes[t->ndim - 1]->extent > 1)
            c.vec = t->ndim - 1;
        for (int a = 0; a < t->body->u.reduce.naxes; a++) {
            IterVar *iv = t->body->u.reduce.axes[a];
            ir_range_push(&c.ranges, iv->var, 0, iv->extent - 1);
            c.vars[c.nvars++] = iv->var;
            if (iv->extent > 1)
                c.red = c.nvars - 1;
        }
        marked += mark_operands(s, &c, t->body->u.reduce.body, keep);
    }
    return marked;
}

enum { GUARDED_READS_MAX = 8 };

/* One inlining pass (sch_default_fuse's): the stages marked in keep[] stay root. */
static int fuse_pass(Schedule *s, const unsigned char *keep)
{
    /* above[i]: the depth at which stage i's body ends in its root's expression, counting
     * the bodies it is inlined through (an upper bound) */
    int *above = ir_alloc(sizeof *above * (size_t)(s->stages.n + 1));
    unsigned char *memo = ir_alloc((size_t)s->stages.n + 1);   /* in_reduce_context's */
    /* what the model function reads stays a buffer of its own (ir_lower_model): the
     * condition of a run-time If, to skip the branch not taken; a run-time loop's trip
     * count, and its states' initial and next values, which it copies */
    unsigned char *cond = ir_alloc((size_t)s->stages.n + 1);
    for (int i = 0; i < s->stages.n; i++) {
        const Tensor *t = ((Stage *)s->stages.items[i])->t;
        for (const IrGuard *g = t->guard; g; g = g->up)
            mark_named(s, cond, g->cond);
        const IrLoop *L = t->loop_state;
        if (L && L->state[0] == t) {
            mark_named(s, cond, L->trip);
            for (int k = 0; k < L->nstate; k++) {
                mark_named(s, cond, L->init[k]);
                mark_named(s, cond, L->next[k]);
            }
        }
    }
    /* inline: from the last stage back, so chains collapse into their root */
    for (int i = s->stages.n - 1; i >= 0; i--) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if (t->kind != T_COMPUTE)
            continue;
        above[i] = ir_expr_depth(t->body);
        if (t->is_output || ir_expr_has_reduce(t->body) || cond[i] || keep[i])
            continue;
        Stage *rd[2];
        int n = readers(s, st, rd, 2);
        if (n == 0)
            continue;
        int repeated = 0;   /* would the inlined body run again for every step of a reduction? */
        for (int k = 0; k < s->stages.n && !repeated; k++) {
            Stage *r = s->stages.items[k];
            if (r != st && ir_tensor_reads(r->t, t))
                repeated = (r->t->kind == T_COMPUTE && read_in_reduce(r->t->body, t, 0)) || r->t->kind == T_SCAN ||
                           in_reduce_context(s, k, memo, 0);
        }
        int once = !repeated && ((n == 1 && reads_count(rd[0]->t, t) == 1 && rd[0]->t->kind == T_COMPUTE &&
                                  evaluations(s, st, 2, 0) == 1 && !repeats_work(s, st)) ||
                                 cheap_repeated_step(s, st));
        /* an index shuffle is free to inline, except a guarded one (padding) inside a
         * reduction over channels: its guard would sit in the innermost loop; materialize
         * it instead. Inside a sum over a small window (depthwise conv: a few taps per
         * output) the guard costs less than the padded copy's pass over memory. Nor into a
         * reader that reads it many times an element (GUARDED_READS_MAX: a Winograd input
         * transform reads its padded window 36 times), whose every read would carry the
         * guard (and the lowering's versions of the reader for each of them). */
        int many = 0;
        for (int k = 0; k < s->stages.n && !many; k++) {
            Stage *r = s->stages.items[k];
            many = r != st && reads_count(r->t, t) > GUARDED_READS_MAX;
        }
        int shuffle = is_shuffle(t->body) &&
                      !(has_select(t->body) && ((repeated && !window_readers(s, st)) || many));
        int d = above[i];
        if (once || shuffle) {
            int up = 0;
            for (int k = 0; k < s->stages.n; k++) {
                Stage *r = s->stages.items[k];
                if (k != i && above[k] > up && ir_tensor_reads(r->t, t))
                    up = above[k];
            }
            if (up + d <= MAX_INLINED_DEPTH) {
                if (sch_compute_inline(s, st))
                    return -1;
                d += up;
            }
        }
        above[i] = d;
    }
    return 0;
}

int sch_default_fuse(Schedule *s)
{
    /* inline, then materialize the operands the cost model names and inline again (the
     * stages under a materialized one may now be read once, outside any reduction); each
     * round marks at least one more stage, so this ends */
    unsigned char *keep = ir_alloc((size_t)s->stages.n + 1), *was = ir_alloc((size_t)s->stages.n + 1);
    for (int i = 0; i < s->stages.n; i++)
        was[i] = ((Stage *)s->stages.items[i])->attach == ATTACH_INLINE;
    for (;;) {
        if (fuse_pass(s, keep))
            return -1;
        if (!computed_operands(s, keep))
            return 0;
        for (int i = 0; i < s->stages.n; i++) {
            Stage *st = s->stages.items[i];
            if (st->attach == ATTACH_INLINE && !was[i] && sch_compute_root(st))
                return -1;
        }
    }
}

/* The root stage that ends st's chain of single readers (same shape, identical indexing,
 * inlined all but the last): the epilogue a reduction can be computed at, or NULL. */
Stage *sch_reduction_epilogue(Schedule *s, Stage *st)
{
    Tensor *t = st->t;
    Stage *cur = st, *rd[2];
    if (t->is_output)
        return NULL;
    for (;;) {
        /* an inlined step read by several inlined steps of one consumer: that consumer */
        int n = readers(s, cur, rd, 2);
        Stage *r = n == 1 ? rd[0] : n > 1 && cur->attach == ATTACH_INLINE ? sole_consumer(s, cur, 0) : NULL;
        if (!r)
            return NULL;
        if (r->t->kind != T_COMPUTE || !ir_tensor_same_shape(r->t, t) ||
            !identity_reads(r->t->body, cur->t, r->t->axes, r->t->ndim))
            return NULL;
        cur = r;
        if (r->attach != ATTACH_INLINE)
            break;
    }
    if (cur->attach != ATTACH_ROOT || cur->nrels || cur->leaf.n != t->ndim)
        return NULL;
    /* an epilogue that picks by position (a Winograd output transform joined to it: the
     * residual Add of a downsampling block) keeps its own loops, which unroll them; the
     * reduction's register tile would leave its selects in every element */
    int64_t mods[KG_MAX_DIMS];
    IterVar *pos[KG_MAX_DIMS];
    if (position_axes(s, cur, mods, pos))
        return NULL;
    return cur;
}

/* Is some stage computed at st's loop iv? */
static int is_attach_point(Schedule *s, Stage *st, IterVar *iv)
{
    for (int j = 0; j < s->stages.n; j++) {
        Stage *p = s->stages.items[j];
        if (p->attach == ATTACH_AT && p->attach_stage == st && p->attach_iv == iv)
            return 1;
    }
    return 0;
}

/* Threads: the outer loop of every root compute with enough work (PAR_MIN_ELEMS output
 * elements) is marked parallel, after fusing its leading spatial loops until there are at
 * least PAR_MIN_ITERS iterations to share (an NCHWc conv: parts of its rows x channel
 * blocks x rows of a part, rows_first below). Loops a
 * stage is computed at are not fused (the attached stage's buffers live inside them,
 * private to each iteration), and nothing inside a vectorized or unrolled loop is. The
 * generated C prints KGEN_PARALLEL_FOR, an OpenMP pragma under -fopenmp and nothing
 * otherwise, so the same file builds for one thread anywhere. */
enum { PAR_MIN_ELEMS = SCH_PAR_MIN_ELEMS, PAR_MIN_ITERS = 16, PAR_MAX_LEAD = 8 };

/* The rows a parallel loop divides first (Tensor.rows_axis): on a machine whose cores
 * are far apart (a cache line another core wrote costs hundreds of cycles), a conv that gives each thread
 * half of the output channels reads every input row, half of them from the other core's
 * cache (DenseNet-121, 2 threads: slower than 1). Parts of the rows, outermost, in every
 * kernel, keep each thread on the rows it produced one kernel before (strides and pools
 * keep the proportions). 4 parts when the rows divide by 4 (each thread the same rows for
 * 1, 2 or 4 threads), else 2 when even; odd rows, run-time rows, and rows behind an
 * attached stage's loop are left as they are. */
static int rows_first(Schedule *s, Stage *st)
{
    Tensor *t = st->t;
    int k = t->rows_axis ? t->rows_axis : t->ndim == 5 ? 2 : -1;
    if (k < 0 || k >= t->ndim || t->dyn[k] || t->axes[k]->dyn)
        return 0;   /* (a run-time extent's loops are split by its bound: parts of it would not be halves) */
    IterVar *a = t->axes[k];
    for (int r = 0; r < st->nrels; r++)   /* split by a register tile: its outer loop */
        if (st->rels[r].kind == REL_SPLIT && st->rels[r].parent == a)
            a = st->rels[r].outer;
    int p = -1;
    for (int j = 0; j < st->leaf.n && p < 0; j++) {
        IterVar *l = st->leaf.items[j];
        if (l->kind != IV_SPATIAL || l->ann != ANN_NONE || is_attach_point(s, st, l))
            break;
        if (l == a)
            p = j;
    }
    int64_t parts = a->extent % 4 == 0 && a->extent >= 8 ? 4 : a->extent % 2 == 0 ? 2 : 1;
    if (p <= 0 || p > PAR_MAX_LEAD || parts == 1)
        return 0;
    IterVar *o, *in, *order[PAR_MAX_LEAD + 1];
    if (sch_split(st, a, a->extent / parts, &o, &in))
        return -1;
    order[0] = o;
    for (int j = 0; j < p; j++)
        order[j + 1] = st->leaf.items[j];
    return sch_reorder(st, order, p + 1);
}

/* Does leaf loop iv run over a run-time extent (an axis decided at run time, or a split or
 * fused loop of one)? */
static int leaf_dyn(const Stage *st, const IterVar *iv)
{
    if (iv->dyn)
        return 1;
    for (int r = 0; r < st->nrels; r++) {
        const Relation *rel = &st->rels[r];
        if (rel->kind == REL_SPLIT && (rel->outer == iv || rel->inner == iv))
            return leaf_dyn(st, rel->parent);
        if (rel->kind == REL_FUSE && rel->fused == iv)
            return leaf_dyn(st, rel->outer) || leaf_dyn(st, rel->inner);
    }
    return 0;
}

/* t's elements: at s->plan's dims for a version for smaller extents (gen/driver.c), so that
 * a version whose extents are too small for threads has no parallel loop (its fused index's
 * divisions by run-time extents and a call per iteration cost more than the work: the final
 * resize of a ranged upsampler at 4x4, 250 ns against 50 for its static build); else at the
 * bounds */
static int64_t plan_numel(const Schedule *s, const Tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= at_plan(s, t->dyn[d], t->shape[d]);
    return n;
}

int sch_default_parallel(Schedule *s)
{
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if (ir_tensor_is_leaf(t) || st->attach != ATTACH_ROOT || t->kind != T_COMPUTE || st->leaf.n == 0 ||
            plan_numel(s, t) < PAR_MIN_ELEMS)
            continue;
        if (rows_first(s, st))
            return -1;
        IterVar *f = st->leaf.items[0];
        if (f->kind != IV_SPATIAL || f->ann != ANN_NONE)
            continue;
        while (f->extent < PAR_MIN_ITERS && !is_attach_point(s, st, f) && st->leaf.n > 1) {
            IterVar *next = st->leaf.items[1];
            if (next->kind != IV_SPATIAL || next->ann != ANN_NONE)
                break;
            /* a loop over a run-time extent stays a loop inside the threads' shares, once
             * they have a few: fused, the guards of its last tile (its columns) would be on
             * every iteration, and the runtime-tails pass could not run the whole tiles
             * unguarded (a ranged CRNN's Winograd output transform: 2.5x the static one);
             * its divisions by the run-time extent too */
            if (f->extent >= 4 && leaf_dyn(st, next))
                break;
            if (is_attach_point(s, st, next)) {
                if (f->extent == 1)
                    f = next;   /* (a batch of one) the attach loop itself, unfused */
                break;
            }
            if (sch_fuse(st, f, next, &f))
                return -1;
        }
        if (f->extent >= 2 && sch_parallel(st, f))
            return -1;
    }
    return 0;
}

/* The register tile of kgen's default schedule; the tuner (tune.c) searches others. */
const SchTile sch_tile_default = {8, 16, 1, 1, 1, 2};

int sch_default(Schedule *s)
{
    return sch_default_tiled(s, &sch_tile_default);
}

int sch_default_tiled(Schedule *s, const SchTile *tile)
{
    if (sch_default_fuse(s))
        return -1;
    /* reductions: a register tile of the two innermost output axes, accumulated in a
     * local array (the reduction computed at the tile loop of its same-shaped epilogue,
     * or of a copy made with cache_write), reduce loops outside the tile */
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if (t->kind != T_COMPUTE || st->attach != ATTACH_ROOT || t->body->kind != E_REDUCE || st->nrels ||
            t->ndim == 0)
            continue;
        Stage *P, *E = sch_reduction_at(s, st, &P);
        if (!E)
            return -1;
        if (P != st)
            i++;   /* the cache stage was inserted before st */
        int r = E->t->ndim;
        int lanes = s->simd_lanes ? s->simd_lanes : 16;
        if (tile->k_outer && tile->vectorize && is_gemv(P, E)) {
            if (gemv_schedule(s, P, E, tile_cols(E->t->shape[r - 1], tile->cols), lanes))
                return -1;
            continue;
        }
        int ia = tile->rows > 1 ? tile_rows_axis(P->t, r) : -1;
        IterVar *b = E->leaf.items[r - 1], *a = ia >= 0 ? E->leaf.items[ia] : NULL;
        int64_t aext = a ? plan_extent(s, a) : 1;
        /* A run-time extent's columns: not fewer than 8 for a divisor of the bound. The
         * extent is rarely the bound, and its last tile runs in pieces anyway
         * (lower/tails.c); 4 columns, the divisor of a bound of 20, ran half-width vectors
         * (a conv over 8 of them: 1.9x its static build's time). Not the whole 16 either:
         * a conv over 200 columns at most ran 1.4x slower in 16-column tiles than in 8. */
        int64_t bext = plan_extent(s, b);
        int64_t V = tile_cols(bext, tile->cols);
        if (b->dyn && V < 8 && bext > 8 && tile->cols >= 8)
            V = 8;
        /* blocks: a divisor of the block axis' extent, at most tile->blocks, in the budget */
        int ic = a && tile->blocks > 1 ? tile_block_axis(P->t, r, ia) : -1;
        /* AVX-512's default tile (16 lanes, 32 registers) */
        int avx512 = lanes == 16 && !s->simd_regs && tile == &sch_tile_default;
        /* AVX-512's rows of two vectors where nothing else fills its 32 registers (no
         * block axis: a matmul): the default 16 columns are one vector there, and 8 rows
         * of one leave 8 accumulators beside 9 loads per 8 multiply-adds, which cannot
         * keep two FMA units busy; 32 columns, 16 accumulators (a ViT MLP's [197, 768] x
         * [768, 3072] and back: 0.85x the time of 16 columns on a Zen 5 core). Only where
         * 32 divides the columns: a guarded half-empty last tile costs more. */
        if (avx512 && a && ic < 0 && V == lanes && bext % (2 * lanes) == 0)
            V = 2 * lanes;
        int64_t A = a ? tile_rows(aext, tile->rows) : 1;
        /* the tile's accumulators fit the vector registers with room for the operands:
         * AVX2, 16 registers of 8 lanes: 8; AVX-512, NEON and a target of unknown ISA, 32:
         * 24; a target that counts its registers (s->simd_regs; wasm: 16), three quarters,
         * its rows cut to fit first (6 rows of 2 vectors for wasm's NCHWc8: 12 of 16) */
        int64_t row_vecs = (V + lanes - 1) / lanes;
        int64_t budget = s->simd_regs ? s->simd_regs * 3 / 4 : lanes == 8 ? 8 : 24;
        /* rows cut to fit first where the registers are few: a target that counts them;
         * and AVX2's 16 (lanes 8, no count), where the tile takes as many rows as fit beside
         * its weight vectors and a broadcast value: 14 of one vector (an NCHWc8 conv's row
         * of pixels: 14 accumulators read each weight vector from L2 half as often as 7,
         * 25% faster, ResNet-18's 3x3 convs measured side by side), 6 of two (a matmul's
         * 16 columns: BLAS's 6 x 16 tile for AVX2; 8 rows spilled) */
        int avx2 = lanes == 8 && !s->simd_regs && a;
        int win = avx2 && window_rows(P, ia);
        int64_t row_budget = avx2 ? (win ? 8 : (15 - row_vecs) / row_vecs * row_vecs)
                           : s->simd_regs ? budget : 0;
        if (a && row_budget && (A * row_vecs > row_budget || (avx2 && tile == &sch_tile_default)))
            A = tile_rows(aext, row_budget / row_vecs > 1 ? row_budget / row_vecs : 1);
        /* AVX2's rows of two vectors: a divisor of 4 rows leaves 8 accumulators, too few to
         * keep two FMA units busy; 6-row tiles with a guarded last one instead (ConvNeXt's
         * [56, 56, 96] x [96, 384]: 4 rows 5.5 ms, 6 rows 2.8 ms; 7 rows stay 4 and 3) */
        if (avx2 && row_vecs == 2 && row_budget == 12 && A < 5 && aext > 6)
            A = even_rows(aext, 6);
        /* a matmul's constant weights in panels of the tile's columns */
        if (tile->vectorize && V >= 4)
            weight_panels(s, P, V);
        /* AVX2's rows of one vector (NCHWc8 convs): 14 rows load 1.07 values per multiply-add
         * (a broadcast for each, a weight vector for all), more than two FMA units take;
         * two blocks of 5 to 7 rows load 0.6. Where the rows divide so (CRNN's 3x3 convs over
         * 80, 160 and 320 columns: 35 -> 45 GMAC/s; 7 rows: the 7, 14, 28, 56 and 112
         * columns of ImageNet nets, on a Zen 1 core 1x1 convs 0.80-0.93x and ResNet-18's
         * 3x3 convs 0.72-0.85x the time of 14 rows of one block); a divisor of 4 stays with
         * 14 rows (gcc then unrolls the channel loop and reloads each weight vector per FMA:
         * ResNet-18's 56-column convs ran 1.8x slower). Not where the blocks share no
         * broadcast (a depthwise conv reads its input along the channels: 7 rows of two
         * blocks ran 1.6x slower), and at most 6 rows where neighbouring rows' windows
         * overlap in the inner reduce loop (window_rows: a stem conv over NCHW input, 1.14x
         * slower in 7 rows) */
        int64_t two = tile_size(aext, win ? 6 : 7), blocks = tile->blocks;
        int64_t nblocks = ic >= 0 ? ((IterVar *)E->leaf.items[ic])->extent : 1;
        int shared = avx2 && row_vecs == 1 && ic >= 0 && broadcast_reads(P);
        if (shared && nblocks % 2 == 0 && two >= 5 && aext % two == 0 && (win ? A > 6 : A >= two)) {
            A = two;
            budget = 2 * A;
        } else if (shared && !win && nblocks % 3 == 0 && aext % 4 == 0 && A > 4) {
            /* an odd count of blocks (24 channels: 3): three blocks of 4 rows, 12
             * accumulators, 0.58 loads per multiply-add (mobilenet_v2's 1x1 convs to 24
             * channels: 0.67-0.70x the time of 14 rows of one block, on a Zen 1 core) */
            A = 4;
            budget = 12;
            blocks = blocks > 3 ? blocks : 3;
        } else if (avx512 && ic >= 0 && nblocks % 2 && nblocks % 3 == 0) {
            /* AVX-512, an odd count of blocks that 3 divides (48 channels; 1000 classes as
             * 63 blocks): three blocks of 8 rows, 24 accumulators of its 32 registers,
             * where one block left 8 (squeezenet1_1's 1x1 classifier over 13x13 and its
             * 48-channel squeezes: 0.70x; the model 0.935x on a Zen 5 core) */
            blocks = 3;
        }
        int64_t B = 1, vecs = A * row_vecs;
        if (ic >= 0)
            for (B = blocks; B > 1 && (nblocks % B || B * vecs > budget); B--)
                ;
        IterVar *c = B > 1 ? E->leaf.items[ic] : NULL;
        IterVar *bo, *bi, *ao = NULL, *ai = NULL, *co = NULL, *ci = NULL;
        if (sch_split(E, b, V, &bo, &bi))
            return -1;
        if (a && sch_split(E, a, A, &ao, &ai))
            return -1;
        if (c && sch_split(E, c, B, &co, &ci))
            return -1;
        /* the tile's blocks, rows and columns go innermost, the rest keeps its order */
        if (a && sch_reorder_innermost(E, ci, ai, bi))
            return -1;
        /* the blocks' weights: streamed when large (streams_weights) */
        Tensor *w = c ? vector_operand(P, P->t->axes[ic]->var, 0) : NULL;
        int stream = w && tile->k_outer && streams_weights(P, E, co, B * V);
        /* or the column tiles outside the row tiles, the weights read once (cols_outer):
         * outside every loop over rows, those of the row axes outside the tiles too */
        int64_t row_tiles = a ? ao->extent : 1;
        IterVar *rows_first = a ? outer_rows(P, E, ao, &row_tiles) : NULL;
        int swap = a && !c && cols_outer(P, row_tiles, bo->extent);
        if (swap && move_before(E, bo, rows_first))
            return -1;
        /* or the output channel blocks inside the spatial tiles (blocks_inner) */
        int ib = a && !c && !swap ? tile_block_axis(P->t, r, ia) : -1;
        if (ib >= 0 && blocks_inner(P, E, E->leaf.items[ib], bo) &&
            move_before(E, E->leaf.items[ib], bo))
            return -1;
        if (sch_compute_at(s, P, E, stream ? co : swap ? ao : bo))
            return -1;
        /* in the reduction: reduce loops first, then the tile (rows unrolled, columns
         * vectorized); or, with k_outer off, the rows outside the reduce loops; or,
         * streaming, the outer reduce loop outside every output row of the blocks */
        IterVar *order[KG_MAX_DIMS + 16];
        int n = 0, nsp = P->t->ndim;
        IterVar *pa = ia >= 0 ? P->leaf.items[ia] : NULL, *pb = P->leaf.items[nsp - 1];
        IterVar *pc = c ? P->leaf.items[ic] : NULL;
        if (pc && !tile->k_outer)
            order[n++] = pc;
        if (pa && !tile->k_outer)
            order[n++] = pa;
        if (stream) {
            /* the first reduce loop, the rows (the spatial loops outside the tile, the
             * columns split into tiles), the other reduce loops */
            IterVar *pao, *first = P->leaf.items[nsp];
            if (sch_split(P, pa, A, &pao, &pa))
                return -1;
            order[n++] = first;
            for (int pass = 0; pass < 2; pass++)
                for (int k = 0; k < P->leaf.n && n < KG_MAX_DIMS + 13; k++) {
                    IterVar *iv = P->leaf.items[k];
                    if (pass == 0 ? iv->kind == IV_SPATIAL && iv != pa && iv != pb && iv != pc
                                  : iv->kind == IV_REDUCE && iv != first)
                        order[n++] = iv;
                }
        } else {
            for (int k = nsp; k < P->leaf.n && n < KG_MAX_DIMS + 13; k++)
                order[n++] = P->leaf.items[k];
        }
        /* the tile's blocks, then its rows; AVX2 the other way round: there each row's
         * broadcast value serves the blocks' multiply-adds at once and dies, where blocks
         * outside rows keep all the rows' broadcasts live beside the accumulators (7 rows
         * of 2 blocks: 14 accumulators and 7 broadcasts in 16 registers, spilled: 1.19x
         * the time of 14 rows of one block, mobilenet_v2's 14-column 1x1 convs; rows
         * outside: 0.90x) */
        int rows_out = avx2 && pa && pc && tile->k_outer;
        if (rows_out)
            order[n++] = pa;
        if (pc && tile->k_outer)
            order[n++] = pc;
        if (pa && tile->k_outer && !rows_out)
            order[n++] = pa;
        order[n++] = pb;
        if (sch_reorder(P, order, n))
            return -1;
        if (stream && stream_rows(P, order, n, pc, w))
            return -1;
        if (pc && tile->unroll && sch_unroll(P, pc))
            return -1;
        if (pa && A > 1 && tile->unroll && sch_unroll(P, pa))
            return -1;
        if (V > 1 && tile->vectorize && sch_vectorize(P, pb))
            return -1;
        if (V > 1 && tile->vectorize && sch_vectorize(E, bi))
            return -1;
        /* the epilogue's rows and blocks unrolled too: every access to the local tile then
         * has a constant index, and the compiler keeps the whole tile in registers from the
         * first multiply-add to the store of the epilogue's result */
        if (ai && A > 1 && tile->unroll && sch_unroll(E, ai))
            return -1;
        if (ci && tile->unroll && sch_unroll(E, ci))
            return -1;
    }
    /* vectorize the innermost loop of plain root stages, and of scans: a recurrence's row
     * (its elements read earlier rows only; the dot products inside them become vector
     * loops of their own in the lowering, lower/interchange.c) */
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        int scan = st->t->kind == T_SCAN;
        if (ir_tensor_is_leaf(st->t) || st->attach != ATTACH_ROOT || (st->t->kind != T_COMPUTE && !scan) ||
            st->nrels || st->leaf.n == 0)
            continue;
        IterVar *last = st->leaf.items[st->leaf.n - 1];
        if (last->kind != IV_SPATIAL || (scan ? last == st->t->axes[0] : st->t->body->kind == E_REDUCE))
            continue;
        int attached = 0;
        for (int j = 0; j < s->stages.n && !attached; j++) {
            Stage *p = s->stages.items[j];
            attached = p->attach == ATTACH_AT && p->attach_stage == st;
        }
        if (attached)
            continue;
        /* the positions of a body that picks by them, unrolled inside the vector loop */
        IterVar *vec;
        int npos = scan ? 0 : unroll_positions(s, st, &vec);
        if (npos < 0)
            return -1;
        if (npos) {
            if (vec->kind == IV_SPATIAL && vec->extent >= 4 && vec->extent <= SCH_MAX_VECTOR && sch_vectorize(st, vec))
                return -1;
            continue;
        }
        if (last->extent >= 4 && last->extent <= SCH_MAX_VECTOR) {
            if (sch_vectorize(st, last))
                return -1;
        } else if (last->extent > SCH_MAX_VECTOR) {
            /* a divisor of the extent from 32 to 64 when there is one (224: 56, 230: 46), a
             * vector loop without a bounds check; else 16 lanes with a guarded last chunk
             * (the guard keeps gcc from vectorizing that loop: an NCHW padded copy of 225
             * columns took 0.3 ms for 150K elements) */
            int64_t f = tile_size(last->extent, SCH_MAX_VECTOR);
            IterVar *o, *in;
            if (sch_split(st, last, last->extent % f ? 16 : f, &o, &in) || sch_vectorize(st, in))
                return -1;
        }
    }
    if (sch_default_parallel(s))
        return -1;
    /* tensorize (schedule.c): when the target names a SIMD ISA (-mattr, -mcpu), the
     * register tiles' vector loops call its micro-kernels where they match; a no-op for
     * plain --target c */
    return sch_tensorize_auto(s);
}
