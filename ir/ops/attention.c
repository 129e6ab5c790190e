/* attention.c - ONNX attention-family operators beyond Attention (rnn.c): LinearAttention,
 * CausalConvWithState and FlexAttention (ai.onnx.preview).
 *
 * LinearAttention keeps one state matrix S[d_k, d_v] per batch and key/value head and
 * updates it step by step: a scan whose axis 0 is the step (row 0 the initial state). The
 * delta rules need S_{t-1}^T k_t before they can write S_t, so they take two rows a step:
 * the odd row holds the corrected value beta (v - S^T k) (in its i = 0 slice), the even row
 * the new state. The output reads the query against the state rows after the scan.
 *
 * FlexAttention's score_mod and prob_mod subgraphs are imported in place (OpCtx.subgraph)
 * over the scores and probabilities.
 *
 * All three compute in float (double for double inputs) and round float16 and bfloat16
 * values where the reference does: at the end, and before CausalConvWithState's activation
 * and after FlexAttention's scaling of Q and K and its Q K^T. */
#include "ops.h"

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
static Expr *fn1(MathFn fn, Expr *x) { return ir_call(fn, &x); }
static Expr *idx(int64_t v) { return ir_idx(v); }
static Expr *var(IterVar *iv) { return ir_varref(iv->var); }
static Expr *iadd(Expr *a, int64_t k) { return k ? ir_bin(OP_ADD, a, ir_idx(k)) : a; }
static Expr *imul(Expr *a, int64_t k) { return k == 1 ? a : ir_bin(OP_MUL, a, ir_idx(k)); }
static Expr *fdiv(Expr *a, int64_t k) { return k == 1 ? a : ir_bin(OP_FLOORDIV, a, ir_idx(k)); }
static Expr *fmod_(Expr *a, int64_t k) { return ir_bin(OP_FLOORMOD, a, ir_idx(k)); }
static Expr *eq(Expr *a, int64_t k) { return ir_bin(OP_EQ, a, ir_idx(k)); }

static IterVar *axis(const char *name, int64_t extent) { return ir_itervar_new(name, extent, IV_SPATIAL); }
static IterVar *raxis(const char *name, int64_t extent) { return ir_itervar_new(name, extent, IV_REDUCE); }

static Tensor *opt_input(OpCtx *c, int i) { return op_has_input(c, i) ? c->in[i] : NULL; }
static int wants(OpCtx *c, int i) { return i < c->nout && c->out_names[i]; }

/* The type the arithmetic runs in: double for double, float for the rest. */
static DType calc_type(DType t) { return t == DT_F64 ? DT_F64 : DT_F32; }
static Expr *to(DType t, Expr *e) { return e->dtype == t ? e : ir_cast(t, e); }

/* a float input (float, double, float16 or bfloat16) */
static int float_input(OpCtx *c, Tensor *t, const char *what)
{
    DType d = t->dtype;
    if (d != DT_F32 && d != DT_F64 && d != DT_F16 && d != DT_BF16)
        return ir_fail("%s: %s has type %s (float, double, float16 and bfloat16 only)", c->op, what,
                       ir_dtype_name(d));
    return 0;
}

static int same_type(OpCtx *c, Tensor *t, const char *what, const Tensor *like, const char *like_what)
{
    if (t->dtype != like->dtype)
        return ir_fail("%s: %s has type %s, expected %s like %s", c->op, what, ir_dtype_name(t->dtype),
                       ir_dtype_name(like->dtype), like_what);
    return 0;
}

