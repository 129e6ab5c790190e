/* rnn.c - ONNX sequence operators: RNN, GRU and LSTM as scans over time, Attention and
 * RotaryEmbedding as plain computes.
 *
 * A recurrence is one scan per direction whose axis 0 is the step: row 0 holds the
 * initial state, row s+1 the state after step s. The input projections X*W do not depend
 * on the state, so they are one batched compute over all time steps before the scan; the
 * recurrent products R*h are reductions inside the scan's update. Reverse directions index
 * the input at T-1-s (or seq_len[b]-1-s). The outputs Y, Y_h, Y_c read the scans. */
#include "ops.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---------------------------------------------------------------- small builders */

/* t[i0, i1, ...] with exactly t->ndim indices */
static Expr *at(Tensor *t, ...)
{
    Expr *idx[KG_MAX_DIMS];
    va_list ap;
    va_start(ap, t);
    for (int i = 0; i < t->ndim; i++)
        idx[i] = va_arg(ap, Expr *);
    va_end(ap);
    return ir_access(t, idx, t->ndim);
}

static Expr *add(Expr *a, Expr *b) { return ir_bin(OP_ADD, a, b); }
static Expr *sub(Expr *a, Expr *b) { return ir_bin(OP_SUB, a, b); }
static Expr *mul(Expr *a, Expr *b) { return ir_bin(OP_MUL, a, b); }
static Expr *dvd(Expr *a, Expr *b) { return ir_bin(OP_DIV, a, b); }
static Expr *fn1(MathFn fn, Expr *x) { return ir_call(fn, &x); }
static Expr *idx(int64_t v) { return ir_idx(v); }
static Expr *var(IterVar *iv) { return ir_varref(iv->var); }
static Expr *iadd(Expr *a, int64_t k) { return k ? ir_bin(OP_ADD, a, ir_idx(k)) : a; }
static Expr *fdiv(Expr *a, int64_t k) { return k == 1 ? a : ir_bin(OP_FLOORDIV, a, ir_idx(k)); }
static Expr *fmod_(Expr *a, int64_t k) { return ir_bin(OP_FLOORMOD, a, ir_idx(k)); }
/* an integer tensor element as an index (lengths, positions) */
static Expr *as_index(Expr *e) { return e->dtype == DT_INDEX ? e : ir_cast(DT_INDEX, e); }

static IterVar *axis(const char *name, int64_t extent) { return ir_itervar_new(name, extent, IV_SPATIAL); }
static IterVar *raxis(const char *name, int64_t extent) { return ir_itervar_new(name, extent, IV_REDUCE); }

static Tensor *emit_tmp(OpCtx *c, const char *what, int ndim, IterVar **ax, Expr *body)
{
    return op_emit(c, op_name(c, what), ndim, ax, body);
}

static int wants(OpCtx *c, int i) { return i < c->nout && c->out_names[i]; }

static int same_type(OpCtx *c, Tensor *t, const char *what, DType dt)
{
    if (t->dtype != dt)
        return ir_fail("%s: %s has type %s, expected %s like the first input", c->op, what,
                       ir_dtype_name(t->dtype), ir_dtype_name(dt));
    return 0;
}

static int check_shape(OpCtx *c, Tensor *t, const char *what, int ndim, const int64_t *shape)
{
    int ok = t->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++)
        ok = t->shape[d] == shape[d];
    if (ok)
        return 0;
    char want[160] = "", got[160] = "";
    for (int d = 0; d < ndim; d++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? "," : "", (long long)shape[d]);
    for (int d = 0; d < t->ndim; d++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "," : "", (long long)t->shape[d]);
    return ir_fail("%s: %s has shape [%s], expected [%s]", c->op, what, got, want);
}

static int float_type(OpCtx *c, Tensor *x)
{
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return ir_fail("%s: unsupported type %s (float and double only)", c->op, ir_dtype_name(x->dtype));
    return 0;
}

/* ---------------------------------------------------------------- activations */

typedef enum {
    ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKYRELU, ACT_THRESHOLDEDRELU,
    ACT_SCALEDTANH, ACT_HARDSIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS
} ActKind;

typedef struct {
    ActKind kind;
    double alpha, beta;
} Act;

static const struct {
    const char *name;
    ActKind kind;
    int nalpha, nbeta;      /* does it take alpha / beta */
    double alpha, beta;     /* defaults */
} act_table[] = {
    {"Relu", ACT_RELU, 0, 0, 0, 0},
    {"Tanh", ACT_TANH, 0, 0, 0, 0},
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0, 0},
    {"Affine", ACT_AFFINE, 1, 1, 1.0, 0.0},
    {"LeakyRelu", ACT_LEAKYRELU, 1, 0, 0.01, 0},
    {"ThresholdedRelu", ACT_THRESHOLDEDRELU, 1, 0, 1.0, 0},
    {"ScaledTanh", ACT_SCALEDTANH, 1, 1, 1.0, 1.0},
    {"HardSigmoid", ACT_HARDSIGMOID, 1, 1, 0.2, 0.5},
    {"Elu", ACT_ELU, 1, 0, 1.0, 0},
    {"Softsign", ACT_SOFTSIGN, 0, 0, 0, 0},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0, 0},
};

static Expr *act_apply(Act a, Expr *x)
{
    DType t = x->dtype;
    Expr *zero = op_lit(0, t), *one = op_lit(1, t);
    switch (a.kind) {
    case ACT_RELU: return ir_bin(OP_MAX, x, zero);
    case ACT_TANH: return fn1(FN_TANH, x);
    case ACT_SIGMOID: return fn1(FN_SIGMOID, x);
    case ACT_AFFINE: return add(mul(op_lit(a.alpha, t), x), op_lit(a.beta, t));
    case ACT_LEAKYRELU: return ir_select(ir_bin(OP_GE, x, zero), x, mul(op_lit(a.alpha, t), x));
    case ACT_THRESHOLDEDRELU: return ir_select(ir_bin(OP_GT, x, op_lit(a.alpha, t)), x, zero);
    case ACT_SCALEDTANH: return mul(op_lit(a.alpha, t), fn1(FN_TANH, mul(op_lit(a.beta, t), x)));
    case ACT_HARDSIGMOID:
        return ir_bin(OP_MAX, zero, ir_bin(OP_MIN, one, add(mul(op_lit(a.alpha, t), x), op_lit(a.beta, t))));
    case ACT_ELU:
        return ir_select(ir_bin(OP_GE, x, zero), x, mul(op_lit(a.alpha, t), sub(fn1(FN_EXP, x), one)));
    case ACT_SOFTSIGN: return dvd(x, add(one, fn1(FN_ABS, x)));
    case ACT_SOFTPLUS: return fn1(FN_LOG, add(one, fn1(FN_EXP, x)));
    }
    return x;
}

