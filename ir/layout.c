/* layout.c - the NCHWc layout pass: 2-D convolutions, and the per-channel elementwise
 * computes between them, rewritten on blocked activations [N, ceil(C/B), H, W, B].
 * requires: a verified program from the importer, not yet scheduled;
 * gives: a verified program with the same outputs (names kept); breaks: nothing.
 *
 * The region of blocked tensors grows in program order:
 *   - a conv: a rank-4 compute sum(rc, rk0, rk1: X[n, ch, y, x] * W[m, rc, rk0, rk1]) as
 *     ir/ops/nn.c builds it, with group 1 (any channel counts: padded), depthwise (one
 *     output channel per input channel), groups whose per-group channel counts are
 *     multiples of B, or groups of G input and G output channels with G dividing B
 *     (RegNet's and ResNeXt's group widths 2..8 in blocks of 16): each block of B output
 *     channels then reads one block of B input channels, and the conv runs as a dense
 *     blocked conv over that block with weights zero outside the groups (B/G times the
 *     MACs, at the dense register tile's speed: 10x RegNetY-400MF's NCHW grouped convs);
 *     other grouped convs stay NCHW;
 *   - a per-channel compute (not a graph output), injective or one reduction over a
 *     window at its top (pooling), that reads a region tensor, each such read at its own
 *     channel index (bias, Relu, Clip, Add, the padding before the next conv, MaxPool,
 *     AveragePool, GlobalAveragePool), or at that plus a multiple of B when its channel
 *     count is one too (ConvTranspose's interleave of phases stacked in one conv): it is
 *     re-indexed with c = co*B + ci;
 *   - a concatenation of region tensors along the channels, every part but the last a
 *     whole number of blocks (match_concat): it reads whole blocks of its parts.
 * Everything else stays NCHW and reads a region tensor through a conversion back
 * (X_to_nchw, a pure index shuffle the default schedule inlines into the reader); a
 * blocked op that reads a full NCHW activation reads it through X_to_nchwc. A group-1
 * conv whose input is NCHW reads it directly (its reduction runs over plain channels),
 * so the stem conv needs neither a conversion nor padded input channels.
 *
 * Blocked weights (packed at compile time when W is constant, else by a compute):
 *   group 1, blocked input  Wp[F/B, C/B, KH, KW, B(ci), B(fi)]
 *   group 1, NCHW input     Wp[F/B, C,   KH, KW, B(fi)]
 *   grouped                 Wp[F/B, (C/g)/B, KH, KW, B(ci), B(fi)]
 *   grouped, G divides B    Wp[F/B, KH, KW, B(ci), B(fi)] (zero where ci, fi differ in group)
 *   depthwise               Wp[C/B, KH, KW, B(c)]
 * so the innermost axis of every read of Wp is the output-channel block, which is also
 * the innermost output axis of the conv: the default register tile vectorizes it, with a
 * few W positions unrolled and the input read as one scalar per (W position, ci).
 *
 * Padded channels hold exact zeros: padded weights and biases are zero, conversions to
 * blocked pad with zero, and an elementwise compute that could turn a zero into something
 * else (Clip with a positive minimum, a bias read of a non-constant...) gets a guard
 * select(c < C, body, 0). Zeros in the padded input channels keep NaN out of the real
 * outputs of the next conv (0 * NaN would not be zero).
 */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int blocked;         /* computed in the blocked layout now */
    Tensor *nt;          /* its replacement: the blocked tensor, or the NCHW one (maybe rebuilt) */
    Tensor *to_nchw;     /* blocked: the conversion back, made when something needs it */
    Tensor *to_blocked;  /* NCHW: the conversion to blocked, made when something needs it */
    Tensor *padded;      /* constant: a copy with the channel dimension padded with zeros */
    int padded_dim;
    int64_t C;           /* blocked: the real channel count */
} Info;

typedef struct {
    Program *old, *np;   /* the program being rewritten, the tensor list being built */
    int B;
    Info *info;          /* per tensor of old, by id */
    PtrVec zeroed;       /* new tensors whose padded channels are known to hold zeros */
    const Tensor *src;   /* the old tensor being rewritten: what add() makes inherits its
                            run-time If branch and loop */
    unsigned char *kept; /* per tensor of old: an output, or read by the model function (a
                            run-time loop's values): it keeps its name and NCHW layout */
} Layout;

enum { CONV_NONE, CONV_NCHW_IN, CONV_BLOCKED, CONV_DEPTHWISE, CONV_GROUP_DIAG };

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static Info *info_of(Layout *L, const Tensor *t)
{
    if (t->id < 0 || t->id >= L->old->tensors.n || L->old->tensors.items[t->id] != t)
        ir_die("layout: '%s' is not a tensor of the program", t->name);
    return &L->info[t->id];
}

/* Append t to the new list. Not ir_program_add: that renumbers t, and the ids of the old
 * tensors index L->info until the end of the pass. */
/* Blocked tb [N, C/B, H, W, B] replacing NCHW t: t's run-time dims N, H and W. */
static Tensor *blocked_dyn(Tensor *tb, const Tensor *t)
{
    if (!tb)
        return NULL;
    static const int map[4] = {0, -1, 2, 3};
    for (int d = 0; d < 4; d++)
        if (map[d] >= 0 && t->dyn[d])
            tb->dyn[map[d]] = tb->axes[map[d]]->dyn = t->dyn[d];
    return tb;
}

static Tensor *add(Layout *L, Tensor *t)
{
    if (!t)
        ir_die("layout: cannot build a tensor: %s", ir_errmsg());
    if (L->np->dims.n && ir_dyn_infer(L->np, t, 0))
        ir_die("layout: %s", ir_errmsg());   /* (lenient: cannot fail) */
    if (ir_program_find(L->np, t->name))
        ir_die("layout: tensor '%s' defined twice", t->name);
    if (L->src && !ir_tensor_is_leaf(t)) {
        t->guard = L->src->guard;
        t->loop = L->src->loop;
    }
    ir_vec_push(&L->np->tensors, t, 1 << 24, "tensors");
    return t;
}

static int kept(Layout *L, const Tensor *t) { return t->is_output || L->kept[t->id]; }

