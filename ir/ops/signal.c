/* signal.c - ONNX signal operators: DFT, STFT, the Hann, Hamming and Blackman windows, MelWeightMatrix.
 *
 * A transform is one reduction: out[.., k, .., co] = sum over n, ci of x[.., n, .., ci] *
 * W[n, ci, k, co], where ci and co pick the real or imaginary part and W is a table of
 * twiddle factors built here, when compiling (a matrix product, which the default schedules
 * tile like any other; no cos or sin is computed at run time). The table also carries what
 * the variants change: the inverse's sign and 1/L, the one-sided output's fewer bins, the
 * inverse of a one-sided spectrum's Hermitian weights, zero padding (the sum stops at the
 * points there are) and, for STFT, a constant window. Lengths, axes and steps decide shapes,
 * so they must be known when compiling; the window operators and MelWeightMatrix are
 * constants outright. */
#include "ops.h"

#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846
#define MAX_TABLE ((int64_t)1 << 24)   /* most elements of a twiddle table or a built constant */

/* ---------------------------------------------------------------- helpers */

/* One element of a constant buffer of dtype t, converted the way a Cast would (integers
 * truncate, bool is v != 0). */
static void put(void *buf, DType t, int64_t k, double v)
{
    unsigned char *p = (unsigned char *)buf + k * ir_dtype_bytes(t);
    if (t == DT_F64) {
        memcpy(p, &v, 8);
    } else if (t == DT_F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else if (ir_dtype_is_storage(t)) {
        ir_f32_to_storage(t, (float)v, p);
    } else if (t == DT_BOOL) {
        *p = v != 0;
    } else {
        uint64_t u = (uint64_t)ir_wrap_int(isfinite(v) ? (int64_t)v : 0, t);
        for (int b = 0; b < ir_dtype_bytes(t); b++)
            p[b] = (unsigned char)(u >> (8 * b));   /* little-endian, as constants are stored */
    }
}

/* cos and sin of 2*pi*m/L (0 <= m < L), exact at the quarter turns so that the
 * imaginary part of a real signal's DC and Nyquist bins comes out exactly zero. */
static void turn(int64_t m, int64_t len, double *cs, double *sn)
{
    if (m == 0) {
        *cs = 1, *sn = 0;
    } else if (2 * m == len) {
        *cs = -1, *sn = 0;
    } else if (4 * m == len) {
        *cs = 0, *sn = 1;
    } else if (4 * m == 3 * len) {
        *cs = 0, *sn = -1;
    } else {
        double a = 2 * PI * (double)m / (double)len;
        *cs = cos(a), *sn = sin(a);
    }
}

/* A scalar (or one-element) input that must be known when compiling. */
static int const_scalar(OpCtx *c, int i, const char *what, int64_t *out)
{
    int64_t v[1];
    int64_t n = op_const_ints(c, i, what, v, 1);
    if (n < 0)
        return -1;
    if (n != 1)
        return ir_fail("%s: %s must have one element", c->op, what);
    *out = v[0];
    return 0;
}

static int const_scalar_f(OpCtx *c, int i, const char *what, double *out)
{
    double v[1];
    int64_t n = op_const_floats(c, i, what, v, 1);
    if (n < 0)
        return -1;
    if (n != 1)
        return ir_fail("%s: %s must have one element", c->op, what);
    *out = v[0];
    return 0;
}

static int signal_type(OpCtx *c, const Tensor *x)
{
    DType t = x->dtype;
    if (t != DT_F32 && t != DT_F64 && t != DT_F16 && t != DT_BF16)
        return ir_fail("%s: input type %s is not supported (f32, f64, f16 or bf16)", c->op, ir_dtype_name(t));
    if (ir_tensor_numel(x) == 0)
        return ir_fail("%s: the input is empty; empty tensors are not supported", c->op);
    return 0;
}

/* The type a transform computes in: f16 and bf16 are storage only, so f32. */
static DType compute_type(DType t) { return t == DT_F64 ? DT_F64 : DT_F32; }

/* x read in the compute type. */
static Expr *read_as(Tensor *x, Expr **idx, DType ct)
{
    Expr *e = op_read(x, idx);
    return x->dtype == ct ? e : ir_cast(ct, e);
}

/* Output `out` is y, or y converted to the storage type t it was computed for. */
static int finish(OpCtx *c, int out, Tensor *y, DType t)
{
    if (!y)
        return -1;
    if (y->dtype == t) {
        c->out[out] = y;
        return 0;
    }
    IterVar **ax = op_axes(y->ndim, y->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, y->ndim, idx);
    return op_emit_out(c, out, y->ndim, ax, ir_cast(t, op_read(y, idx))) ? 0 : -1;
}

/* ---------------------------------------------------------------- the twiddle table */

/* What one transform along an axis computes. */
typedef struct {
    int64_t len;      /* L, the transform's length */
    int64_t npts;     /* input points summed: the rest is zero padding, or cut off */
    int64_t bins;     /* output points */
    int cin, cout;    /* parts per point: 1 real, 2 complex */
    int inverse;
    int hermitian;    /* the input is the first half of a real signal's spectrum (inverse,
                         one-sided): the output is real */
} Plan;

/* W[n, ci, k, co] for the plan, each W[n] scaled by window[n] when there is one. */
static Tensor *twiddles(OpCtx *c, const Plan *p, DType t, const double *window)
{
    int64_t shape[4] = {p->npts, p->cin, p->bins, p->cout};
    int64_t numel = p->bins > MAX_TABLE ? MAX_TABLE + 1 : p->npts * p->cin * p->bins * p->cout;
    if (numel > MAX_TABLE) {
        ir_fail("%s: a length-%lld transform of %lld points to %lld bins needs a twiddle table of more than %lld "
                "elements", c->op, (long long)p->len, (long long)p->npts, (long long)p->bins, (long long)MAX_TABLE);
        return NULL;
    }
    /* the angles are multiples of one turn / L: L cosines and sines serve the whole table */
    double *cs = ir_alloc(sizeof *cs * (size_t)p->len), *sn = ir_alloc(sizeof *sn * (size_t)p->len);
    for (int64_t m = 0; m < p->len; m++)
        turn(m, p->len, &cs[m], &sn[m]);
    void *data = ir_alloc((size_t)(numel * ir_dtype_bytes(t)));
    double scale = p->inverse ? 1.0 / (double)p->len : 1.0;
    for (int64_t n = 0; n < p->npts; n++) {
        double wn = window ? window[n] : 1.0;
        /* a one-sided spectrum's bins past DC and below Nyquist stand for two */
        double herm = p->hermitian && n != 0 && 2 * n != p->len ? 2.0 : 1.0;
        for (int64_t k = 0; k < p->bins; k++) {
            int64_t m = k * n % p->len;
            double f = scale * wn * herm, re = cs[m] * f, im = (p->inverse ? sn[m] : -sn[m]) * f;
            /* e^(-i a) forward, e^(+i a) inverse; (xr + i xi) (re + i im) = (xr re - xi im) +
             * i (xr im + xi re) */
            double w[2][2] = {{re, im}, {-im, re}};
            for (int ci = 0; ci < p->cin; ci++)
                for (int co = 0; co < p->cout; co++)
                    put(data, t, ((n * p->cin + ci) * p->bins + k) * p->cout + co, w[ci][co]);
        }
    }
    return op_const_tensor(c, "twiddles", t, 4, shape, data);
}

/* The plan of a transform of n points of cin parts (dft_length len, 0 if not given). */
static int plan(OpCtx *c, Plan *p, int64_t n, int cin, int64_t len, int onesided, int inverse)
{
    memset(p, 0, sizeof *p);
    p->cin = cin;
    p->inverse = inverse;
    if (inverse && onesided) {
        /* numpy's irfft: n bins of a real signal of length 2 (n - 1) unless told */
        p->hermitian = 1;
        p->len = len ? len : 2 * (n - 1);
        if (p->len < 1)
            return ir_fail("%s: an inverse one-sided transform of %lld bin needs dft_length", c->op, (long long)n);
        p->npts = n < p->len / 2 + 1 ? n : p->len / 2 + 1;
        p->bins = p->len;
        p->cout = 1;
        return 0;
    }
    p->len = len ? len : n;
    p->npts = n < p->len ? n : p->len;
    p->bins = onesided ? p->len / 2 + 1 : p->len;
    p->cout = 2;
    return 0;
}

/* ---------------------------------------------------------------- DFT */

/* The transform's axis: the attribute before opset 20 (default 1), the optional third
 * input from 20 on (default -2); the last dimension holds the parts, so it is no axis. */
static int dft_axis(OpCtx *c, int rank, int *out)
{
    int64_t a = 1;
    if (c->opset >= 20) {
        a = -2;
        if (op_has_input(c, 2) && const_scalar(c, 2, "axis", &a))
            return -1;
    } else {
        a = op_attr_int(c, "axis", 1);
    }
    int64_t na = a < 0 ? a + rank : a;
    if (na < 0 || na > rank - 2)
        return ir_fail("%s: axis %lld is out of range for rank %d (the last dimension holds the real and "
                       "imaginary parts)", c->op, (long long)a, rank);
    *out = (int)na;
    return 0;
}

static int dft(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x || signal_type(c, x))
        return -1;
    int r = x->ndim;
    if (r < 2)
        return ir_fail("%s: the input has rank %d; it must be [signal dims..., 1 or 2]", c->op, r);
    if (x->shape[r - 1] != 1 && x->shape[r - 1] != 2)
        return ir_fail("%s: the input's last dimension is %lld; it must be 1 (real) or 2 (complex)", c->op,
                       (long long)x->shape[r - 1]);
    int axis = 0;
    if (dft_axis(c, r, &axis))
        return -1;
    int64_t len = 0;
    if (op_has_input(c, 1)) {
        if (const_scalar(c, 1, "dft_length", &len))
            return -1;
        if (len < 1)
            return ir_fail("%s: dft_length is %lld; it must be at least 1", c->op, (long long)len);
    }
    int onesided = op_attr_int(c, "onesided", 0) != 0, inverse = op_attr_int(c, "inverse", 0) != 0;
    Plan p;
    if (plan(c, &p, x->shape[axis], (int)x->shape[r - 1], len, onesided, inverse))
        return -1;
    DType ct = compute_type(x->dtype);
    Tensor *w = twiddles(c, &p, ct, NULL);
    if (!w)
        return -1;

    int64_t shape[KG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = p.bins;
    shape[r - 1] = p.cout;
    IterVar **ax = op_axes(r, shape);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, r, idx);
    IterVar *rax[2] = {ir_itervar_new("rn", p.npts, IV_REDUCE), ir_itervar_new("rc", p.cin, IV_REDUCE)};
    int nr = p.cin == 2 ? 2 : 1;
    Expr *n = ir_varref(rax[0]->var), *ci = nr == 2 ? ir_varref(rax[1]->var) : ir_idx(0);
    memcpy(xi, idx, sizeof xi);
    xi[axis] = n;
    xi[r - 1] = ci;
    Expr *wi[4] = {n, ci, idx[axis], idx[r - 1]};
    Expr *body = ir_reduce(RED_SUM, ir_binary(OP_MUL, read_as(x, xi, ct), op_read(w, wi)), rax, nr);
    int storage = ct != x->dtype;
    Tensor *y = storage ? op_emit(c, op_name(c, "dft"), r, ax, body) : op_emit_out(c, 0, r, ax, body);
    return finish(c, 0, y, x->dtype);
}