/* ---------------------------------------------------------------- recurrences */

typedef enum { CELL_RNN, CELL_GRU, CELL_LSTM } Cell;

#define MAX_ACTS 6   /* 3 per direction (LSTM), 2 directions */

typedef struct {
    OpCtx *c;
    Cell cell;
    DType dt;
    int64_t T, B, I, H;
    int ndir, reverse[2];     /* reverse[d]: direction d runs backwards */
    int layout;
    int gates;                /* gate blocks in W and R: 1, 3 or 4 */
    int nact;                 /* activations per direction */
    Act act[MAX_ACTS];
    double clip;              /* 0: none */
    int lbr;                  /* GRU linear_before_reset */
    int input_forget;         /* LSTM */
    int stride;               /* scan rows per step (2: LSTM, and GRU with the reset gate applied to h) */
    Tensor *X, *W, *R, *Bias, *seq, *h0, *c0, *P;
    int wt, rt;               /* W, R stored transposed, [D, k, gates*H] (constant weights) */
    Expr *dT;                 /* the sequence length decided at run time (X's dyn), or NULL */
    Tensor *XP[2];            /* input projections, per direction: [T, B, gates*H] */
    Tensor *S[2];             /* the scans */
} Rnn;

static Expr *read_x(Rnn *r, Expr *t, Expr *b, Expr *k)
{
    return r->layout ? at(r->X, b, t, k) : at(r->X, t, b, k);
}

/* an initial state (initial_h or initial_c) at direction d, or 0 */
static Expr *read_init(Rnn *r, Tensor *init, int d, Expr *b, Expr *j)
{
    if (!init)
        return op_lit(0, r->dt);
    return r->layout ? at(init, b, idx(d), j) : at(init, idx(d), b, j);
}

/* the sequence length T: decided at run time, or fixed */
static Expr *len_T(const Rnn *r) { return r->dT ? r->dT : idx(r->T); }

/* sequence_lens[b], at most T so that reverse steps stay inside X */
static Expr *seq_len(Rnn *r, Expr *b) { return ir_bin(OP_MIN, as_index(at(r->seq, b)), len_T(r)); }

/* the input time of step s in direction d */
static Expr *step_time(Rnn *r, int d, Expr *s, Expr *b)
{
    if (!r->reverse[d])
        return s;
    if (r->seq)
        return sub(sub(seq_len(r, b), idx(1)), s);
    return sub(ir_add(len_T(r), idx(-1)), s);
}

/* Is step s inside the sequence of batch b? NULL: always. */
static Expr *step_valid(Rnn *r, Expr *s, Expr *b)
{
    return r->seq ? ir_bin(OP_LT, s, seq_len(r, b)) : NULL;
}

static Expr *guard(Expr *cond, Expr *then, Expr *els) { return cond ? ir_select(cond, then, els) : then; }

static Expr *activate(Rnn *r, int d, int which, Expr *x)
{
    if (r->clip > 0) {
        Expr *cl = op_lit(r->clip, r->dt);
        x = ir_bin(OP_MAX, ir_bin(OP_MIN, x, cl), ir_un(UN_NEG, cl));
    }
    return act_apply(r->act[d * r->nact + which], x);
}

/* Bias element: B[d, off + g] or 0 */
static Expr *bias(Rnn *r, int d, int64_t off, Expr *g)
{
    if (!r->Bias)
        return op_lit(0, r->dt);
    return at(r->Bias, idx(d), iadd(g, off));
}

/* W[d, g, k] or R[d, g, k], stored as given or transposed */
static Expr *weight(Tensor *m, int transposed, int d, Expr *g, Expr *k)
{
    return transposed ? at(m, idx(d), k, g) : at(m, idx(d), g, k);
}

/* Input i (W or R, [D, G, K]) as [D, K, G] when it is constant: the gate axis that the
 * schedule vectorizes then reads consecutive weights (as Gemm's constant B^T). *m is
 * replaced, *transposed set; a run-time input stays as it is. */
static int transpose_weights(OpCtx *c, int i, const char *what, Tensor **m, int *transposed)
{
    *transposed = 0;
    if (!op_is_const(c, i))
        return 0;
    Tensor *w = c->in[i];   /* (maybe folded just now) */
    int64_t D = w->shape[0], G = w->shape[1], K = w->shape[2];
    size_t es = (size_t)ir_dtype_bytes(w->dtype);
    unsigned char *t = ir_alloc(es * (size_t)(D * G * K));
    const unsigned char *src = w->data;
    for (int64_t d = 0; d < D; d++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t k = 0; k < K; k++)
                memcpy(t + es * (size_t)((d * K + k) * G + g), src + es * (size_t)((d * G + g) * K + k), es);
    int64_t shape[3] = {D, K, G};
    *m = op_const_tensor(c, what, w->dtype, 3, shape, t);
    *transposed = 1;
    return *m ? 0 : -1;
}

/* XP_d[t, b, g] = sum_k W[d, g, k] X[t, b, k] + Wb[d, g] (+ Rb[d, g] where it adds linearly) */
static int project(Rnn *r, int d)
{
    int64_t G = r->gates * r->H;
    int64_t shape[3] = {r->T, r->B, G};
    IterVar **ax = op_axes(3, shape);
    ax[0]->dyn = r->dT;
    Expr *t = var(ax[0]), *b = var(ax[1]), *g = var(ax[2]);
    IterVar *k = raxis("k", r->I);
    Expr *sum = ir_reduce(RED_SUM, mul(weight(r->W, r->wt, d, g, var(k)), read_x(r, t, b, var(k))), &k, 1);
    if (!r->Bias) {
        r->XP[d] = emit_tmp(r->c, d ? "xproj_rev" : "xproj", 3, ax, sum);
        return r->XP[d] ? 0 : -1;
    }
    /* the product a tensor of its own, the biases its epilogue (Gemm's shape: the
     * schedule's register tile takes a reduction alone) */
    Tensor *mm = emit_tmp(r->c, d ? "xmm_rev" : "xmm", 3, ax, sum);
    if (!mm)
        return -1;
    ax = op_axes(3, shape);
    ax[0]->dyn = r->dT;
    t = var(ax[0]), b = var(ax[1]), g = var(ax[2]);
    Expr *rb = bias(r, d, G, g);
    if (r->cell == CELL_GRU && r->lbr)   /* Rbh goes inside the reset product */
        rb = ir_select(ir_bin(OP_LT, g, idx(2 * r->H)), rb, op_lit(0, r->dt));
    Expr *body = add(at(mm, t, b, g), add(bias(r, d, 0, g), rb));
    r->XP[d] = emit_tmp(r->c, d ? "xproj_rev" : "xproj", 3, ax, body);
    return r->XP[d] ? 0 : -1;
}