/* Marks the tensors of old named as t. */
static void keep_named(Layout *L, const Tensor *t)
{
    for (int i = 0; t && i < L->old->tensors.n; i++)
        if (!strcmp(((Tensor *)L->old->tensors.items[i])->name, t->name))
            L->kept[i] = 1;
}

/* A name used by neither the old program nor the new one. */
static const char *fresh(Layout *L, const char *base)
{
    const char *name = base;
    for (int k = 1; ir_program_find(L->np, name) || ir_program_find(L->old, name); k++)
        name = ir_fmt("%s_%d", base, k);
    return name;
}

static void mark_zeroed(Layout *L, Tensor *t) { ir_vec_push(&L->zeroed, t, 1 << 24, "tensors"); }

static int is_zeroed(Layout *L, const Tensor *t)
{
    for (int i = 0; i < L->zeroed.n; i++)
        if (L->zeroed.items[i] == t)
            return 1;
    return 0;
}

static Expr *zero(DType t) { return ir_dtype_is_float(t) ? ir_float(0, t) : ir_int(0, t); }
static Expr *v(IterVar *iv) { return ir_varref(iv->var); }
static int is_var(const Expr *e, const Var *x) { return e->kind == E_VAR && e->u.var == x; }

/* a * s + b, leaving out a unit factor */
static Expr *madd(Expr *a, int64_t s, Expr *b)
{
    Expr *x = s == 1 ? a : ir_bin(OP_MUL, a, ir_idx(s));
    return b ? ir_bin(OP_ADD, x, b) : x;
}

/* Axes of a blocked activation [N, C/B, H, W, B]. */
static void blocked_axes(const int64_t *shape, IterVar **ax)
{
    static const char *names[5] = {"n", "co", "h", "w", "ci"};
    for (int d = 0; d < 5; d++)
        ax[d] = ir_itervar_new(names[d], shape[d], IV_SPATIAL);
}

/* ---------------------------------------------------------------- conversions */

/* The blocked version of NCHW tensor x (an old tensor): padded channels read zero. */
static Tensor *to_blocked(Layout *L, Tensor *x_old)
{
    Info *in = info_of(L, x_old);
    if (in->to_blocked)
        return in->to_blocked;
    Tensor *x = in->nt;
    int B = L->B;
    int64_t C = x->shape[1];
    int64_t shape[5] = {x->shape[0], ceil_div(C, B), x->shape[2], x->shape[3], B};
    IterVar *ax[5];
    blocked_axes(shape, ax);
    Expr *c = madd(v(ax[1]), B, v(ax[4]));
    Expr *idx[4] = {v(ax[0]), c, v(ax[2]), v(ax[3])};
    Expr *body = ir_access(x, idx, 4);
    if (C % B)
        body = ir_select(ir_bin(OP_LT, c, ir_idx(C)), body, zero(x->dtype));
    Tensor *t = add(L, ir_compute(fresh(L, ir_fmt("%s_to_nchwc", x->name)), 5, ax, body));
    t->comment = ir_fmt("layout: '%s' NCHW to NCHWc%d", x->name, B);
    mark_zeroed(L, t);
    return in->to_blocked = t;
}

/* The NCHW version of blocked tensor t_old: the padded channels are left out. name: the
 * tensor's name (a graph output keeps its own), NULL for a fresh one. */
static Tensor *to_nchw(Layout *L, Tensor *t_old, const char *name)
{
    Info *in = info_of(L, t_old);
    if (in->to_nchw)
        return in->to_nchw;
    Tensor *tb = in->nt;
    int B = L->B;
    int64_t shape[4] = {tb->shape[0], in->C, tb->shape[2], tb->shape[3]};
    IterVar *ax[4];
    for (int d = 0; d < 4; d++)
        ax[d] = ir_itervar_new(ir_fmt("i%d", d), shape[d], IV_SPATIAL);
    Expr *c = v(ax[1]);
    Expr *idx[5] = {v(ax[0]), ir_bin(OP_DIV, c, ir_idx(B)), v(ax[2]), v(ax[3]), ir_bin(OP_MOD, c, ir_idx(B))};
    Tensor *t = add(L, ir_compute(name ? name : fresh(L, ir_fmt("%s_to_nchw", tb->name)), 4, ax,
                                  ir_access(tb, idx, 5)));
    t->comment = ir_fmt("layout: '%s' NCHWc%d to NCHW", tb->name, B);
    t->rows_axis = 2;
    return in->to_nchw = t;
}

/* Constant x with dimension d (C entries) padded with zeros to a multiple of B. */
static Tensor *padded_const(Layout *L, Tensor *x_old, int d)
{
    Info *in = info_of(L, x_old);
    if (in->padded)
        return in->padded_dim == d ? in->padded : NULL;
    Tensor *x = in->nt;
    int64_t shape[KG_MAX_DIMS], outer = 1, inner = 1, C = x->shape[d], Cp = ceil_div(C, L->B) * L->B;
    size_t esz = (size_t)ir_dtype_bytes(x->dtype);
    for (int k = 0; k < x->ndim; k++) {
        shape[k] = k == d ? Cp : x->shape[k];
        if (k < d)
            outer *= x->shape[k];
        if (k > d)
            inner *= x->shape[k];
    }
    unsigned char *buf = calloc((size_t)(outer * Cp * inner) * esz + 1, 1);
    if (!buf)
        ir_die("out of memory");
    for (int64_t o = 0; o < outer; o++)
        memcpy(buf + (size_t)(o * Cp * inner) * esz, (const unsigned char *)x->data + (size_t)(o * C * inner) * esz,
               (size_t)(C * inner) * esz);
    Tensor *t = add(L, ir_constant(fresh(L, ir_fmt("%s_pad%d", x->name, L->B)), x->dtype, x->ndim, shape, buf));
    free(buf);
    t->comment = ir_fmt("layout: '%s' with channels padded to %lld", x->name, (long long)Cp);
    mark_zeroed(L, t);
    in->padded_dim = d;
    return in->padded = t;
}

/* ---------------------------------------------------------------- rewriting bodies */