/* ---------------------------------------------------------------- STFT */

/* signal [batch, length, 1 or 2] (or [batch, length], real), frame_step, an optional
 * window [frame_length], an optional frame_length; out [batch, frames, bins, 2]: the DFT of
 * each frame, times the window. A constant window goes into the table; one known only at
 * run time is a third factor of the sum. */
static int stft(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "signal");
    if (!x || signal_type(c, x))
        return -1;
    if ((x->ndim != 2 && x->ndim != 3) || (x->ndim == 3 && x->shape[2] != 1 && x->shape[2] != 2))
        return ir_fail("%s: the signal must be [batch, length, 1 or 2] or [batch, length]", c->op);
    int64_t step = 0, flen = 0;
    if (const_scalar(c, 1, "frame_step", &step))
        return -1;
    if (step < 1)
        return ir_fail("%s: frame_step is %lld; it must be at least 1", c->op, (long long)step);
    Tensor *win = op_has_input(c, 2) ? c->in[2] : NULL;
    if (win && win->ndim != 1)
        return ir_fail("%s: the window must have rank 1, not %d", c->op, win->ndim);
    if (op_has_input(c, 3) && const_scalar(c, 3, "frame_length", &flen))
        return -1;
    if (win && flen && win->shape[0] != flen)
        return ir_fail("%s: the window has %lld points but frame_length is %lld", c->op, (long long)win->shape[0],
                       (long long)flen);
    if (win)
        flen = win->shape[0];
    if (!op_has_input(c, 3) && !win)
        return ir_fail("%s: neither a window nor frame_length gives the frame length", c->op);
    int64_t slen = x->shape[1];
    if (flen < 1 || flen > slen)
        return ir_fail("%s: frame length %lld does not fit the signal's %lld points", c->op, (long long)flen,
                       (long long)slen);
    int onesided = op_attr_int(c, "onesided", 1) != 0;
    int cin = x->ndim == 3 ? (int)x->shape[2] : 1;
    Plan p;
    if (plan(c, &p, flen, cin, 0, onesided, 0))
        return -1;
    DType ct = compute_type(x->dtype);
    /* only an initializer or Constant is folded: a bound graph input stays an input */
    double *wv = NULL;
    if (win && win->kind == T_CONSTANT && !ir_dtype_is_storage(win->dtype)) {
        wv = ir_alloc(sizeof *wv * (size_t)flen);
        if (op_const_floats(c, 2, "window", wv, flen) < 0)
            return -1;
        win = NULL;
    }
    Tensor *w = twiddles(c, &p, ct, wv);
    if (!w)
        return -1;

    int64_t frames = (slen - flen) / step + 1;
    int64_t shape[4] = {x->shape[0], frames, p.bins, 2};
    IterVar **ax = op_axes(4, shape);
    Expr *idx[4];
    op_axis_exprs(ax, 4, idx);
    IterVar *rax[2] = {ir_itervar_new("rn", p.npts, IV_REDUCE), ir_itervar_new("rc", p.cin, IV_REDUCE)};
    int nr = p.cin == 2 ? 2 : 1;
    Expr *n = ir_varref(rax[0]->var), *ci = nr == 2 ? ir_varref(rax[1]->var) : ir_idx(0);
    Expr *pos = ir_bin(OP_ADD, step == 1 ? idx[1] : ir_bin(OP_MUL, idx[1], ir_idx(step)), n);
    Expr *xi[3] = {idx[0], pos, ci};
    Expr *wi[4] = {n, ci, idx[2], idx[3]};
    Expr *term = ir_binary(OP_MUL, read_as(x, xi, ct), op_read(w, wi));
    if (win)
        term = ir_binary(OP_MUL, read_as(win, &n, ct), term);
    Expr *body = ir_reduce(RED_SUM, term, rax, nr);
    int storage = ct != x->dtype;
    Tensor *y = storage ? op_emit(c, op_name(c, "stft"), 4, ax, body) : op_emit_out(c, 0, 4, ax, body);
    return finish(c, 0, y, x->dtype);
}