/* "[2,4,8]": t's shape, for messages */
static const char *dims(const Tensor *t)
{
    char buf[KG_MAX_DIMS * 21 + 3] = "[";
    for (int d = 0; d < t->ndim; d++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%lld", d ? "," : "", (long long)t->shape[d]);
    return ir_fmt("%s]", buf);
}

static int rank_is(OpCtx *c, Tensor *t, const char *what, int ndim, const char *layout)
{
    if (t->ndim != ndim)
        return ir_fail("%s: %s has rank %d, expected %d %s", c->op, what, t->ndim, ndim, layout);
    return 0;
}

/* ---------------------------------------------------------------- LinearAttention */

typedef struct {
    OpCtx *c;
    DType ct;                 /* arithmetic type */
    int64_t B, T, Hq, Hkv, dk, dv, group;
    int gating, delta;        /* the rule's two ingredients */
    int stride;               /* scan rows a step: 2 for the delta rules */
    Tensor *q, *k, *v, *past, *decay, *beta, *erase;
    int decay_per_head;       /* decay is [B, T, Hkv] rather than [B, T, Hkv*dk] */
    int beta_shared;          /* beta is [B, T, 1] rather than [B, T, Hkv] */
    Tensor *S;                /* the scan: [T*stride + 1, B, Hkv, dk, dv] */
} Lin;

/* the packed [B, T, heads*size] inputs at head h, element e; as the arithmetic type */
static Expr *packed(Lin *L, Tensor *t, Expr *b, Expr *s, Expr *h, int64_t size, Expr *e)
{
    return to(L->ct, at(t, b, s, add(imul(h, size), e)));
}

static Expr *key(Lin *L, Expr *b, Expr *s, Expr *h, Expr *i) { return packed(L, L->k, b, s, h, L->dk, i); }
static Expr *value(Lin *L, Expr *b, Expr *s, Expr *h, Expr *j) { return packed(L, L->v, b, s, h, L->dv, j); }

/* exp(g_t) for key dimension i */
static Expr *decay_factor(Lin *L, Expr *b, Expr *s, Expr *h, Expr *i)
{
    Expr *g = L->decay_per_head ? to(L->ct, at(L->decay, b, s, h)) : packed(L, L->decay, b, s, h, L->dk, i);
    return fn1(FN_EXP, g);
}

/* S_{t-1}[i, j] after the decay of step s (the state is at row `row`) */
static Expr *decayed(Lin *L, Expr *row, Expr *b, Expr *s, Expr *h, Expr *i, Expr *j)
{
    Expr *prev = at(L->S, row, b, h, i, j);
    return L->gating ? mul(prev, decay_factor(L, b, s, h, i)) : prev;
}

/* the delta rules' corrected value of step s: beta (v - sum_i S_dec[i, j] k_erase[i]),
 * S_{t-1} at row `row` */
static Expr *corrected(Lin *L, Expr *row, Expr *b, Expr *s, Expr *h, Expr *j)
{
    IterVar *r = raxis("r", L->dk);
    Expr *ke = key(L, b, s, h, var(r));
    if (L->erase)
        ke = mul(packed(L, L->erase, b, s, h, L->dk, var(r)), ke);
    Expr *retrieved = ir_reduce(RED_SUM, mul(decayed(L, row, b, s, h, var(r), j), ke), &r, 1);
    Expr *bt = to(L->ct, L->beta_shared ? at(L->beta, b, s, idx(0)) : at(L->beta, b, s, h));
    return mul(bt, sub(value(L, b, s, h, j), retrieved));
}

static int lin_scan(Lin *L)
{
    OpCtx *c = L->c;
    IterVar *ax[5] = {axis("u", L->T * L->stride + 1), axis("b", L->B), axis("h", L->Hkv), axis("i", L->dk),
                      axis("j", L->dv)};
    Tensor *S = ir_scan_begin(op_name(c, "state"), L->ct, 5, ax);
    if (!S)
        return -1;
    L->S = S;
    Expr *u = var(ax[0]), *b = var(ax[1]), *h = var(ax[2]), *i = var(ax[3]), *j = var(ax[4]);
    Expr *init = L->past ? to(L->ct, at(L->past, b, h, i, j)) : op_lit(0, L->ct);
    Expr *update;
    if (!L->delta) {
        /* row s+1: S_s = decay S_{s-1} + k_s v_s^T */
        Expr *s = iadd(u, -1);
        update = add(decayed(L, s, b, s, h, i, j), mul(key(L, b, s, h, i), value(L, b, s, h, j)));
    } else {
        /* row 2s+1 (i = 0): the corrected value; row 2s+2: S_s = decay S_{s-1} + k_s corrected^T */
        Expr *so = fdiv(iadd(u, -1), 2);
        Expr *odd = ir_select(eq(i, 0), corrected(L, iadd(u, -1), b, so, h, j), op_lit(0, L->ct));
        Expr *se = iadd(fdiv(u, 2), -1);
        Expr *write = mul(key(L, b, se, h, i), at(S, iadd(u, -1), b, h, idx(0), j));
        Expr *even = add(decayed(L, iadd(u, -2), b, se, h, i, j), write);
        update = ir_select(eq(fmod_(u, 2), 1), odd, even);
    }
    if (ir_scan_finish(S, 1, init, update) || ir_program_add(c->prog, S))
        return -1;
    return 0;
}

/* output[b, t, h*dv + j] = scale sum_i q[b, t, h*dk + i] S_t[b, h / group, i, j] */
static int lin_output(Lin *L, double scale)
{
    OpCtx *c = L->c;
    int64_t shape[3] = {L->B, L->T, L->Hq * L->dv};
    IterVar **ax = op_axes(3, shape);
    Expr *b = var(ax[0]), *t = var(ax[1]), *h = fdiv(var(ax[2]), L->dv), *j = fmod_(var(ax[2]), L->dv);
    IterVar *r = raxis("r", L->dk);
    Expr *row = imul(iadd(t, 1), L->stride);
    Expr *prod = mul(packed(L, L->q, b, t, h, L->dk, var(r)), at(L->S, row, b, fdiv(h, L->group), var(r), j));
    Expr *o = mul(op_lit(scale, L->ct), ir_reduce(RED_SUM, prod, &r, 1));
    return op_emit_out(c, 0, 3, ax, to(L->q->dtype, o)) ? 0 : -1;
}

/* present_state: the last state row, in past_state's type (query's without one) */
static int lin_present(Lin *L)
{
    OpCtx *c = L->c;
    int64_t shape[4] = {L->B, L->Hkv, L->dk, L->dv};
    IterVar **ax = op_axes(4, shape);
    Expr *last = at(L->S, idx(L->T * L->stride), var(ax[0]), var(ax[1]), var(ax[2]), var(ax[3]));
    DType st = L->past ? L->past->dtype : L->q->dtype;
    return op_emit_out(c, 1, 4, ax, to(st, last)) ? 0 : -1;
}

/* the last dimension of a [B, T, X] gate input: one of the allowed sizes */
static int gate_shape(Lin *L, Tensor *t, const char *what, int64_t a, int64_t b, int *is_a)
{
    OpCtx *c = L->c;
    if (rank_is(c, t, what, 3, "(batch, sequence, heads * size)") || float_input(c, t, what))
        return -1;
    if (t->shape[0] != L->B || t->shape[1] != L->T)
        return ir_fail("%s: %s has batch and sequence %lld, %lld; the query has %lld, %lld", c->op, what,
                       (long long)t->shape[0], (long long)t->shape[1], (long long)L->B, (long long)L->T);
    int64_t last = t->shape[2];
    if (last != a && last != b && a == b)
        return ir_fail("%s: %s has last dimension %lld, expected %lld", c->op, what, (long long)last, (long long)a);
    if (last != a && last != b)
        return ir_fail("%s: %s has last dimension %lld, expected %lld or %lld", c->op, what, (long long)last,
                       (long long)a, (long long)b);
    *is_a = last == a;
    return 0;
}

static int linear_attention(OpCtx *c)
{
    Lin L = {0};
    L.c = c;
    L.q = op_input(c, 0, "query");
    L.k = op_input(c, 1, "key");
    L.v = op_input(c, 2, "value");
    if (!L.q || !L.k || !L.v)
        return -1;
    L.past = opt_input(c, 3);
    L.decay = opt_input(c, 4);
    L.beta = opt_input(c, 5);
    L.erase = opt_input(c, 6);
    if (c->nin > 7)
        return ir_fail("%s: %d inputs, at most 7 (query, key, value, past_state, decay, beta, erase_gate)", c->op,
                       c->nin);

    const char *rule = op_attr_str(c, "update_rule", "gated_delta");
    if (!strcmp(rule, "linear"))
        L.gating = 0, L.delta = 0;
    else if (!strcmp(rule, "gated"))
        L.gating = 1, L.delta = 0;
    else if (!strcmp(rule, "delta"))
        L.gating = 0, L.delta = 1;
    else if (!strcmp(rule, "gated_delta"))
        L.gating = 1, L.delta = 1;
    else
        return ir_fail("%s: update_rule '%s' is not linear, gated, delta or gated_delta", c->op, rule);
    if (L.gating != !!L.decay)
        return ir_fail("%s: update_rule '%s' %s the decay input", c->op, rule, L.gating ? "requires" : "forbids");
    if (L.delta != !!L.beta)
        return ir_fail("%s: update_rule '%s' %s the beta input", c->op, rule, L.delta ? "requires" : "forbids");
    if (L.erase && !L.delta)
        return ir_fail("%s: update_rule '%s' forbids the erase_gate input", c->op, rule);

    if (!op_attr(c, "q_num_heads") || !op_attr(c, "kv_num_heads"))
        return ir_fail("%s: the q_num_heads and kv_num_heads attributes are required", c->op);
    L.Hq = op_attr_int(c, "q_num_heads", 0);
    L.Hkv = op_attr_int(c, "kv_num_heads", 0);
    if (L.Hq < 1 || L.Hkv < 1 || L.Hq % L.Hkv)
        return ir_fail("%s: q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)", c->op,
                       (long long)L.Hq, (long long)L.Hkv);
    L.group = L.Hq / L.Hkv;

    const char *packed3 = "(batch, sequence, heads * size)";
    if (rank_is(c, L.q, "query", 3, packed3) || rank_is(c, L.k, "key", 3, packed3) ||
        rank_is(c, L.v, "value", 3, packed3))
        return -1;
    if (float_input(c, L.q, "query") || same_type(c, L.k, "key", L.q, "query") ||
        same_type(c, L.v, "value", L.q, "query"))
        return -1;
    L.ct = calc_type(L.q->dtype);
    L.B = L.q->shape[0];
    L.T = L.q->shape[1];
    for (int n = 1; n <= 2; n++) {
        Tensor *t = n == 1 ? L.k : L.v;
        if (t->shape[0] != L.B || t->shape[1] != L.T)
            return ir_fail("%s: %s has batch and sequence %lld, %lld; the query has %lld, %lld", c->op,
                           n == 1 ? "key" : "value", (long long)t->shape[0], (long long)t->shape[1],
                           (long long)L.B, (long long)L.T);
    }
    if (L.q->shape[2] % L.Hq || L.v->shape[2] % L.Hkv)
        return ir_fail("%s: query's last dimension %lld must be a multiple of q_num_heads (%lld) and value's %lld "
                       "of kv_num_heads (%lld)",
                       c->op, (long long)L.q->shape[2], (long long)L.Hq, (long long)L.v->shape[2],
                       (long long)L.Hkv);
    L.dk = L.q->shape[2] / L.Hq;
    L.dv = L.v->shape[2] / L.Hkv;
    if (L.k->shape[2] != L.Hkv * L.dk)
        return ir_fail("%s: key has last dimension %lld, expected kv_num_heads * d_k = %lld", c->op,
                       (long long)L.k->shape[2], (long long)(L.Hkv * L.dk));
    if (L.dk < 1 || L.dv < 1 || L.T < 1 || L.B < 1)
        return ir_fail("%s: empty query, key or value", c->op);

    if (L.decay && (same_type(c, L.decay, "decay", L.q, "query") ||
                    gate_shape(&L, L.decay, "decay", L.Hkv, L.Hkv * L.dk, &L.decay_per_head)))
        return -1;
    if (L.beta && (same_type(c, L.beta, "beta", L.q, "query") ||
                   gate_shape(&L, L.beta, "beta", 1, L.Hkv, &L.beta_shared)))
        return -1;
    int unused = 0;
    if (L.erase && (same_type(c, L.erase, "erase_gate", L.q, "query") ||
                    gate_shape(&L, L.erase, "erase_gate", L.Hkv * L.dk, L.Hkv * L.dk, &unused)))
        return -1;
    if (L.past) {
        int64_t want[4] = {L.B, L.Hkv, L.dk, L.dv};
        if (rank_is(c, L.past, "past_state", 4, "(batch, kv heads, d_k, d_v)") ||
            float_input(c, L.past, "past_state"))
            return -1;
        for (int d = 0; d < 4; d++)
            if (L.past->shape[d] != want[d])
                return ir_fail("%s: past_state has shape %s, expected [%lld,%lld,%lld,%lld]", c->op, dims(L.past),
                               (long long)want[0], (long long)want[1], (long long)want[2], (long long)want[3]);
    }

    /* scale: the attribute, 1/sqrt(d_k) when absent or 0 */
    double scale = op_attr_float(c, "scale", 0);
    if (scale == 0)
        scale = 1 / sqrt((double)L.dk);
    L.stride = L.delta ? 2 : 1;

    if (lin_scan(&L))
        return -1;
    if (wants(c, 0) && lin_output(&L, scale))
        return -1;
    if (wants(c, 1) && lin_present(&L))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- CausalConvWithState */

/* x[b, ch, p] of the input after the past (or K - 1 zeros): p in 0 .. K-2+L */
static Expr *padded(Tensor *x, Tensor *past, int64_t K, DType ct, Expr *b, Expr *ch, Expr *p)
{
    if (K == 1)
        return to(ct, at(x, b, ch, p));
    Expr *old = past ? to(ct, at(past, b, ch, p)) : op_lit(0, ct);
    return ir_select(ir_bin(OP_LT, p, idx(K - 1)), old, to(ct, at(x, b, ch, iadd(p, -(K - 1)))));
}

/* The depthwise causal 1-D convolution over [past_state, input] (zeros without a past):
 *   output[b, c, l]        = act(sum_r x[b, c, l + r] w[c, 0, r] + bias[c])
 *   present_state[b, c, p] = x[b, c, L + p]
 * where x = concat(past, input) along the length (K - 1 + L positions). */
static int causal_conv_with_state(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input"), *w = op_input(c, 1, "weight");
    if (!x || !w)
        return -1;
    Tensor *bias = opt_input(c, 2), *past = opt_input(c, 3);
    if (c->nin > 4)
        return ir_fail("%s: %d inputs, at most 4 (input, weight, bias, past_state)", c->op, c->nin);
    const char *act = op_attr_str(c, "activation", "none");
    int silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    if (!silu && strcmp(act, "none"))
        return ir_fail("%s: activation '%s' is not none, silu or swish", c->op, act);
    if (rank_is(c, x, "input", 3, "(batch, channels, length)") || rank_is(c, w, "weight", 3, "(channels, 1, k)") ||
        float_input(c, x, "input") || same_type(c, w, "weight", x, "input"))
        return -1;
    DType dt = x->dtype, ct = calc_type(dt);
    int64_t B = x->shape[0], C = x->shape[1], L = x->shape[2], K = w->shape[2];
    if (w->shape[0] != C || w->shape[1] != 1)
        return ir_fail("%s: weight has shape %s, expected [%lld,1,k] (one filter a channel)", c->op, dims(w),
                       (long long)C);
    if (K < 1)
        return ir_fail("%s: the kernel is empty", c->op);
    if (bias && (same_type(c, bias, "bias", x, "input") || bias->ndim != 1 || bias->shape[0] != C))
        return ir_fail("%s: bias must be a vector of %lld %s values", c->op, (long long)C, ir_dtype_name(dt));
    if (past) {
        if (rank_is(c, past, "past_state", 3, "(batch, channels, k - 1)") ||
            same_type(c, past, "past_state", x, "input"))
            return -1;
        if (past->shape[0] != B || past->shape[1] != C || past->shape[2] != K - 1)
            return ir_fail("%s: past_state has shape %s, expected [%lld,%lld,%lld]", c->op, dims(past), (long long)B,
                           (long long)C, (long long)(K - 1));
    }
    if (B < 1 || C < 1 || L < 1)
        return ir_fail("%s: empty input", c->op);

    if (wants(c, 0)) {
        int64_t shape[3] = {B, C, L};
        IterVar **ax = op_axes(3, shape);
        Expr *b = var(ax[0]), *ch = var(ax[1]), *l = var(ax[2]);
        IterVar *r = raxis("r", K);
        Expr *p = add(l, var(r));
        Expr *y = ir_reduce(RED_SUM, mul(padded(x, past, K, ct, b, ch, p), to(ct, at(w, ch, idx(0), var(r)))), &r, 1);
        if (bias)
            y = add(y, to(ct, at(bias, ch)));
        if (silu) {
            /* y sigmoid(y) of the convolution, which the reference rounds to the input type */
            Tensor *conv = op_emit(c, op_name(c, "conv"), 3, ax, to(dt, y));
            if (!conv)
                return -1;
            ax = op_axes(3, shape);
            y = to(ct, at(conv, var(ax[0]), var(ax[1]), var(ax[2])));
            y = mul(y, fn1(FN_SIGMOID, y));
        }
        if (!op_emit_out(c, 0, 3, ax, to(dt, y)))
            return -1;
    }
    if (wants(c, 1)) {
        int64_t shape[3] = {B, C, K - 1};
        if (K == 1) {   /* nothing to keep: an empty state */
            c->out[1] = op_const_tensor(c, "present_state", dt, 3, shape, NULL);
            return c->out[1] ? 0 : -1;
        }
        IterVar **ax = op_axes(3, shape);
        Expr *b = var(ax[0]), *ch = var(ax[1]), *p = iadd(var(ax[2]), L);
        if (!op_emit_out(c, 1, 3, ax, to(dt, padded(x, past, K, ct, b, ch, p))))
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- FlexAttention */

/* The value of a float scalar as type t holds it (storage types round). */
static double as_type(float v, DType t)
{
    if (!ir_dtype_is_storage(t))
        return v;
    unsigned char bits[8];
    ir_f32_to_storage(t, v, bits);
    return ir_storage_to_f32(t, bits);
}

/* x rounded to the storage type t (nothing for the others), as the arithmetic type ct */
static Expr *rounded(Expr *x, DType t, DType ct)
{
    return ir_dtype_is_storage(t) ? to(ct, ir_cast(t, x)) : x;
}

/* Graph attribute `name` (score_mod, prob_mod) applied to x: the subgraph takes the
 * whole tensor and returns one of the same shape and type. No attribute: x. */
static Tensor *modify(OpCtx *c, const char *name, Tensor *x)
{
    const OpAttr *a = op_attr(c, name);
    if (!a)
        return x;
    if (!a->graph) {
        ir_fail("%s: attribute '%s' must be a graph", c->op, name);
        return NULL;
    }
    if (!c->subgraph) {
        ir_fail("%s: '%s' needs the ONNX importer to inline it", c->op, name);
        return NULL;
    }
    if (a->graph_ninputs != 1 || a->graph_noutputs != 1) {
        ir_fail("%s: '%s' has %d inputs and %d outputs; kgen takes the form with one of each (the "
                "[batch, heads, q_len, kv_len] tensor in, one of its shape out)",
                c->op, name, a->graph_ninputs, a->graph_noutputs);
        return NULL;
    }
    Tensor *y = NULL;
    if (c->subgraph(c->importer, a->graph, name, &x, 1, &y))
        return NULL;
    int same = y->dtype == x->dtype && y->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++)
        same = y->shape[d] == x->shape[d];
    if (!same) {
        ir_fail("%s: '%s' returns %s%s; expected %s%s like its input", c->op, name, ir_dtype_name(y->dtype), dims(y),
                ir_dtype_name(x->dtype), dims(x));
        return NULL;
    }
    return y;
}

/* Y = softmax(score_mod((Q sqrt(scale)) (K sqrt(scale))^T)), prob_mod'ed, times V. Q and K
 * are scaled by sqrt(scale) in their own type and the scores rounded to it, as the
 * function body does; the softmax and the product with V run in float for float16 and
 * bfloat16 (softmax_precision), in the input type otherwise. */
static int flex_attention(OpCtx *c)
{
    Tensor *q = op_input(c, 0, "Q"), *k = op_input(c, 1, "K"), *v = op_input(c, 2, "V");
    if (!q || !k || !v)
        return -1;
    const char *qkv4 = "(batch, heads, sequence, head size)";
    if (rank_is(c, q, "Q", 4, qkv4) || rank_is(c, k, "K", 4, qkv4) || rank_is(c, v, "V", 4, qkv4) ||
        float_input(c, q, "Q") || same_type(c, k, "K", q, "Q") || float_input(c, v, "V"))
        return -1;
    if (op_attr(c, "mask_mod"))
        return ir_fail("%s: the mask_mod attribute is not supported (score_mod can mask with -inf)", c->op);
    DType dt = q->dtype, ct = calc_type(dt), pt = ct;
    if (op_attr(c, "softmax_precision")) {
        int64_t sp = op_attr_int(c, "softmax_precision", 0);
        if (sp != ONNX_FLOAT && sp != ONNX_DOUBLE)
            return ir_fail("%s: softmax_precision %lld is not supported (1: float, 11: double)", c->op,
                           (long long)sp);
        pt = sp == ONNX_FLOAT ? DT_F32 : DT_F64;
    }
    int64_t B = q->shape[0], Hq = q->shape[1], L = q->shape[2], E = q->shape[3];
    int64_t Hkv = k->shape[1], S = k->shape[2], Ev = v->shape[3];
    if (k->shape[0] != B || v->shape[0] != B || v->shape[1] != Hkv || v->shape[2] != S || k->shape[3] != E)
        return ir_fail("%s: Q %s, K %s and V %s do not fit (one batch; K and V share heads and length; Q and K "
                       "the head size)", c->op, dims(q), dims(k), dims(v));
    if (Hkv < 1 || Hq % Hkv)
        return ir_fail("%s: %lld query heads are not a multiple of %lld key/value heads", c->op, (long long)Hq,
                       (long long)Hkv);
    if (B < 1 || L < 1 || E < 1 || S < 1 || Ev < 1)
        return ir_fail("%s: empty Q, K or V", c->op);
    int64_t group = Hq / Hkv;

    /* sqrt(scale) in float, then in Q's type */
    float scale = op_attr(c, "scale") ? (float)op_attr_float(c, "scale", 1) : 1.0f / sqrtf((float)E);
    Expr *ss = op_lit(as_type(sqrtf(scale), dt), ct);

    int64_t sqk[4] = {B, Hq, L, S};
    IterVar **ax = op_axes(4, sqk);
    Expr *b = var(ax[0]), *h = var(ax[1]), *i = var(ax[2]), *j = var(ax[3]);
    IterVar *e = raxis("e", E);
    Expr *qs = rounded(mul(to(ct, at(q, b, h, i, var(e))), ss), dt, ct);
    Expr *ks = rounded(mul(to(ct, at(k, b, fdiv(h, group), j, var(e))), ss), dt, ct);
    Expr *dot = rounded(ir_reduce(RED_SUM, mul(qs, ks), &e, 1), dt, ct);
    Tensor *scores = op_emit(c, op_name(c, "scores"), 4, ax, to(pt, dot));
    scores = scores ? modify(c, "score_mod", scores) : NULL;
    if (!scores)
        return -1;

    /* softmax over j */
    int64_t srow[3] = {B, Hq, L};
    ax = op_axes(3, srow);
    IterVar *jr = raxis("j", S);
    Tensor *mx = op_emit(c, op_name(c, "max"), 3, ax,
                         ir_reduce(RED_MAX, at(scores, var(ax[0]), var(ax[1]), var(ax[2]), var(jr)), &jr, 1));
    if (!mx)
        return -1;
    ax = op_axes(4, sqk);
    b = var(ax[0]), h = var(ax[1]), i = var(ax[2]), j = var(ax[3]);
    Tensor *ex = op_emit(c, op_name(c, "exp"), 4, ax, fn1(FN_EXP, sub(at(scores, b, h, i, j), at(mx, b, h, i))));
    if (!ex)
        return -1;
    ax = op_axes(3, srow);
    jr = raxis("j", S);
    Tensor *sum = op_emit(c, op_name(c, "sum"), 3, ax,
                          ir_reduce(RED_SUM, at(ex, var(ax[0]), var(ax[1]), var(ax[2]), var(jr)), &jr, 1));
    if (!sum)
        return -1;
    ax = op_axes(4, sqk);
    b = var(ax[0]), h = var(ax[1]), i = var(ax[2]), j = var(ax[3]);
    Tensor *prob = op_emit(c, op_name(c, "prob"), 4, ax, ir_bin(OP_DIV, at(ex, b, h, i, j), at(sum, b, h, i)));
    prob = prob ? modify(c, "prob_mod", prob) : NULL;
    if (!prob)
        return -1;

    /* Y = prob V, in V's type */
    int64_t sy[4] = {B, Hq, L, Ev};
    ax = op_axes(4, sy);
    b = var(ax[0]), h = var(ax[1]), i = var(ax[2]);
    IterVar *jj = raxis("j", S);
    Expr *body = mul(at(prob, b, h, i, var(jj)), to(pt, at(v, b, fdiv(h, group), var(jj), var(ax[3]))));
    return op_emit_out(c, 0, 4, ax, to(v->dtype, ir_reduce(RED_SUM, body, &jj, 1))) ? 0 : -1;
}

const OpDef op_defs_attention[] = {
    {"LinearAttention", linear_attention},
    {"CausalConvWithState", causal_conv_with_state},
    {"ai.onnx.preview:FlexAttention", flex_attention},
    {NULL, NULL},
};