/* sum over k < H of R[d, row, k] * S[idx...] where idx[kslot] is k */
static Expr *rdot(Rnn *r, int d, Expr *row, Tensor *S, Expr **ix, int kslot)
{
    IterVar *k = raxis("k", r->H);
    Expr *sidx[KG_MAX_DIMS];
    for (int i = 0; i < S->ndim; i++)
        sidx[i] = i == kslot ? var(k) : ix[i];
    return ir_reduce(RED_SUM, mul(weight(r->R, r->rt, d, row, var(k)), ir_access(S, sidx, S->ndim)), &k, 1);
}

/* gate pre-activation: XP[t, b, gate*H + j] + R_gate h */
static Expr *gate(Rnn *r, int d, int g, Expr *t, Expr *b, Expr *j, Tensor *S, Expr **hidx, int kslot)
{
    Expr *row = iadd(j, g * r->H);
    return add(at(r->XP[d], t, b, row), rdot(r, d, row, S, hidx, kslot));
}

/* RNN: S[u, b, j]; h_s = f(XP + R h_{s-1}) */
static Expr *rnn_update(Rnn *r, int d, Tensor *S, IterVar **ax)
{
    Expr *u = var(ax[0]), *b = var(ax[1]), *j = var(ax[2]);
    Expr *s = iadd(u, -1), *t = step_time(r, d, s, b);
    Expr *prev[3] = {iadd(u, -1), b, j};
    Expr *h = activate(r, d, 0, gate(r, d, 0, t, b, j, S, prev, 2));
    return guard(step_valid(r, s, b), h, ir_access(S, prev, 3));
}

/* LSTM: S[u, q, b, j] with q = 0: h, 1: c (gate order in W, R, B: i, o, f, c; in P: i,
 * o, f). h_s needs c_s of the same step, so each step takes two rows, as GRU's: row 2s+1
 * holds c_s (three gate sums over h_{s-1}, with h_{s-1} copied beside it), row 2s+2 holds
 * h_s (the output gate's sum over h_{s-1} at row 2s, c_s at row 2s+1, copied beside it).
 * In one row, h_s would recompute c_s's three gate sums: seven sums a step instead of four,
 * each reading its quarter of R (a CRNN's BiLSTM, R 1 MB a direction: 14 -> 8 ms). */
static Expr *lstm_update(Rnn *r, int d, Tensor *S, IterVar **ax)
{
    Expr *u = var(ax[0]), *q = var(ax[1]), *b = var(ax[2]), *j = var(ax[3]);
    int64_t H = r->H;
    Expr *h0 = ir_bin(OP_EQ, q, idx(0));
    /* odd rows: c_s from h_{s-1} and c_{s-1}, both at u-1 */
    Expr *so = fdiv(iadd(u, -1), 2), *to = step_time(r, d, so, b);
    Expr *hprev[4] = {iadd(u, -1), idx(0), b, j};
    Expr *cprev = at(S, iadd(u, -1), idx(1), b, j);
    Expr *pi = NULL, *po = NULL, *pf = NULL;
    if (r->P) {
        pi = at(r->P, idx(d), j);
        po = at(r->P, idx(d), iadd(j, H));
        pf = at(r->P, idx(d), iadd(j, 2 * H));
    }
    Expr *zi = gate(r, d, 0, to, b, j, S, hprev, 3);
    if (pi)
        zi = add(zi, mul(pi, cprev));
    Expr *ig = activate(r, d, 0, zi), *fg;
    if (r->input_forget)
        fg = sub(op_lit(1, r->dt), ig);
    else {
        Expr *zf = gate(r, d, 2, to, b, j, S, hprev, 3);
        if (pf)
            zf = add(zf, mul(pf, cprev));
        fg = activate(r, d, 0, zf);
    }
    Expr *cg = activate(r, d, 1, gate(r, d, 3, to, b, j, S, hprev, 3));
    Expr *cnew = add(mul(fg, cprev), mul(ig, cg));
    Expr *keep[4] = {iadd(u, -1), q, b, j};
    Expr *odd = guard(step_valid(r, so, b), ir_select(h0, ir_access(S, hprev, 4), cnew), ir_access(S, keep, 4));
    /* even rows: h_s from h_{s-1} at u-2 and c_s at u-1 */
    Expr *se = iadd(fdiv(u, 2), -1), *te = step_time(r, d, se, b);
    Expr *he[4] = {iadd(u, -2), idx(0), b, j};
    Expr *cs = at(S, iadd(u, -1), idx(1), b, j);
    Expr *zo = gate(r, d, 1, te, b, j, S, he, 3);
    if (po)
        zo = add(zo, mul(po, cs));
    Expr *hnew = mul(activate(r, d, 0, zo), activate(r, d, 2, cs));
    Expr *even = guard(step_valid(r, se, b), ir_select(h0, hnew, cs), ir_access(S, keep, 4));
    return ir_select(ir_bin(OP_EQ, fmod_(u, 2), idx(1)), odd, even);
}

/* GRU (gate order z, r, h). With linear_before_reset the state update needs h_{s-1} only:
 * one row a step. Without it, h~ = g(XP_h + R_h (r_s . h_{s-1})) needs r_s first, so each
 * step takes two rows: row 2s+1 holds r_s . h_{s-1}, row 2s+2 holds h_s. */
static Expr *gru_update(Rnn *r, int d, Tensor *S, IterVar **ax)
{
    Expr *u = var(ax[0]), *b = var(ax[1]), *j = var(ax[2]);
    int64_t H = r->H;
    Expr *one = op_lit(1, r->dt);
    if (r->lbr) {
        Expr *s = iadd(u, -1), *t = step_time(r, d, s, b);
        Expr *prev[3] = {iadd(u, -1), b, j};
        Expr *z = activate(r, d, 0, gate(r, d, 0, t, b, j, S, prev, 2));
        Expr *rg = activate(r, d, 0, gate(r, d, 1, t, b, j, S, prev, 2));
        Expr *row = iadd(j, 2 * H);
        Expr *rh = add(rdot(r, d, row, S, prev, 2), bias(r, d, 5 * H, j));
        Expr *hh = activate(r, d, 1, add(at(r->XP[d], t, b, row), mul(rg, rh)));
        Expr *hprev = ir_access(S, prev, 3);
        Expr *hnew = add(mul(sub(one, z), hh), mul(z, hprev));
        return guard(step_valid(r, s, b), hnew, hprev);
    }
    /* odd rows: r_s . h_{s-1} with h_{s-1} at u-1 */
    Expr *so = fdiv(iadd(u, -1), 2), *to = step_time(r, d, so, b);
    Expr *po[3] = {iadd(u, -1), b, j};
    Expr *rg = activate(r, d, 0, gate(r, d, 1, to, b, j, S, po, 2));
    Expr *odd = guard(step_valid(r, so, b), mul(rg, ir_access(S, po, 3)), op_lit(0, r->dt));
    /* even rows: h_s with h_{s-1} at u-2 and r_s . h_{s-1} at u-1 */
    Expr *se = iadd(fdiv(u, 2), -1), *te = step_time(r, d, se, b);
    Expr *pe[3] = {iadd(u, -2), b, j}, *pr[3] = {iadd(u, -1), b, j};
    Expr *z = activate(r, d, 0, gate(r, d, 0, te, b, j, S, pe, 2));
    Expr *hh = activate(r, d, 1, gate(r, d, 2, te, b, j, S, pr, 2));
    Expr *hprev = ir_access(S, pe, 3);
    Expr *even = guard(step_valid(r, se, b), add(mul(sub(one, z), hh), mul(z, hprev)), hprev);
    return ir_select(ir_bin(OP_EQ, fmod_(u, 2), idx(1)), odd, even);
}