/* ---------------------------------------------------------------- the windows */

/* w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n < size, where N is size
 * (periodic, the default) or size - 1 (symmetric); a constant of output_datatype. */
static int window(OpCtx *c, double a0, double a1, double a2)
{
    int64_t size = 0;
    if (const_scalar(c, 0, "size", &size))
        return -1;
    if (size < 1 || size > MAX_TABLE)
        return ir_fail("%s: size is %lld; it must be from 1 to %lld", c->op, (long long)size, (long long)MAX_TABLE);
    DType t;
    if (op_dtype_from_onnx((int)op_attr_int(c, "output_datatype", 1), &t))
        return ir_fail("%s: output_datatype: %s", c->op, ir_errmsg());
    double period = op_attr_int(c, "periodic", 1) ? (double)size : (double)(size - 1);
    void *data = ir_alloc((size_t)(size * ir_dtype_bytes(t)));
    for (int64_t n = 0; n < size; n++) {
        double a = 2 * PI * (double)n / period;   /* 0/0 for a symmetric window of 1: NaN, as ONNX */
        put(data, t, n, a0 - a1 * cos(a) + a2 * cos(2 * a));
    }
    c->out[0] = op_const_tensor(c, "window", t, 1, &size, data);
    return c->out[0] ? 0 : -1;
}