typedef struct {
    Layout *L;
    const Tensor *t;     /* blocked mode: the old compute being re-indexed; NULL: NCHW mode */
    Var *from[4];
    Expr *to[4];
    Expr *co, *ci;
} Rw;

/* Does access e read its tensor at t's own channel index c (t's channel count, the index
 * exactly t's channel axis, which no other index uses), or at c + K for a multiple K of
 * the block, t's channel count a multiple of the block too (ConvTranspose's phases
 * stacked in one conv: blocks K/B on)? The offset K, or -1. */
static int64_t chan_offset(const Layout *L, const Expr *e, const Tensor *t)
{
    const Tensor *x = e->u.access.t;
    Var *c = t->axes[1]->var;
    if (x->ndim != 4)
        return -1;
    const Expr *ci = e->u.access.idx[1];
    int64_t K = 0;
    if (ci->kind == E_BIN && ci->u.bin.op == OP_ADD && ir_expr_is_const(ci->u.bin.b, &K))
        ci = ci->u.bin.a;
    if ((K || x->shape[1] != t->shape[1]) &&
        (K < 0 || K % L->B || t->shape[1] % L->B || K + t->shape[1] > x->shape[1]))
        return -1;
    if (!is_var(ci, c))
        return -1;
    for (int d = 0; d < 4; d++)
        if (d != 1 && ir_expr_uses_var(e->u.access.idx[d], c))
            return -1;
    return K;
}

/* The one index of access e that is exactly t's channel axis (none other using it), or -1. */
static int chan_dim(const Expr *e, const Tensor *t)
{
    Var *c = t->axes[1]->var;
    int d = -1;
    for (int k = 0; k < e->u.access.n; k++) {
        if (is_var(e->u.access.idx[k], c)) {
            if (d >= 0)
                return -1;
            d = k;
        } else if (ir_expr_uses_var(e->u.access.idx[k], c))
            return -1;
    }
    return d;
}

static Expr *rw(Rw *k, Expr *e);

static Expr *rw_access(Rw *k, Expr *e)
{
    Layout *L = k->L;
    Tensor *x = e->u.access.t;
    Info *in = info_of(L, x);
    int n = e->u.access.n;
    Expr *idx[KG_MAX_DIMS];
    int64_t K = k->t ? chan_offset(L, e, k->t) : -1;
    if (K >= 0) {
        Tensor *src = in->blocked ? in->nt : ir_tensor_numel(x) > x->shape[1] ? to_blocked(L, x) : NULL;
        if (src) {
            Expr *co = K ? ir_bin(OP_ADD, k->co, ir_idx(K / L->B)) : k->co;
            Expr *bi[5] = {rw(k, e->u.access.idx[0]), co, rw(k, e->u.access.idx[2]), rw(k, e->u.access.idx[3]),
                           k->ci};
            return ir_access(src, bi, 5);
        }
    }
    Tensor *src = in->blocked ? to_nchw(L, x, NULL) : in->nt;
    int d;
    if (k->t && !in->blocked && x->kind == T_CONSTANT && x->data && k->t->shape[1] % L->B &&
        (d = chan_dim(e, k->t)) >= 0 && x->shape[d] == k->t->shape[1]) {
        Tensor *p = padded_const(L, x, d);
        if (p)
            src = p;
    }
    int changed = src != x;
    for (int i = 0; i < n; i++) {
        idx[i] = rw(k, e->u.access.idx[i]);
        changed |= idx[i] != e->u.access.idx[i];
    }
    return changed ? ir_access(src, idx, n) : e;
}

/* Blocked mode: the body of compute k->t re-indexed on the blocked axes; NCHW mode: the
 * body with its reads redirected to the replacements and conversions. */
static Expr *rw(Rw *k, Expr *e)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_LOAD: return e;
    case E_VAR:
        for (int i = 0; k->t && i < 4; i++)
            if (k->from[i] == e->u.var)
                return k->to[i];
        return e;
    case E_BIN: {
        Expr *a = rw(k, e->u.bin.a), *b = rw(k, e->u.bin.b);
        return a == e->u.bin.a && b == e->u.bin.b ? e : ir_bin(e->u.bin.op, a, b);
    }
    case E_UN: {
        Expr *a = rw(k, e->u.un.a);
        return a == e->u.un.a ? e : ir_un(e->u.un.op, a);
    }
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        int changed = 0;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++) {
            args[i] = rw(k, e->u.call.args[i]);
            changed |= args[i] != e->u.call.args[i];
        }
        return changed ? ir_call(e->u.call.fn, args) : e;
    }
    case E_CAST:
    case E_BITCAST: {
        Expr *a = rw(k, e->u.cast.a);
        return a == e->u.cast.a ? e : ir_cast_like(e, a);
    }
    case E_SELECT: {
        Expr *c = rw(k, e->u.sel.cond), *t = rw(k, e->u.sel.t), *f = rw(k, e->u.sel.f);
        return c == e->u.sel.cond && t == e->u.sel.t && f == e->u.sel.f ? e : ir_select(c, t, f);
    }
    case E_ACCESS: return rw_access(k, e);
    case E_REDUCE: {
        Expr *b = rw(k, e->u.reduce.body);
        return b == e->u.reduce.body ? e : ir_reduce(e->u.reduce.op, b, e->u.reduce.axes, e->u.reduce.naxes);
    }
    }
    return e;
}