static int build_scan(Rnn *r, int d)
{
    OpCtx *c = r->c;
    int lstm = r->cell == CELL_LSTM;
    int ndim = lstm ? 4 : 3;
    IterVar *ax[4];
    int n = 0;
    ax[n++] = axis("u", r->T * r->stride + 1);
    if (r->dT)
        ax[0]->dyn = ir_simplify(ir_add(ir_mul(r->dT, idx(r->stride)), idx(1)), NULL);
    if (lstm)
        ax[n++] = axis("q", 2);
    ax[n++] = axis("b", r->B);
    ax[n++] = axis("j", r->H);
    Tensor *S = ir_scan_begin(op_name(c, d ? "state_rev" : "state"), r->dt, ndim, ax);
    if (!S)
        return -1;
    Expr *b = var(ax[ndim - 2]), *j = var(ax[ndim - 1]);
    Expr *init = read_init(r, r->h0, d, b, j);
    if (lstm)
        init = ir_select(ir_bin(OP_EQ, var(ax[1]), idx(0)), init, read_init(r, r->c0, d, b, j));
    Expr *update = r->cell == CELL_RNN ? rnn_update(r, d, S, ax)
                   : r->cell == CELL_GRU ? gru_update(r, d, S, ax)
                                         : lstm_update(r, d, S, ax);
    if (ir_scan_finish(S, 1, init, update) || ir_program_add(c->prog, S))
        return -1;
    r->S[d] = S;
    return 0;
}

/* the state (q = 0: h, 1: c) at input time t of direction d; 0 past the sequence end */
static Expr *state_at(Rnn *r, int d, int q, Expr *t, Expr *b, Expr *j)
{
    Expr *s = t;
    if (r->reverse[d])
        s = r->seq ? sub(sub(seq_len(r, b), idx(1)), t) : sub(ir_add(len_T(r), idx(-1)), t);
    Expr *row = r->stride == 1 ? iadd(s, 1) : mul(iadd(s, 1), idx(r->stride));
    Expr *v = r->cell == CELL_LSTM ? at(r->S[d], row, idx(q), b, j) : at(r->S[d], row, b, j);
    return guard(step_valid(r, t, b), v, op_lit(0, r->dt));
}

/* the state after the last step */
static Expr *state_last(Rnn *r, int d, int q, Expr *b, Expr *j)
{
    Expr *row = ir_mul(len_T(r), idx(r->stride));
    return r->cell == CELL_LSTM ? at(r->S[d], row, idx(q), b, j) : at(r->S[d], row, b, j);
}

static Expr *by_dir(Rnn *r, Expr *d, Expr *fwd, Expr *rev)
{
    return r->ndir == 1 ? fwd : ir_select(ir_bin(OP_EQ, d, idx(0)), fwd, rev);
}

static int emit_outputs(Rnn *r)
{
    OpCtx *c = r->c;
    if (wants(c, 0)) {
        /* Y: [T, D, B, H] or [B, T, D, H] */
        int64_t shape[4];
        IterVar *ax[4];
        int pt = r->layout ? 1 : 0, pd = r->layout ? 2 : 1, pb = r->layout ? 0 : 2;
        shape[pt] = r->T, shape[pd] = r->ndir, shape[pb] = r->B, shape[3] = r->H;
        const char *names[4];
        names[pt] = "t", names[pd] = "d", names[pb] = "b", names[3] = "j";
        for (int i = 0; i < 4; i++)
            ax[i] = axis(names[i], shape[i]);
        ax[pt]->dyn = r->dT;
        Expr *t = var(ax[pt]), *dd = var(ax[pd]), *b = var(ax[pb]), *j = var(ax[3]);
        Expr *body = by_dir(r, dd, state_at(r, 0, 0, t, b, j), r->ndir > 1 ? state_at(r, 1, 0, t, b, j) : NULL);
        if (!op_emit_out(c, 0, 4, ax, body))
            return -1;
    }
    for (int o = 1; o <= 2; o++) {
        if (!wants(c, o))
            continue;
        if (o == 2 && r->cell != CELL_LSTM)
            return ir_fail("%s: has no output %d", c->op, o);
        /* Y_h, Y_c: [D, B, H] or [B, D, H] */
        IterVar *ax[3];
        int pd = r->layout ? 1 : 0, pb = r->layout ? 0 : 1;
        ax[pd] = axis("d", r->ndir), ax[pb] = axis("b", r->B), ax[2] = axis("j", r->H);
        Expr *b = var(ax[pb]), *j = var(ax[2]);
        Expr *body = by_dir(r, var(ax[pd]), state_last(r, 0, o - 1, b, j),
                            r->ndir > 1 ? state_last(r, 1, o - 1, b, j) : NULL);
        if (!op_emit_out(c, o, 3, ax, body))
            return -1;
    }
    return 0;
}

static int same_name(const char *a, const char *b)
{
    while (*a && tolower((unsigned char)*a) == tolower((unsigned char)*b))
        a++, b++;
    return tolower((unsigned char)*a) == tolower((unsigned char)*b);
}