static int hann_window(OpCtx *c) { return window(c, 0.5, 0.5, 0); }
static int hamming_window(OpCtx *c) { return window(c, 25.0 / 46.0, 21.0 / 46.0, 0); }
static int blackman_window(OpCtx *c) { return window(c, 0.42, 0.5, 0.08); }

/* ---------------------------------------------------------------- MelWeightMatrix */

static double hz_to_mel(double hz) { return 2595 * log10(1 + hz / 700); }
static double mel_to_hz(double mel) { return 700 * (pow(10, mel / 2595) - 1); }

/* [dft_length / 2 + 1, num_mel_bins] triangular filters, as the ONNX reference builds them:
 * num_mel_bins + 2 edges evenly spaced in mel from lower_edge_hertz (the mel step is the
 * range over num_mel_bins + 2), each edge floored to a spectrogram bin; filter i rises from
 * edge i to edge i+1 and falls to edge i+2. A constant of output_datatype. */
static int mel_weight_matrix(OpCtx *c)
{
    int64_t nmel = 0, dlen = 0, rate = 0;
    double lo = 0, hi = 0;
    if (const_scalar(c, 0, "num_mel_bins", &nmel) || const_scalar(c, 1, "dft_length", &dlen) ||
        const_scalar(c, 2, "sample_rate", &rate) || const_scalar_f(c, 3, "lower_edge_hertz", &lo) ||
        const_scalar_f(c, 4, "upper_edge_hertz", &hi))
        return -1;
    if (nmel < 1 || dlen < 1 || rate < 1)
        return ir_fail("%s: num_mel_bins (%lld), dft_length (%lld) and sample_rate (%lld) must be at least 1", c->op,
                       (long long)nmel, (long long)dlen, (long long)rate);
    int64_t nspec = dlen / 2 + 1;
    if (nspec * nmel > MAX_TABLE)
        return ir_fail("%s: the %lld x %lld matrix is over the limit of %lld elements", c->op, (long long)nspec,
                       (long long)nmel, (long long)MAX_TABLE);
    DType t;
    if (op_dtype_from_onnx((int)op_attr_int(c, "output_datatype", 1), &t))
        return ir_fail("%s: output_datatype: %s", c->op, ir_errmsg());
    int64_t *edge = ir_alloc(sizeof *edge * (size_t)(nmel + 2));
    double lo_mel = hz_to_mel(lo), step = (hz_to_mel(hi) - lo_mel) / (double)(nmel + 2);
    for (int64_t i = 0; i < nmel + 2; i++) {
        edge[i] = (int64_t)floor((double)(dlen + 1) * mel_to_hz((double)i * step + lo_mel) / (double)rate);
        if (edge[i] < 0 || edge[i] >= nspec)
            return ir_fail("%s: edge %lld falls in spectrogram bin %lld, outside the %lld bins", c->op, (long long)i,
                           (long long)edge[i], (long long)nspec);
    }
    double *m = ir_alloc(sizeof *m * (size_t)(nspec * nmel));
    for (int64_t i = 0; i < nmel; i++) {
        int64_t l = edge[i], mid = edge[i + 1], h = edge[i + 2];
        if (mid == l)
            m[mid * nmel + i] = 1;
        for (int64_t j = l; mid > l && j <= mid; j++)
            m[j * nmel + i] = (double)(j - l) / (double)(mid - l);
        for (int64_t j = mid; h > mid && j < h; j++)
            m[j * nmel + i] = (double)(h - j) / (double)(h - mid);
    }
    void *data = ir_alloc((size_t)(nspec * nmel * ir_dtype_bytes(t)));
    for (int64_t k = 0; k < nspec * nmel; k++)
        put(data, t, k, m[k]);
    int64_t shape[2] = {nspec, nmel};
    c->out[0] = op_const_tensor(c, "mel", t, 2, shape, data);
    return c->out[0] ? 0 : -1;
}

const OpDef op_defs_signal[] = {
    {"DFT", dft},
    {"STFT", stft},
    {"HannWindow", hann_window},
    {"HammingWindow", hamming_window},
    {"BlackmanWindow", blackman_window},
    {"MelWeightMatrix", mel_weight_matrix},
    {NULL, NULL},
};