/* Does e read a tensor that is blocked or replaced? */
static int reads_changed(Layout *L, const Expr *e)
{
    PtrVec r = {0};
    ir_expr_tensors(e, &r);
    for (int i = 0; i < r.n; i++) {
        Info *in = info_of(L, r.items[i]);
        if (in->blocked || in->nt != r.items[i])
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- zero padding */

/* A scalar known at compile time: a literal, or a one-element f32/f64 constant. */
static int scalar_value(const Expr *e, double *out)
{
    if (e->kind == E_FLOAT) {
        *out = e->u.fval;
        return 1;
    }
    if (e->kind == E_INT) {
        *out = (double)e->u.ival;
        return 1;
    }
    if (e->kind == E_CAST)
        return scalar_value(e->u.cast.a, out);
    if (e->kind == E_ACCESS) {
        const Tensor *t = e->u.access.t;
        if (t->kind != T_CONSTANT || !t->data || ir_tensor_numel(t) != 1)
            return 0;
        if (t->dtype == DT_F32)
            *out = *(const float *)t->data;
        else if (t->dtype == DT_F64)
            *out = *(const double *)t->data;
        else
            return 0;
        return 1;
    }
    return 0;
}

/* Is e a read of a blocked tensor's channel (its block, dim 1, or lane, dim 4) through
 * an axis of the reduction red (a sum over channels, which reads the real ones)? */
typedef struct {
    Layout *L;
    const Expr *red;
} ChannelRead;

static int channel_by_reduce(const Expr *e, const void *ctx)
{
    const ChannelRead *c = ctx;
    if (e->kind != E_ACCESS || e->u.access.n != 5 || !is_zeroed(c->L, e->u.access.t))
        return 0;
    for (int a = 0; a < c->red->u.reduce.naxes; a++)
        if (ir_expr_uses_var(e->u.access.idx[1], c->red->u.reduce.axes[a]->var) ||
            ir_expr_uses_var(e->u.access.idx[4], c->red->u.reduce.axes[a]->var))
            return 1;
    return 0;
}

/* Is the (blocked) body e zero wherever every blocked tensor it reads is zero, that is
 * in the padded channels? Conservative: no means a guard. (A pool's window over zeros is
 * zero: a sum, product, max or min of them; a reduction over channels is not, it reads
 * the real ones.) */
static int keeps_zero(Layout *L, const Expr *e)
{
    double s;
    switch (e->kind) {
    case E_INT: return e->u.ival == 0;
    case E_FLOAT: return e->u.fval == 0;
    case E_ACCESS: return is_zeroed(L, e->u.access.t);
    case E_CAST: return keeps_zero(L, e->u.cast.a);
    case E_UN: return e->u.un.op == UN_NEG && keeps_zero(L, e->u.un.a);
    case E_SELECT: return keeps_zero(L, e->u.sel.t) && keeps_zero(L, e->u.sel.f);
    case E_REDUCE: {
        ChannelRead c = {L, e};
        return keeps_zero(L, e->u.reduce.body) && !ir_expr_find(e->u.reduce.body, channel_by_reduce, &c);
    }
    case E_BIN: {
        const Expr *a = e->u.bin.a, *b = e->u.bin.b;
        int za = keeps_zero(L, a), zb = keeps_zero(L, b);
        switch (e->u.bin.op) {
        case OP_ADD:
        case OP_SUB: return za && zb;
        case OP_MUL:
            return (za && zb) || (za && scalar_value(b, &s) && s - s == 0) || (zb && scalar_value(a, &s) && s - s == 0);
        case OP_DIV: return za && scalar_value(b, &s) && s != 0 && s - s == 0;
        case OP_MAX: return (za && zb) || (za && scalar_value(b, &s) && s <= 0) || (zb && scalar_value(a, &s) && s <= 0);
        case OP_MIN: return (za && zb) || (za && scalar_value(b, &s) && s >= 0) || (zb && scalar_value(a, &s) && s >= 0);
        default: return 0;
        }
    }
    default: return 0;
    }
}

/* ---------------------------------------------------------------- convolutions */

typedef struct {
    Tensor *x, *w;       /* old tensors: the (padded) input and the weights */
    Expr *xi[4];         /* the input's indices in the old body */
    Var *old[5];         /* the old n, h, w axes and rk0, rk1 */
    int64_t C, M, cg, mg, group, KH, KW;
} Conv;

/* (m / mg) * cg + rc, as nn.c writes a grouped conv's input channel */
static int group_chan(const Expr *e, const Var *m, int64_t mg, int64_t cg, const Var *rc)
{
    int64_t k;
    if (e->kind != E_BIN || e->u.bin.op != OP_ADD || !is_var(e->u.bin.b, rc))
        return 0;
    const Expr *a = e->u.bin.a;
    if (cg != 1) {
        if (a->kind != E_BIN || a->u.bin.op != OP_MUL || !ir_expr_is_const(a->u.bin.b, &k) || k != cg)
            return 0;
        a = a->u.bin.a;
    }
    return a->kind == E_BIN && a->u.bin.op == OP_DIV && is_var(a->u.bin.a, m) && ir_expr_is_const(a->u.bin.b, &k) &&
           k == mg;
}

static int match_conv(const Tensor *t, Conv *m)
{
    if (t->kind != T_COMPUTE || t->ndim != 4 || t->body->kind != E_REDUCE)
        return 0;
    const Expr *r = t->body;
    if (r->u.reduce.op != RED_SUM || r->u.reduce.naxes != 3)
        return 0;
    const Expr *b = r->u.reduce.body;
    if (b->kind != E_BIN || b->u.bin.op != OP_MUL)
        return 0;
    const Expr *xa = b->u.bin.a, *wa = b->u.bin.b;
    if (xa->kind != E_ACCESS || wa->kind != E_ACCESS || xa->u.access.n != 4 || wa->u.access.n != 4)
        return 0;
    Tensor *x = xa->u.access.t, *w = wa->u.access.t;
    if (x->dtype != t->dtype || w->dtype != t->dtype)
        return 0;
    IterVar **ra = r->u.reduce.axes;
    Var *a1 = t->axes[1]->var, *rc = ra[0]->var;
    Var *wv[4] = {a1, rc, ra[1]->var, ra[2]->var};
    for (int d = 0; d < 4; d++)
        if (!is_var(wa->u.access.idx[d], wv[d]) || w->shape[d] != (d ? ra[d - 1]->extent : t->shape[1]))
            return 0;
    m->x = x;
    m->w = w;
    m->C = x->shape[1];
    m->M = w->shape[0];
    m->cg = w->shape[1];
    m->KH = w->shape[2];
    m->KW = w->shape[3];
    if (m->C % m->cg)
        return 0;
    m->group = m->C / m->cg;
    if (m->M % m->group)
        return 0;
    m->mg = m->M / m->group;
    Expr *const *xi = xa->u.access.idx;
    if (!is_var(xi[0], t->axes[0]->var))
        return 0;
    if (m->group == 1 ? !is_var(xi[1], rc) : !group_chan(xi[1], a1, m->mg, m->cg, rc))
        return 0;
    for (int d = 2; d < 4; d++)
        if (ir_expr_uses_var(xi[d], a1) || ir_expr_uses_var(xi[d], rc) || ir_expr_uses_var(xi[d], t->axes[0]->var))
            return 0;
    for (int d = 0; d < 4; d++)
        m->xi[d] = xi[d];
    m->old[0] = t->axes[0]->var;
    m->old[1] = t->axes[2]->var;
    m->old[2] = t->axes[3]->var;
    m->old[3] = ra[1]->var;
    m->old[4] = ra[2]->var;
    return 1;
}

static int conv_mode(Layout *L, const Conv *m)
{
    if (m->group == 1)
        return info_of(L, m->x)->blocked ? CONV_BLOCKED : CONV_NCHW_IN;
    if (m->cg == 1 && m->mg == 1)
        return CONV_DEPTHWISE;
    if (m->cg % L->B == 0 && m->mg % L->B == 0)
        return CONV_BLOCKED;
    if (m->cg == m->mg && L->B % m->cg == 0)
        return CONV_GROUP_DIAG;
    return CONV_NONE;   /* a grouped conv that blocks badly: left NCHW */
}

/* Where packed element idx comes from: W[f, c, kh, kw] (see the table on top); c is cg
 * (out of range: a zero) where the element lies outside every group. */
static void pack_source(int mode, int B, int64_t cg, const int64_t *i, int64_t *f, int64_t *c, int64_t *kh,
                        int64_t *kw)
{
    switch (mode) {
    case CONV_NCHW_IN: *f = i[0] * B + i[4], *c = i[1], *kh = i[2], *kw = i[3]; break;
    case CONV_BLOCKED: *f = i[0] * B + i[5], *c = i[1] * B + i[4], *kh = i[2], *kw = i[3]; break;
    case CONV_GROUP_DIAG: {
        int64_t ca = i[0] * B + i[3];   /* the input channel */
        *f = i[0] * B + i[4], *kh = i[1], *kw = i[2];
        *c = ca / cg == *f / cg ? ca % cg : cg;
        break;
    }
    default: *f = i[0] * B + i[3], *c = 0, *kh = i[1], *kw = i[2]; break;
    }
}

static Tensor *pack_weights(Layout *L, const Conv *m, int mode)
{
    Tensor *w = info_of(L, m->w)->nt;
    int B = L->B, nd;
    int64_t Mb = ceil_div(m->M, B), shape[6];
    switch (mode) {
    case CONV_NCHW_IN:
        nd = 5;
        shape[0] = Mb, shape[1] = m->cg, shape[2] = m->KH, shape[3] = m->KW, shape[4] = B;
        break;
    case CONV_BLOCKED:
        nd = 6;
        shape[0] = Mb, shape[1] = ceil_div(m->cg, B), shape[2] = m->KH, shape[3] = m->KW, shape[4] = B, shape[5] = B;
        break;
    case CONV_GROUP_DIAG:
        nd = 5;
        shape[0] = Mb, shape[1] = m->KH, shape[2] = m->KW, shape[3] = B, shape[4] = B;
        break;
    default:
        nd = 4;
        shape[0] = Mb, shape[1] = m->KH, shape[2] = m->KW, shape[3] = B;
        break;
    }
    const char *name = fresh(L, ir_fmt("%s_nchwc%d", w->name, B));
    Tensor *t;
    if (w->kind == T_CONSTANT && w->data) {
        int64_t n = 1;
        for (int d = 0; d < nd; d++)
            n *= shape[d];
        size_t esz = (size_t)ir_dtype_bytes(w->dtype);
        unsigned char *buf = calloc((size_t)n * esz + 1, 1);
        if (!buf)
            ir_die("out of memory");
        for (int64_t e = 0; e < n; e++) {
            int64_t i[6], r = e, f, c, kh, kw;
            for (int d = nd - 1; d >= 0; d--) {
                i[d] = r % shape[d];
                r /= shape[d];
            }
            pack_source(mode, B, m->cg, i, &f, &c, &kh, &kw);
            if (f < m->M && c < m->cg)
                memcpy(buf + (size_t)e * esz,
                       (const unsigned char *)w->data + (size_t)(((f * m->cg + c) * m->KH + kh) * m->KW + kw) * esz,
                       esz);
        }
        t = add(L, ir_constant(name, w->dtype, nd, shape, buf));
        free(buf);
    } else {
        /* weights known only at run time: a packing compute */
        IterVar *ax[6];
        Expr *i[6], *wi[4], *cond = NULL;
        for (int d = 0; d < nd; d++) {
            ax[d] = ir_itervar_new(ir_fmt("i%d", d), shape[d], IV_SPATIAL);
            i[d] = v(ax[d]);
        }
        switch (mode) {
        case CONV_NCHW_IN: wi[0] = madd(i[0], B, i[4]), wi[1] = i[1], wi[2] = i[2], wi[3] = i[3]; break;
        case CONV_BLOCKED: wi[0] = madd(i[0], B, i[5]), wi[1] = madd(i[1], B, i[4]), wi[2] = i[2], wi[3] = i[3]; break;
        case CONV_GROUP_DIAG: {
            Expr *ca = madd(i[0], B, i[3]), *cg = ir_idx(m->cg);
            wi[0] = madd(i[0], B, i[4]), wi[1] = ir_bin(OP_MOD, ca, cg), wi[2] = i[1], wi[3] = i[2];
            cond = ir_bin(OP_EQ, ir_bin(OP_DIV, ca, cg), ir_bin(OP_DIV, wi[0], cg));
            break;
        }
        default: wi[0] = madd(i[0], B, i[3]), wi[1] = ir_idx(0), wi[2] = i[1], wi[3] = i[2]; break;
        }
        if (m->M % B) {
            Expr *c2 = ir_bin(OP_LT, wi[0], ir_idx(m->M));
            cond = cond ? ir_bin(OP_AND, cond, c2) : c2;
        }
        if (mode == CONV_BLOCKED && m->cg % B) {
            Expr *c2 = ir_bin(OP_LT, wi[1], ir_idx(m->cg));
            cond = cond ? ir_bin(OP_AND, cond, c2) : c2;
        }
        Expr *body = ir_access(w, wi, 4);
        if (cond)
            body = ir_select(cond, body, zero(w->dtype));
        t = add(L, ir_compute(name, nd, ax, body));
    }
    t->comment = ir_fmt("layout: '%s' packed for NCHWc%d", w->name, B);
    return t;
}

/* The blocked conv replacing old compute t. */
static Tensor *block_conv(Layout *L, Tensor *t, const Conv *m, int mode)
{
    int B = L->B;
    int64_t shape[5] = {t->shape[0], ceil_div(m->M, B), t->shape[2], t->shape[3], B};
    IterVar *ax[5], *red[4];
    blocked_axes(shape, ax);
    IterVar *rk0 = ir_itervar_new("rk0", m->KH, IV_REDUCE), *rk1 = ir_itervar_new("rk1", m->KW, IV_REDUCE);
    Var *from[5];
    Expr *to[5] = {v(ax[0]), v(ax[2]), v(ax[3]), v(rk0), v(rk1)};
    memcpy(from, m->old, sizeof from);
    Expr *y = ir_subst(m->xi[2], from, to, 5), *x = ir_subst(m->xi[3], from, to, 5);
    Tensor *wp = pack_weights(L, m, mode);
    Expr *n = v(ax[0]), *fo = v(ax[1]), *fi = v(ax[4]), *xr, *wr;
    int nred;
    if (mode == CONV_NCHW_IN) {
        IterVar *rc = ir_itervar_new("rc", m->C, IV_REDUCE);
        Expr *xi[4] = {n, v(rc), y, x}, *wi[5] = {fo, v(rc), v(rk0), v(rk1), fi};
        xr = ir_access(info_of(L, m->x)->nt, xi, 4);
        wr = ir_access(wp, wi, 5);
        red[0] = rc, red[1] = rk0, red[2] = rk1;
        nred = 3;
    } else if (mode == CONV_BLOCKED && m->group == 1 && m->cg % B) {
        /* input channels that do not fill their last block (24 in blocks of 16): one
         * reduce axis over the real channels, so the zeros padding the block are not
         * multiplied (a third of the work of MobileNetV2's 24-channel 1x1 convs) */
        Info *xin = info_of(L, m->x);
        Tensor *xb = xin->blocked ? xin->nt : to_blocked(L, m->x);
        IterVar *rc = ir_itervar_new("rc", m->cg, IV_REDUCE);
        Expr *cb = ir_bin(OP_DIV, v(rc), ir_idx(B)), *ci = ir_bin(OP_MOD, v(rc), ir_idx(B));
        Expr *xi[5] = {n, cb, y, x, ci}, *wi[6] = {fo, cb, v(rk0), v(rk1), ci, fi};
        xr = ir_access(xb, xi, 5);
        wr = ir_access(wp, wi, 6);
        red[0] = rk0, red[1] = rk1, red[2] = rc;
        nred = 3;
    } else if (mode == CONV_BLOCKED) {
        Info *xin = info_of(L, m->x);
        Tensor *xb = xin->blocked ? xin->nt : to_blocked(L, m->x);
        IterVar *rco = ir_itervar_new("rco", ceil_div(m->cg, B), IV_REDUCE), *rci = ir_itervar_new("rci", B, IV_REDUCE);
        Expr *cb = v(rco);
        if (m->group > 1) {
            Expr *g = m->mg == B ? fo : ir_bin(OP_DIV, fo, ir_idx(m->mg / B));
            cb = madd(g, m->cg / B, cb);
        }
        Expr *xi[5] = {n, cb, y, x, v(rci)}, *wi[6] = {fo, v(rco), v(rk0), v(rk1), v(rci), fi};
        xr = ir_access(xb, xi, 5);
        wr = ir_access(wp, wi, 6);
        red[0] = rco, red[1] = rk0, red[2] = rk1, red[3] = rci;
        nred = 4;
    } else if (mode == CONV_GROUP_DIAG) {
        Info *xin = info_of(L, m->x);
        Tensor *xb = xin->blocked ? xin->nt : to_blocked(L, m->x);
        IterVar *rci = ir_itervar_new("rci", B, IV_REDUCE);
        Expr *xi[5] = {n, fo, y, x, v(rci)}, *wi[5] = {fo, v(rk0), v(rk1), v(rci), fi};
        xr = ir_access(xb, xi, 5);
        wr = ir_access(wp, wi, 5);
        red[0] = rk0, red[1] = rk1, red[2] = rci;
        nred = 3;
    } else {
        Info *xin = info_of(L, m->x);
        Tensor *xb = xin->blocked ? xin->nt : to_blocked(L, m->x);
        Expr *xi[5] = {n, fo, y, x, fi}, *wi[4] = {fo, v(rk0), v(rk1), fi};
        xr = ir_access(xb, xi, 5);
        wr = ir_access(wp, wi, 4);
        red[0] = rk0, red[1] = rk1;
        nred = 2;
    }
    Expr *body = ir_reduce(RED_SUM, ir_bin(OP_MUL, xr, wr), red, nred);
    const char *name = kept(L, t) ? fresh(L, ir_fmt("%s_nchwc", t->name)) : t->name;
    Tensor *yb = add(L, blocked_dyn(ir_compute(name, 5, ax, body), t));
    yb->comment = t->comment;
    yb->pos = t->pos;
    mark_zeroed(L, yb);   /* zero weights and zero padded inputs give zeros */
    return yb;
}

/* ---------------------------------------------------------------- elementwise */

/* Can old compute t join the region: per-channel, injective, reading a region tensor? */
static int elem_ok(Layout *L, const Tensor *t)
{
    /* injective, or a per-channel reduction over a window (pooling): the reduction at the
     * top, each read at t's own channel index (checked below) */
    if (t->kind != T_COMPUTE || t->ndim != 4 || kept(L, t) ||
        ir_expr_has_reduce(t->body->kind == E_REDUCE ? t->body->u.reduce.body : t->body))
        return 0;
    PtrVec r = {0};
    ir_expr_tensors(t->body, &r);
    int region = 0;
    for (int i = 0; i < r.n; i++)
        region |= info_of(L, r.items[i])->blocked;
    if (!region)
        return 0;
    /* every read of a region tensor at the channel index */
    PtrVec stack = {0};
    ir_vec_push(&stack, t->body, 1 << 24, "expressions");
    while (stack.n) {
        const Expr *e = stack.items[--stack.n];
        switch (e->kind) {
        case E_ACCESS:
            if (info_of(L, e->u.access.t)->blocked && chan_offset(L, e, t) < 0)
                return 0;
            for (int i = 0; i < e->u.access.n; i++)
                ir_vec_push(&stack, e->u.access.idx[i], 1 << 24, "expressions");
            break;
        case E_BIN:
            ir_vec_push(&stack, e->u.bin.a, 1 << 24, "expressions");
            ir_vec_push(&stack, e->u.bin.b, 1 << 24, "expressions");
            break;
        case E_UN: ir_vec_push(&stack, e->u.un.a, 1 << 24, "expressions"); break;
        case E_CAST:
        case E_BITCAST: ir_vec_push(&stack, e->u.cast.a, 1 << 24, "expressions"); break;
        case E_CALL:
            for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
                ir_vec_push(&stack, e->u.call.args[i], 1 << 24, "expressions");
            break;
        case E_SELECT:
            ir_vec_push(&stack, e->u.sel.cond, 1 << 24, "expressions");
            ir_vec_push(&stack, e->u.sel.t, 1 << 24, "expressions");
            ir_vec_push(&stack, e->u.sel.f, 1 << 24, "expressions");
            break;
        case E_REDUCE: ir_vec_push(&stack, e->u.reduce.body, 1 << 24, "expressions"); break;
        default: break;
        }
    }
    return 1;
}

static Tensor *block_elem(Layout *L, Tensor *t)
{
    int B = L->B;
    int64_t C = t->shape[1];
    int64_t shape[5] = {t->shape[0], ceil_div(C, B), t->shape[2], t->shape[3], B};
    IterVar *ax[5];
    blocked_axes(shape, ax);
    Rw k = {0};
    k.L = L;
    k.t = t;
    k.co = v(ax[1]);
    k.ci = v(ax[4]);
    Expr *c = madd(k.co, B, k.ci);
    for (int d = 0; d < 4; d++)
        k.from[d] = t->axes[d]->var;
    k.to[0] = v(ax[0]), k.to[1] = c, k.to[2] = v(ax[2]), k.to[3] = v(ax[3]);
    Expr *body = rw(&k, t->body);
    if (C % B && !keeps_zero(L, body))
        body = ir_select(ir_bin(OP_LT, c, ir_idx(C)), body, zero(body->dtype));
    Tensor *tb = add(L, blocked_dyn(ir_compute(t->name, 5, ax, body), t));
    tb->comment = t->comment;
    tb->pos = t->pos;
    mark_zeroed(L, tb);
    return tb;
}

/* ---------------------------------------------------------------- concatenation */

/* A concatenation along the channels, as ir/ops/shape.c builds it,
 *   select(c < E0, X0[n, c, h, w], select(c < E1, X1[n, c - E0, h, w], ... Xk[n, c - Ek-1, h, w]))
 * of region tensors whose channel counts, all but the last, are multiples of B (Inception,
 * Fire and dense blocks: convs concatenated). Its blocked version reads whole blocks: a
 * block of the result is a block of one part, and the last part's padded channels are the
 * result's. Anything else (another axis, a part not blocked, a part of C % B channels before
 * the last) stays NCHW. */
enum { CAT_MAX = 64 };

typedef struct {
    Tensor *x[CAT_MAX];          /* the parts (old tensors) */
    int64_t start[CAT_MAX + 1];  /* part i: channels [start[i], start[i + 1]) */
    int n;
} Cat;

/* Is access e x[n, c - s, h, w], t's axes but the channel shifted by s, of x shaped as t
 * but for its channel count? */
static int cat_part(const Tensor *t, const Expr *e, int64_t s)
{
    int64_t k;
    if (e->kind != E_ACCESS || e->u.access.n != 4)
        return 0;
    const Tensor *x = e->u.access.t;
    if (x->ndim != 4 || x->dtype != t->dtype)
        return 0;
    for (int d = 0; d < 4; d++)
        if (d != 1 && (!is_var(e->u.access.idx[d], t->axes[d]->var) || x->shape[d] != t->shape[d]))
            return 0;
    Expr *off = ir_sub(e->u.access.idx[1], ir_varref(t->axes[1]->var));
    return ir_expr_is_const(off, &k) && k == -s;
}

static int match_concat(Layout *L, const Tensor *t, Cat *m)
{
    if (t->kind != T_COMPUTE || t->ndim != 4 || kept(L, t))
        return 0;
    const Var *c = t->axes[1]->var;
    const Expr *e = t->body;
    m->n = 0;
    m->start[0] = 0;
    for (;;) {
        int last = e->kind != E_SELECT;
        const Expr *part = last ? e : e->u.sel.t, *cond = last ? NULL : e->u.sel.cond;
        int64_t s = m->start[m->n], end = t->shape[1];
        if (cond && (cond->kind != E_BIN || cond->u.bin.op != OP_LT || !is_var(cond->u.bin.a, c) ||
                     !ir_expr_is_const(cond->u.bin.b, &end) || end % L->B || end <= s))
            return 0;
        if (m->n == CAT_MAX || !cat_part(t, part, s))
            return 0;
        Tensor *x = part->u.access.t;
        if (!info_of(L, x)->blocked || x->shape[1] != end - s)
            return 0;
        m->x[m->n++] = x;
        m->start[m->n] = end;
        if (last)
            return m->n >= 2;
        e = e->u.sel.f;
    }
}

static Tensor *block_concat(Layout *L, Tensor *t, const Cat *m)
{
    int B = L->B;
    int64_t C = t->shape[1];
    int64_t shape[5] = {t->shape[0], ceil_div(C, B), t->shape[2], t->shape[3], B};
    IterVar *ax[5];
    blocked_axes(shape, ax);
    Expr *body = NULL;
    for (int i = m->n - 1; i >= 0; i--) {
        Expr *co = m->start[i] ? ir_bin(OP_SUB, v(ax[1]), ir_idx(m->start[i] / B)) : v(ax[1]);
        Expr *idx[5] = {v(ax[0]), co, v(ax[2]), v(ax[3]), v(ax[4])};
        Expr *r = ir_access(info_of(L, m->x[i])->nt, idx, 5);
        body = body ? ir_select(ir_bin(OP_LT, v(ax[1]), ir_idx(m->start[i + 1] / B)), r, body) : r;
    }
    if (C % B && !is_zeroed(L, info_of(L, m->x[m->n - 1])->nt))
        body = ir_select(ir_bin(OP_LT, madd(v(ax[1]), B, v(ax[4])), ir_idx(C)), body, zero(body->dtype));
    Tensor *tb = add(L, blocked_dyn(ir_compute(t->name, 5, ax, body), t));
    tb->comment = t->comment;
    tb->pos = t->pos;
    mark_zeroed(L, tb);
    return tb;
}

/* ---------------------------------------------------------------- the pass */

/* An NCHW tensor: itself, or rebuilt when it reads something blocked or replaced. */
static Tensor *keep_nchw(Layout *L, Tensor *t, Info *in)
{
    in->nt = t;
    Rw k = {0};
    k.L = L;
    Tensor *nt = t;
    if (t->kind == T_COMPUTE && reads_changed(L, t->body)) {
        nt = ir_compute(t->name, t->ndim, t->axes, rw(&k, t->body));
    } else if (t->kind == T_SCAN && (reads_changed(L, t->init) || reads_changed(L, t->update))) {
        nt = ir_scan_begin(t->name, t->dtype, t->ndim, t->axes);
        if (!nt)
            ir_die("layout: %s", ir_errmsg());
        in->nt = nt;   /* the update reads the scan itself */
        if (ir_scan_finish(nt, t->init_steps, rw(&k, t->init), rw(&k, t->update)))
            ir_die("layout: %s", ir_errmsg());
    }
    if (!nt)
        ir_die("layout: %s", ir_errmsg());
    if (nt != t) {
        nt->is_output = t->is_output;
        nt->comment = t->comment;
        nt->pos = t->pos;
        nt->rows_axis = t->rows_axis;
    }
    in->nt = nt;
    return add(L, nt);
}

int ir_layout_auto_block(const Program *p, int lanes)
{
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        Conv m;
        if (match_conv(t, &m) && m.M >= 16 && (m.group == 1 || (m.cg == 1 && m.mg == 1)) &&
            t->shape[2] * t->shape[3] >= 4)
            return lanes == 4 || lanes == 8 ? 8 : 16;
    }
    return 0;
}

int ir_layout_nchwc(Program *p, int block)
{
    if (block != 8 && block != 16)
        return ir_fail("layout: the channel block must be 8 or 16, not %d", block);
    ir_program_renumber(p);
    Layout L = {0};
    L.old = p;
    L.np = ir_program_new(p->name);
    L.np->dims = p->dims;
    L.np->checks = p->checks;
    L.np->check_msgs = p->check_msgs;
    L.B = block;
    L.info = ir_alloc(sizeof *L.info * (size_t)(p->tensors.n + 1));
    L.kept = ir_alloc((size_t)p->tensors.n + 1);
    for (int i = 0; i < p->tensors.n; i++) {
        const IrLoop *lp = ((Tensor *)p->tensors.items[i])->loop_state;
        if (lp && lp->state[0] == p->tensors.items[i]) {
            keep_named(&L, lp->trip);
            for (int k = 0; k < lp->nstate; k++) {
                keep_named(&L, lp->init[k]);
                keep_named(&L, lp->next[k]);
            }
        }
    }
    int nconv = 0;
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        Info *in = &L.info[i];
        L.src = t;
        Conv m;
        Cat cat;
        int mode;
        if (match_conv(t, &m) && (mode = conv_mode(&L, &m)) != CONV_NONE) {
            in->nt = block_conv(&L, t, &m, mode);
            in->blocked = 1;
            in->C = m.M;
            if (kept(&L, t))
                to_nchw(&L, t, t->name)->is_output = t->is_output;
            nconv++;
        } else if (match_concat(&L, t, &cat)) {
            in->nt = block_concat(&L, t, &cat);
            in->blocked = 1;
            in->C = t->shape[1];
        } else if (elem_ok(&L, t)) {
            in->nt = block_elem(&L, t);
            in->blocked = 1;
            in->C = t->shape[1];
        } else {
            keep_nchw(&L, t, in);
        }
    }
    if (!nconv)
        return 0;
    p->tensors = L.np->tensors;
    p->checks = L.np->checks;
    p->check_msgs = L.np->check_msgs;
    ir_program_renumber(p);
    if (ir_program_verify(p))
        return ir_fail("layout: the blocked program is inconsistent: %s", ir_errmsg());
    return 0;
}

/* The pass: --layout=auto (ctx->layout IR_LAYOUT_AUTO) blocks a CPU target's program when
 * ir_layout_auto_block finds convs worth it; nchw (IR_LAYOUT_NCHW) leaves it; a block
 * size blocks it, which a GPU schedule does not take (an error). */
static int layout_run(Program *p, const PassCtx *ctx)
{
    if (ctx->gpu && ctx->layout > IR_LAYOUT_NCHW)
        return ir_fail("--layout=nchwc is a CPU layout; the %s target keeps NCHW", ctx->target);
    int block = ctx->layout;
    if (block == IR_LAYOUT_AUTO)
        block = ctx->gpu ? 0 : ir_layout_auto_block(p, ctx->simd_lanes);
    if (block > IR_LAYOUT_NCHW && ir_layout_nchwc(p, block))
        return ir_fail("%s: %s", ctx->source, ir_errmsg());
    return 0;
}

const GraphPass ir_pass_layout = {{"layout", "NCHWc: 2-D convs and the per-channel computes around them in "
                                             "channel blocks (CPU targets; --layout)"},
                                  layout_run};