static int parse_acts(Rnn *r)
{
    OpCtx *c = r->c;
    static const char *defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const char *names[MAX_ACTS];
    int n = 0;
    const OpAttr *a = op_attr(c, "activations");
    if (a && a->nstrings) {
        if (a->nstrings != r->nact && a->nstrings != r->nact * r->ndir)
            return ir_fail("%s: 'activations' has %d entries, expected %d", c->op, a->nstrings, r->nact * r->ndir);
        for (int i = 0; i < a->nstrings; i++)
            names[n++] = a->strings[i];
        for (int i = n; i < r->nact * r->ndir; i++)   /* one list for both directions */
            names[i] = names[i - r->nact];
    } else {
        for (int dd = 0; dd < r->ndir; dd++)
            for (int i = 0; i < r->nact; i++)
                names[dd * r->nact + i] = defaults[r->cell][i];
    }
    double alpha[MAX_ACTS], beta[MAX_ACTS];
    int na = op_attr_floats(c, "activation_alpha", alpha, MAX_ACTS);
    int nb = op_attr_floats(c, "activation_beta", beta, MAX_ACTS);
    int ia = 0, ib = 0;
    for (int i = 0; i < r->nact * r->ndir; i++) {
        int found = -1;
        for (int k = 0; k < (int)(sizeof act_table / sizeof *act_table); k++)
            if (same_name(names[i], act_table[k].name))
                found = k;
        if (found < 0)
            return ir_fail("%s: unsupported activation '%s'", c->op, names[i]);
        Act *x = &r->act[i];
        x->kind = act_table[found].kind;
        x->alpha = act_table[found].alpha;
        x->beta = act_table[found].beta;
        if (act_table[found].nalpha && ia < na)
            x->alpha = alpha[ia++];
        if (act_table[found].nbeta && ib < nb)
            x->beta = beta[ib++];
    }
    return 0;
}

static int recurrence(OpCtx *c, Cell cell)
{
    Rnn r = {0};
    r.c = c;
    r.cell = cell;
    r.gates = cell == CELL_RNN ? 1 : cell == CELL_GRU ? 3 : 4;
    r.nact = cell == CELL_RNN ? 1 : cell == CELL_GRU ? 2 : 3;
    r.X = op_input(c, 0, "X");
    r.W = op_input(c, 1, "W");
    r.R = op_input(c, 2, "R");
    if (!r.X || !r.W || !r.R)
        return -1;
    r.Bias = op_has_input(c, 3) ? c->in[3] : NULL;
    r.seq = op_has_input(c, 4) ? c->in[4] : NULL;
    r.h0 = op_has_input(c, 5) ? c->in[5] : NULL;
    if (cell == CELL_LSTM) {
        r.c0 = op_has_input(c, 6) ? c->in[6] : NULL;
        r.P = op_has_input(c, 7) ? c->in[7] : NULL;
    }
    if (float_type(c, r.X))
        return -1;
    r.dt = r.X->dtype;
    if (r.X->ndim != 3)
        return ir_fail("%s: X has rank %d, expected 3", c->op, r.X->ndim);
    r.layout = (int)op_attr_int(c, "layout", 0);
    if (r.layout != 0 && r.layout != 1)
        return ir_fail("%s: layout %d is not 0 or 1", c->op, r.layout);
    r.T = r.X->shape[r.layout ? 1 : 0];
    r.B = r.X->shape[r.layout ? 0 : 1];
    r.I = r.X->shape[2];
    /* the sequence length may be decided at run time; the batch and features not yet */
    r.dT = r.X->dyn[r.layout ? 1 : 0];
    if (r.X->dyn[r.layout ? 0 : 1] || r.X->dyn[2])
        return ir_fail("%s: X's batch or feature dim is decided at run time (only its sequence length may be, yet)",
                       c->op);
    for (int i = 1; i < c->nin; i++)
        if (c->in[i] && ir_tensor_is_dynamic(c->in[i]))
            return ir_fail("%s: input %d has a dim decided at run time (only X's sequence length may be, yet)",
                           c->op, i);
    const char *dir = op_attr_str(c, "direction", "forward");
    if (!strcmp(dir, "forward"))
        r.ndir = 1;
    else if (!strcmp(dir, "reverse"))
        r.ndir = 1, r.reverse[0] = 1;
    else if (!strcmp(dir, "bidirectional"))
        r.ndir = 2, r.reverse[1] = 1;
    else
        return ir_fail("%s: direction '%s' is not forward, reverse or bidirectional", c->op, dir);
    if (r.R->ndim != 3)
        return ir_fail("%s: R has rank %d, expected 3", c->op, r.R->ndim);
    r.H = op_attr_int(c, "hidden_size", r.R->shape[2]);
    if (r.H < 1)
        return ir_fail("%s: hidden_size %lld must be positive", c->op, (long long)r.H);
    int64_t G = r.gates * r.H;
    int64_t sw[3] = {r.ndir, G, r.I}, sr[3] = {r.ndir, G, r.H}, sb[2] = {r.ndir, 2 * G}, ss[1] = {r.B};
    int64_t sh[3] = {r.ndir, r.B, r.H}, sp[2] = {r.ndir, 3 * r.H};
    if (r.layout)
        sh[0] = r.B, sh[1] = r.ndir;
    if (same_type(c, r.W, "W", r.dt) || check_shape(c, r.W, "W", 3, sw) || same_type(c, r.R, "R", r.dt) ||
        check_shape(c, r.R, "R", 3, sr))
        return -1;
    if (r.Bias && (same_type(c, r.Bias, "B", r.dt) || check_shape(c, r.Bias, "B", 2, sb)))
        return -1;
    if (r.seq && (ir_dtype_is_float(r.seq->dtype) || r.seq->dtype == DT_BOOL))
        return ir_fail("%s: sequence_lens has type %s, expected integers", c->op, ir_dtype_name(r.seq->dtype));
    if (r.seq && check_shape(c, r.seq, "sequence_lens", 1, ss))
        return -1;
    if (r.h0 && (same_type(c, r.h0, "initial_h", r.dt) || check_shape(c, r.h0, "initial_h", 3, sh)))
        return -1;
    if (r.c0 && (same_type(c, r.c0, "initial_c", r.dt) || check_shape(c, r.c0, "initial_c", 3, sh)))
        return -1;
    if (r.P && (same_type(c, r.P, "P", r.dt) || check_shape(c, r.P, "P", 2, sp)))
        return -1;
    r.clip = op_attr_float(c, "clip", 0);
    if (r.clip < 0)
        return ir_fail("%s: clip %g must be positive", c->op, r.clip);
    if (transpose_weights(c, 1, "WT", &r.W, &r.wt) || transpose_weights(c, 2, "RT", &r.R, &r.rt))
        return -1;
    r.lbr = cell == CELL_GRU && op_attr_int(c, "linear_before_reset", 0) != 0;
    r.input_forget = cell == CELL_LSTM && op_attr_int(c, "input_forget", 0) != 0;
    r.stride = cell == CELL_LSTM || (cell == CELL_GRU && !r.lbr) ? 2 : 1;
    if (parse_acts(&r))
        return -1;
    /* both directions' projections, then both recurrences: the two scans are neighbours in
     * the model, where threads run them side by side (lower/model.c, "beside") */
    for (int d = 0; d < r.ndir; d++)
        if (project(&r, d))
            return -1;
    for (int d = 0; d < r.ndir; d++)
        if (build_scan(&r, d))
            return -1;
    return emit_outputs(&r);
}

static int rnn(OpCtx *c) { return recurrence(c, CELL_RNN); }
static int gru(OpCtx *c) { return recurrence(c, CELL_GRU); }
static int lstm(OpCtx *c) { return recurrence(c, CELL_LSTM); }

/* ---------------------------------------------------------------- Attention */

typedef struct {
    Tensor *t;
    int is3d;
    int64_t heads, seq, size;   /* the [B, heads, seq, size] view */
} Heads;

/* Q, K, V as [B, heads, seq, size]: 4-D as is, 3-D [B, seq, heads*size] split by heads */
static int heads_view(OpCtx *c, Tensor *t, const char *what, int64_t nheads, Heads *h)
{
    h->t = t;
    h->is3d = t->ndim == 3;
    if (t->ndim == 4) {
        h->heads = t->shape[1], h->seq = t->shape[2], h->size = t->shape[3];
        if (nheads > 0 && nheads != h->heads)
            return ir_fail("%s: %s has %lld heads but the attribute says %lld", c->op, what, (long long)h->heads,
                           (long long)nheads);
        return 0;
    }
    if (t->ndim != 3)
        return ir_fail("%s: %s has rank %d, expected 3 or 4", c->op, what, t->ndim);
    if (nheads < 1)
        return ir_fail("%s: 3-D inputs need the q_num_heads and kv_num_heads attributes", c->op);
    if (t->shape[2] % nheads)
        return ir_fail("%s: %s hidden size %lld is not a multiple of %lld heads", c->op, what,
                       (long long)t->shape[2], (long long)nheads);
    h->heads = nheads, h->seq = t->shape[1], h->size = t->shape[2] / nheads;
    return 0;
}

static Expr *heads_read(Heads *h, Expr *b, Expr *hd, Expr *s, Expr *e)
{
    if (!h->is3d)
        return at(h->t, b, hd, s, e);
    return at(h->t, b, s, add(mul(hd, idx(h->size)), e));
}

/* present = concat(past, new) along the sequence: [B, heads, past+seq, size] */
static Tensor *present(OpCtx *c, int out, Tensor *past, Heads *h, int64_t B, const char *what)
{
    if (!past && !h->is3d) {
        if (!wants(c, out))
            return h->t;
        return op_copy(c, out, h->t);
    }
    int64_t P = past ? past->shape[2] : 0;
    int64_t shape[4] = {B, h->heads, P + h->seq, h->size};
    IterVar **ax = op_axes(4, shape);
    Expr *b = var(ax[0]), *hd = var(ax[1]), *p = var(ax[2]), *e = var(ax[3]);
    Expr *fresh = heads_read(h, b, hd, iadd(p, -P), e);
    Expr *body = past ? ir_select(ir_bin(OP_LT, p, idx(P)), at(past, b, hd, p, e), fresh) : fresh;
    if (wants(c, out))
        return op_emit_out(c, out, 4, ax, body);
    return emit_tmp(c, what, 4, ax, body);
}

/* Output i of shape [shape], src (computed in f32) rounded to the storage type dt. */
static Tensor *emit_rounded(OpCtx *c, int i, int ndim, const int64_t *shape, Tensor *src, DType dt)
{
    IterVar **ax = op_axes(ndim, shape);
    Expr *ix[KG_MAX_DIMS];
    op_axis_exprs(ax, ndim, ix);
    return op_emit_out(c, i, ndim, ax, ir_cast(dt, op_read(src, ix)));
}

/* The storage floats (f16, bf16) are computed in f32 (ct) from the products to the
 * weighted sum, and rounded once where an output is stored. */
static int attention(OpCtx *c)
{
    Tensor *q = op_input(c, 0, "Q"), *k = op_input(c, 1, "K"), *v = op_input(c, 2, "V");
    if (!q || !k || !v)
        return -1;
    if ((!ir_dtype_is_storage(q->dtype) && float_type(c, q)) || same_type(c, k, "K", q->dtype) ||
        same_type(c, v, "V", q->dtype))
        return -1;
    DType dt = q->dtype, ct = ir_dtype_is_storage(dt) ? DT_F32 : dt;
    if (k->ndim != q->ndim || v->ndim != q->ndim)
        return ir_fail("%s: Q, K and V must have the same rank", c->op);
    int64_t B = q->shape[0];
    if (k->shape[0] != B || v->shape[0] != B)
        return ir_fail("%s: Q, K and V have different batch sizes", c->op);
    Heads hq, hk, hv;
    if (heads_view(c, q, "Q", op_attr_int(c, "q_num_heads", 0), &hq) ||
        heads_view(c, k, "K", op_attr_int(c, "kv_num_heads", 0), &hk) ||
        heads_view(c, v, "V", op_attr_int(c, "kv_num_heads", 0), &hv))
        return -1;
    if (hk.heads != hv.heads || hk.seq != hv.seq)
        return ir_fail("%s: K and V disagree on heads or sequence length", c->op);
    if (hq.size != hk.size)
        return ir_fail("%s: Q head size %lld differs from K head size %lld", c->op, (long long)hq.size,
                       (long long)hk.size);
    if (hq.heads % hk.heads)
        return ir_fail("%s: %lld query heads are not a multiple of %lld key/value heads", c->op,
                       (long long)hq.heads, (long long)hk.heads);
    int64_t rep = hq.heads / hk.heads, NH = hq.heads, S = hq.seq;

    Tensor *mask = op_has_input(c, 3) ? c->in[3] : NULL;
    Tensor *pk = op_has_input(c, 4) ? c->in[4] : NULL, *pv = op_has_input(c, 5) ? c->in[5] : NULL;
    Tensor *nonpad = op_has_input(c, 6) ? c->in[6] : NULL;
    if (!pk != !pv)
        return ir_fail("%s: past_key and past_value come together", c->op);
    int64_t P = 0;
    if (pk) {
        int64_t sk[4] = {B, hk.heads, pk->shape[2], hk.size}, sv[4] = {B, hv.heads, pk->shape[2], hv.size};
        if (pk->ndim != 4)
            return ir_fail("%s: past_key has rank %d, expected 4", c->op, pk->ndim);
        if (same_type(c, pk, "past_key", dt) || check_shape(c, pk, "past_key", 4, sk) ||
            same_type(c, pv, "past_value", dt) || check_shape(c, pv, "past_value", 4, sv))
            return -1;
        P = pk->shape[2];
    }
    int64_t TOT = P + hk.seq;
    if (mask) {
        if (mask->dtype != DT_BOOL && mask->dtype != dt)
            return ir_fail("%s: attn_mask has type %s, expected bool or %s", c->op, ir_dtype_name(mask->dtype),
                           ir_dtype_name(dt));
        if (mask->ndim < 2 || mask->ndim > 4)
            return ir_fail("%s: attn_mask has rank %d, expected 2 to 4", c->op, mask->ndim);
        int64_t want[4] = {B, NH, S, TOT};
        for (int d = 0; d < mask->ndim; d++) {
            int64_t w = want[4 - mask->ndim + d], m = mask->shape[d];
            if (d == mask->ndim - 1 ? m > w : (m != w && m != 1))
                return ir_fail("%s: attn_mask dimension %d is %lld, does not fit %lld", c->op, d, (long long)m,
                               (long long)w);
        }
    }
    if (nonpad) {
        int64_t sn[1] = {B};
        if (ir_dtype_is_float(nonpad->dtype) || check_shape(c, nonpad, "nonpad_kv_seqlen", 1, sn))
            return ir_fail("%s: nonpad_kv_seqlen must be integers of shape [%lld]", c->op, (long long)B);
    }
    int causal = op_attr_int(c, "is_causal", 0) != 0;
    int mode = (int)op_attr_int(c, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return ir_fail("%s: qk_matmul_output_mode %d is outside 0..3", c->op, mode);
    double softcap = op_attr_float(c, "softcap", 0);
    double scale = op_attr(c, "scale") ? op_attr_float(c, "scale", 1) : 1 / sqrt((double)hq.size);
    Expr *ss = op_lit(sqrt(scale), ct);

    Tensor *kall = present(c, 1, pk, &hk, B, "key");
    Tensor *vall = present(c, 2, pv, &hv, B, "value");
    if (!kall || !vall)
        return -1;

    /* QK[b, h, i, j] = sum_e (q sqrt(scale)) (k sqrt(scale)), kv head h / rep */
    int64_t sqk[4] = {B, NH, S, TOT};
    IterVar **ax = op_axes(4, sqk);
    Expr *b = var(ax[0]), *h = var(ax[1]), *i = var(ax[2]), *j = var(ax[3]);
    IterVar *e = raxis("e", hq.size);
    Expr *prod = mul(mul(ir_cast(ct, heads_read(&hq, b, h, i, var(e))), ss),
                     mul(ir_cast(ct, at(kall, b, fdiv(h, rep), j, var(e))), ss));
    Tensor *qk = emit_tmp(c, "qk", 4, ax, ir_reduce(RED_SUM, prod, &e, 1));
    if (!qk)
        return -1;

    /* softcap, then the bias: mask, causal, padding */
    ax = op_axes(4, sqk);
    b = var(ax[0]), h = var(ax[1]), i = var(ax[2]), j = var(ax[3]);
    Expr *x1 = at(qk, b, h, i, j);
    if (softcap > 0) {
        Expr *cap = op_lit(softcap, ct);
        x1 = mul(cap, fn1(FN_TANH, dvd(x1, cap)));
    }
    Expr *ninf = op_lit(-INFINITY, ct);
    Expr *bias = NULL, *masked = NULL;
    if (mask) {
        Expr *all[4] = {b, h, i, j}, *mi[4];
        int off = 4 - mask->ndim;
        for (int d = 0; d < mask->ndim; d++)
            mi[d] = mask->shape[d] == 1 && d < mask->ndim - 1 ? idx(0) : all[off + d];
        Expr *m = ir_access(mask, mi, mask->ndim);
        if (mask->dtype == DT_BOOL)
            masked = ir_un(UN_NOT, m);
        else
            bias = ir_cast(ct, m);
        if (mask->shape[mask->ndim - 1] < TOT) {   /* a short mask is padded with -inf */
            Expr *past_end = ir_bin(OP_GE, j, idx(mask->shape[mask->ndim - 1]));
            masked = masked ? ir_select(past_end, ir_bool(1), masked) : past_end;
        }
    }
    if (causal) {
        /* a query at i sees keys j <= i + offset */
        Expr *limit;
        if (!pk && nonpad)
            limit = add(i, sub(as_index(at(nonpad, b)), idx(S)));
        else
            limit = iadd(i, P);
        Expr *cm = ir_bin(OP_GT, j, limit);
        masked = masked ? ir_bin(OP_OR, cm, masked) : cm;
    }
    if (nonpad) {
        Expr *pm = ir_bin(OP_GE, j, as_index(at(nonpad, b)));
        masked = masked ? ir_bin(OP_OR, pm, masked) : pm;
    }
    Expr *x2 = bias ? add(x1, bias) : x1;
    if (masked)
        x2 = ir_select(masked, ninf, x2);
    Tensor *scores = emit_tmp(c, "scores", 4, ax, x2);
    if (!scores)
        return -1;
    if (wants(c, 3) && mode < 3) {
        ax = op_axes(4, sqk);
        Expr *o = at(mode == 2 ? scores : qk, var(ax[0]), var(ax[1]), var(ax[2]), var(ax[3]));
        if (mode == 1 && softcap > 0) {
            Expr *cap = op_lit(softcap, ct);
            o = mul(cap, fn1(FN_TANH, dvd(o, cap)));
        }
        if (!op_emit_out(c, 3, 4, ax, ir_cast(dt, o)))
            return -1;
    }

    /* softmax over j */
    int64_t srow[3] = {B, NH, S};
    ax = op_axes(3, srow);
    IterVar *jr = raxis("j", TOT);
    Tensor *mx = emit_tmp(c, "max", 3, ax,
                          ir_reduce(RED_MAX, at(scores, var(ax[0]), var(ax[1]), var(ax[2]), var(jr)), &jr, 1));
    ax = op_axes(4, sqk);
    b = var(ax[0]), h = var(ax[1]), i = var(ax[2]), j = var(ax[3]);
    Tensor *ex = mx ? emit_tmp(c, "exp", 4, ax, fn1(FN_EXP, sub(at(scores, b, h, i, j), at(mx, b, h, i)))) : NULL;
    if (!ex)
        return -1;
    ax = op_axes(3, srow);
    jr = raxis("j", TOT);
    Tensor *sum = emit_tmp(c, "sum", 3, ax,
                           ir_reduce(RED_SUM, at(ex, var(ax[0]), var(ax[1]), var(ax[2]), var(jr)), &jr, 1));
    ax = op_axes(4, sqk);
    b = var(ax[0]), h = var(ax[1]), i = var(ax[2]), j = var(ax[3]);
    if (!sum)
        return -1;
    Expr *pbody = dvd(at(ex, b, h, i, j), at(sum, b, h, i));
    int prob_out = wants(c, 3) && mode == 3;
    Tensor *prob = prob_out && ct == dt ? op_emit_out(c, 3, 4, ax, pbody) : emit_tmp(c, "prob", 4, ax, pbody);
    if (!prob || (prob_out && ct != dt && !emit_rounded(c, 3, 4, sqk, prob, dt)))
        return -1;

    /* Y = prob V: [B, NH, S, Dv], or [B, S, NH*Dv] for 3-D inputs */
    int64_t dv = hv.size;
    IterVar *jj = raxis("j", TOT);
    int yd = hq.is3d ? 3 : 4;
    int64_t sy[4] = {B, NH, S, dv};
    Expr *body;
    if (!hq.is3d) {
        ax = op_axes(4, sy);
        b = var(ax[0]), h = var(ax[1]), i = var(ax[2]);
        body = mul(at(prob, b, h, i, var(jj)), ir_cast(ct, at(vall, b, fdiv(h, rep), var(jj), var(ax[3]))));
    } else {
        sy[1] = S, sy[2] = NH * dv;
        ax = op_axes(3, sy);
        b = var(ax[0]), i = var(ax[1]);
        h = fdiv(var(ax[2]), dv);
        body = mul(at(prob, b, h, i, var(jj)), ir_cast(ct, at(vall, b, fdiv(h, rep), var(jj), fmod_(var(ax[2]), dv))));
    }
    body = ir_reduce(RED_SUM, body, &jj, 1);
    if (ct == dt)
        return op_emit_out(c, 0, yd, ax, body) ? 0 : -1;
    Tensor *y = emit_tmp(c, "y", yd, ax, body);
    return y && emit_rounded(c, 0, yd, sy, y, dt) ? 0 : -1;
}

/* ---------------------------------------------------------------- RotaryEmbedding */

/* x at the same (batch, sequence, head) and head offset d + delta */
static Expr *x_at(Tensor *x, Expr **ix, int64_t delta)
{
    Expr *xi[KG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        xi[i] = ix[i];
    xi[x->ndim - 1] = iadd(ix[x->ndim - 1], delta);
    return ir_access(x, xi, x->ndim);
}

/* cos or sin at frequency i: cache[pos[b, s], i] or cache[b, s, i] */
static Expr *cache(Tensor *t, Expr *pos, Expr *b, Expr *s, Expr *i)
{
    return pos ? at(t, pos, i) : at(t, b, s, i);
}

static int rotary(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X"), *cc = op_input(c, 1, "cos_cache"), *sc = op_input(c, 2, "sin_cache");
    if (!x || !cc || !sc)
        return -1;
    Tensor *pos = op_has_input(c, 3) ? c->in[3] : NULL;
    if (float_type(c, x) || same_type(c, cc, "cos_cache", x->dtype) || same_type(c, sc, "sin_cache", x->dtype))
        return -1;
    DType dt = x->dtype;
    int64_t B = x->shape[0], S, hs;
    if (x->ndim == 4) {
        S = x->shape[2], hs = x->shape[3];
    } else if (x->ndim == 3) {
        int64_t nh = op_attr_int(c, "num_heads", 0);
        if (nh < 1)
            return ir_fail("%s: 3-D input needs the num_heads attribute", c->op);
        if (x->shape[2] % nh)
            return ir_fail("%s: hidden size %lld is not a multiple of %lld heads", c->op, (long long)x->shape[2],
                           (long long)nh);
        S = x->shape[1], hs = x->shape[2] / nh;
    } else {
        return ir_fail("%s: input has rank %d, expected 3 or 4", c->op, x->ndim);
    }
    int64_t rd = op_attr_int(c, "rotary_embedding_dim", 0);
    if (rd == 0)
        rd = hs;
    if (rd < 2 || rd > hs || rd % 2)
        return ir_fail("%s: rotary_embedding_dim %lld must be even and within 2..%lld", c->op, (long long)rd,
                       (long long)hs);
    int64_t half = rd / 2;
    int interleaved = op_attr_int(c, "interleaved", 0) != 0;
    if (!sc || cc->ndim != sc->ndim)
        return ir_fail("%s: cos_cache and sin_cache have different ranks", c->op);
    for (int d = 0; d < cc->ndim; d++)
        if (cc->shape[d] != sc->shape[d])
            return ir_fail("%s: cos_cache and sin_cache have different shapes", c->op);
    if (pos) {
        int64_t sp[2] = {B, S};
        if (ir_dtype_is_float(pos->dtype) || pos->dtype == DT_BOOL || check_shape(c, pos, "position_ids", 2, sp))
            return ir_fail("%s: position_ids must be integers of shape [%lld, %lld]", c->op, (long long)B,
                           (long long)S);
        if (cc->ndim != 2 || cc->shape[1] < half)
            return ir_fail("%s: with position_ids, the caches must be [max_position, >= %lld]", c->op,
                           (long long)half);
    } else if (cc->ndim != 3 || cc->shape[0] != B || cc->shape[1] != S || cc->shape[2] < half) {
        return ir_fail("%s: without position_ids, the caches must be [%lld, %lld, >= %lld]", c->op, (long long)B,
                       (long long)S, (long long)half);
    }

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *ix[4];
    op_axis_exprs(ax, x->ndim, ix);
    Expr *b = ix[0], *s = x->ndim == 4 ? ix[2] : ix[1], *last = ix[x->ndim - 1];
    Expr *d = x->ndim == 4 ? last : fmod_(last, hs);
    Expr *p = pos ? as_index(at(pos, b, s)) : NULL;
    Expr *body;
    if (!interleaved) {
        Expr *lo = ir_bin(OP_LT, d, idx(half));
        Expr *i_lo = d, *i_hi = iadd(d, -half);
        Expr *first = sub(mul(cache(cc, p, b, s, i_lo), x_at(x, ix, 0)), mul(cache(sc, p, b, s, i_lo), x_at(x, ix, half)));
        Expr *second = add(mul(cache(sc, p, b, s, i_hi), x_at(x, ix, -half)), mul(cache(cc, p, b, s, i_hi), x_at(x, ix, 0)));
        body = ir_select(lo, first, second);
    } else {
        Expr *i = fdiv(d, 2), *even = ir_bin(OP_EQ, fmod_(d, 2), idx(0));
        Expr *first = sub(mul(cache(cc, p, b, s, i), x_at(x, ix, 0)), mul(cache(sc, p, b, s, i), x_at(x, ix, 1)));
        Expr *second = add(mul(cache(sc, p, b, s, i), x_at(x, ix, -1)), mul(cache(cc, p, b, s, i), x_at(x, ix, 0)));
        body = ir_select(even, first, second);
    }
    if (pos) {   /* out-of-range positions give 0 rather than reading past the cache */
        Expr *ok = ir_bin(OP_AND, ir_bin(OP_GE, p, idx(0)), ir_bin(OP_LT, p, idx(cc->shape[0])));
        body = ir_select(ok, body, op_lit(0, dt));
    }
    if (rd < hs)
        body = ir_select(ir_bin(OP_LT, d, idx(rd)), body, op_read(x, ix));
    return op_emit_out(c, 0, x->ndim, ax, body) ? 0 : -1;
}

const OpDef op_defs_rnn[] = {
    {"RNN", rnn},
    {"GRU", gru},
    {"LSTM", lstm},
    {"Attention", attention},
    {"RotaryEmbedding", rotary},
    {NULL, NULL},
};
