/* winograd.c - the graph pass "winograd": blocked 3x3 convolutions of stride 1 computed
 * with Winograd's minimal filtering algorithm F(m x m, 3 x 3) (Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks", 2016).
 * requires: the layout pass's blocked program (ir/layout.c), not yet scheduled;
 * gives: a verified program with the same outputs (names kept); breaks: nothing.
 *
 * The layout pass writes a conv over blocked channels as
 *     Y[n, fo, h, w, fi] = sum(rco, rk0, rk1, rci: X[n, rco, h + rk0, w + rk1, rci] *
 *                                                  Wp[fo, rco, rk0, rk1, rci, fi])
 * (X the padded input). Winograd computes each tile of m x m outputs from the a x a input
 * window over it (a = m + 2) with a*a multiplications per pair of channels where the
 * direct sum takes 9*m*m (36 against 144 for F(4x4, 3x3)), in four tensors:
 *     U[ah, aw, fo, rco, rci, fi] = (G g G^T)[ah, aw]        g: the 3x3 filter; a constant
 *     V[n, cb, ah, aw, tile, ci]  = (B^T d B)[ah, aw]         d: the tile's input window
 *     P[n, fo, ah, aw, tile, fi]  = sum(rco, rci: V[n, rco, ah, aw, tile, rci] * U[ah, aw, fo, rco, rci, fi])
 *     Y[n, fo, h, w, fi]          = (A^T p A)[h mod m, w mod m]   p: P over the tile of (h, w)
 * where tile = (h / m) * TW + w / m over TH x TW tiles. P is a batch of a*a matrix
 * products over the channels, which the default schedule tiles like a 1x1 conv (the
 * tiles as rows, the output channel blocks as blocks). The layout of V and P serves the
 * products: one block of channels of one (ah, aw) holds its tiles side by side (a row
 * tile reads adjacent lines; with a tile's a*a values adjacent instead, ResNet-18's 56x56
 * products ran 1.5x slower), and each (ah, aw) is outside the row tiles (one product's
 * weights stay in the caches for all its tiles). The transforms read and write a*a
 * planes TT lines apart, TT the tiles rounded so that the planes do not lie a multiple
 * of 4 KB apart (they would share cache sets: ResNet-18's 14x14 input transform ran 8x
 * slower with its planes 16 KB apart). V and Y are small sums with
 * constant coefficients, written for each (ah, aw) and each (h mod m, w mod m) as a
 * select over the position, with the coefficients' zeros left out. Their axes carry
 * IterVar.unroll_mod, which has the default schedule unroll those positions, so that each
 * copy folds to its one sum and the C compiler shares the partial sums between the copies
 * (B^T d and p A, the separable halves). Y keeps the conv's tensor: the epilogue that
 * read the conv (bias, activation, residual add, the next conv's padding) reads Y, and
 * the default schedule inlines Y into it.
 *
 * Which convs: f32, group 1, constant weights, input channels in whole blocks, a 3x3
 * window at stride 1 and dilation 1. Extents decided at run time (the batch, H, W) give
 * the tiles at run time: their count (H + m - 1) / m * ((W + m - 1) / m), the cost model's
 * choice made at the bounds. --winograd=auto
 * (the default) takes those where it pays (choose); all takes every one (tests); off,
 * none. Each takes its outputs' last tiles past the edge: the input reads there are
 * guarded (zero), or, over run-time extents, read from a padding widened to whole tiles
 * (widen_input); the outputs past it are never computed.
 *
 * Numerics: the transforms' coefficients (powers of two, 5, 1/6, 1/24...) are exact or
 * rounded once in double; the sums reorder the conv's, so results differ from the direct
 * sum's by a few units in the last place times the tile's dynamic range (F(4x4, 3x3):
 * about 1e-6 relative in fp32 on typical activations). An infinity or NaN in an input
 * tile spreads to all of that tile's outputs.
 */
#include "pass.h"

#include <stdlib.h>
#include <string.h>

/* F(m x m, 3 x 3): the input transform B^T (a x a), the filter transform G (a x 3) and the
 * output transform A^T (m x a), row-major; interpolation points 0, -1, 1, -2, 2 and
 * infinity for m = 4 (Lavin's), 0, -1, 1 and infinity for m = 2. */
typedef struct {
    int m, a;
    const double *bt, *g, *at;
    double kin, kout;   /* the transforms' costs for the model of choose() */
} Wino;

static const double bt4[36] = {
    4, 0, -5, 0, 1, 0,
    0, -4, -4, 1, 1, 0,
    0, 4, -4, -1, 1, 0,
    0, -2, -1, 2, 1, 0,
    0, 2, -1, -2, 1, 0,
    0, 4, 0, -5, 0, 1,
};
static const double g4[18] = {
    1.0 / 4, 0, 0,
    -1.0 / 6, -1.0 / 6, -1.0 / 6,
    -1.0 / 6, 1.0 / 6, -1.0 / 6,
    1.0 / 24, 1.0 / 12, 1.0 / 6,
    1.0 / 24, -1.0 / 12, 1.0 / 6,
    0, 0, 1,
};
static const double at4[24] = {
    1, 1, 1, 1, 1, 0,
    0, 1, -1, 2, -2, 0,
    0, 1, 1, 4, 4, 0,
    0, 1, -1, 8, -8, 1,
};
static const Wino wino_f4 = {4, 6, bt4, g4, at4, 625, 340};

static const double bt2[16] = {
    1, 0, -1, 0,
    0, 1, 1, 0,
    0, -1, 1, 0,
    0, 1, 0, -1,
};
static const double g2[12] = {
    1, 0, 0,
    0.5, 0.5, 0.5,
    0.5, -0.5, 0.5,
    0, 0, 1,
};
static const double at2[8] = {
    1, 1, 1, 0,
    0, 1, -1, -1,
};
static const Wino wino_f2 = {2, 4, bt2, g2, at2, 200, 110};

/* ---------------------------------------------------------------- the conv */

typedef struct {
    Tensor *x, *w;        /* the blocked (padded) input, the packed constant weights */
    int64_t N, Cb, Mb, B; /* batch, input and output channel blocks, the block */
    int64_t H, W;         /* the output's extent (its bound where decided at run time) */
    int64_t XH, XW;       /* the input's */
    Expr *dn, *dh, *dw;   /* the output's run-time batch, height and width (Tensor.dyn), or NULL */
    Expr *dxh, *dxw;      /* the input's run-time height and width, or NULL */
    int wideh, widew;     /* the input holds every tile's rows, columns (widen_input) */
} Conv;

static int is_var(const Expr *e, const IterVar *iv) { return e->kind == E_VAR && e->u.var == iv->var; }

/* Is e exactly a + b (a, b axes)? */
static int is_sum(Expr *e, const IterVar *a, const IterVar *b)
{
    int64_t k;
    Expr *d = ir_sub(e, ir_add(ir_varref(a->var), ir_varref(b->var)));
    return ir_expr_is_const(d, &k) && k == 0;
}

/* t: the blocked conv the layout pass builds for group 1 and whole input blocks (its
 * CONV_BLOCKED form), 3x3, stride 1, dilation 1, f32, constant weights. */
static int match_conv(const Tensor *t, Conv *c)
{
    if (t->kind != T_COMPUTE || t->ndim != 5 || t->dtype != DT_F32 || t->body->kind != E_REDUCE ||
        t->dyn[1] || t->dyn[4])
        return 0;
    const Expr *r = t->body;
    if (r->u.reduce.op != RED_SUM || r->u.reduce.naxes != 4)
        return 0;
    IterVar **ra = r->u.reduce.axes;   /* rco, rk0, rk1, rci */
    const Expr *b = r->u.reduce.body;
    if (b->kind != E_BIN || b->u.bin.op != OP_MUL)
        return 0;
    const Expr *xa = b->u.bin.a, *wa = b->u.bin.b;
    if (xa->kind != E_ACCESS || wa->kind != E_ACCESS || xa->u.access.n != 5 || wa->u.access.n != 6)
        return 0;
    Tensor *x = xa->u.access.t, *w = wa->u.access.t;
    int64_t B = t->shape[4];
    if (x->dtype != DT_F32 || w->dtype != DT_F32 || w->kind != T_CONSTANT || !w->data || x->shape[4] != B ||
        ra[1]->extent != 3 || ra[2]->extent != 3 || ra[3]->extent != B || ra[0]->extent != x->shape[1])
        return 0;
    if (x->dyn[1] || x->dyn[4])
        return 0;
    /* W[fo, rco, rk0, rk1, rci, fi] */
    const IterVar *wv[6] = {t->axes[1], ra[0], ra[1], ra[2], ra[3], t->axes[4]};
    for (int d = 0; d < 6; d++)
        if (!is_var(wa->u.access.idx[d], wv[d]))
            return 0;
    /* X[n, rco, h + rk0, w + rk1, rci] */
    Expr *const *xi = xa->u.access.idx;
    if (!is_var(xi[0], t->axes[0]) || !is_var(xi[1], ra[0]) || !is_var(xi[4], ra[3]) ||
        !is_sum(xi[2], t->axes[2], ra[1]) || !is_sum(xi[3], t->axes[3], ra[2]))
        return 0;
    c->x = x;
    c->w = w;
    c->N = t->shape[0];
    c->Mb = t->shape[1];
    c->H = t->shape[2];
    c->W = t->shape[3];
    c->B = B;
    c->Cb = x->shape[1];
    c->XH = x->shape[2];
    c->XW = x->shape[3];
    c->dn = t->dyn[0];
    c->dh = t->dyn[2];
    c->dw = t->dyn[3];
    c->dxh = x->dyn[2];
    c->dxw = x->dyn[3];
    c->wideh = c->widew = 0;
    return c->XH >= c->H + 2 && c->XW >= c->W + 2;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The cost of the conv, direct or as F(m x m, 3 x 3), in multiply-adds and their
 * equivalents (a model fitted to ResNet-18's four conv shapes on a Zen 5 core, each within
 * about 10% of its measured time):
 *   direct   9 H W C M: the register tile runs at the core's peak;
 *   F(m)     a*a T C M for the products over the T tiles, at the peak too; plus U read
 *            once from memory, WINO_BYTE_MACS per element (the products do not overlap
 *            it with their arithmetic: U of ResNet-18's 14x14 convs, 9.4 MB as F(4x4),
 *            cost more than their multiplications); plus the transforms, kin per tile
 *            and input channel and kout per tile and output channel.
 * C and M are the channels with their blocks' padding. Small maps take F(2x2): its U is
 * 16/9 of the weights where F(4x4)'s is 36/9; large channel counts over few tiles stay
 * direct (ResNet-18's 7x7 convs over 512 channels). Outside the model, the conv stays
 * direct where U would pass WINO_MAX_U_BYTES (the weights the user ships grow by U less
 * the conv's own), or V WINO_MAX_V_BYTES where the products read it more than once (once
 * per pair of output channel blocks): a V beyond the caches' reach makes them memory-bound (FCN's
 * 3x3 conv of 2048 to 512 channels over 28x28: V 14 MB, U 151 MB, 1.1x the direct conv's
 * time). */
enum { WINO_BYTE_MACS = 20, WINO_MAX_U_BYTES = 16 << 20, WINO_MAX_V_BYTES = 4 << 20 };

typedef struct {
    const Wino *k;     /* NULL: direct */
    double cost;
} Plan;

static double wino_cost(const Conv *c, const Wino *k)
{
    double T = (double)(ceil_div(c->H, k->m) * ceil_div(c->W, k->m));
    double C = (double)(c->Cb * c->B), M = (double)(c->Mb * c->B), a2 = (double)(k->a * k->a);
    return a2 * T * C * M + WINO_BYTE_MACS * a2 * C * M + T * (C * k->kin + M * k->kout);
}

/* The cheapest of F(4x4) and F(2x2); with direct (--winograd=auto) also the direct sum,
 * which keeps a conv unless a transform costs at most WINO_MARGIN of it. */
#define WINO_MARGIN 0.9

static const Wino *choose(const Conv *c, int with_direct)
{
    double f4 = wino_cost(c, &wino_f4), f2 = wino_cost(c, &wino_f2);
    const Wino *k = f4 < f2 ? &wino_f4 : &wino_f2;
    if (!with_direct)
        return k;
    double C = (double)(c->Cb * c->B), M = (double)(c->Mb * c->B), a2 = k->a * k->a;
    double T = (double)(ceil_div(c->H, k->m) * ceil_div(c->W, k->m));
    if (4 * a2 * C * M > WINO_MAX_U_BYTES || (c->Mb > 2 && 4 * a2 * T * C * (double)c->N > WINO_MAX_V_BYTES))
        return NULL;   /* (the register tile of the products takes two output blocks) */
    double direct = 9.0 * (double)(c->H * c->W) * C * M;
    return (f4 < f2 ? f4 : f2) <= WINO_MARGIN * direct ? k : NULL;
}

/* ---------------------------------------------------------------- the tensors */

static Expr *v(IterVar *iv) { return ir_varref(iv->var); }

/* The tiles of m x m over the output: TH x TW (their bounds where the output's extents are
 * decided at run time); T, the tile axis' extent: TH * TW, one more where planes of T * B
 * floats would lie a multiple of 4 KB apart (see the top); th, tw: TH and TW as index
 * expressions (run-time ones or constants); dt: the tile axis' run-time extent, th * tw
 * (NULL for fixed extents: the axis runs over all T, the spare one too). */
typedef struct {
    int64_t TH, TW, T;
    Expr *th, *tw, *dt;
} Tiles;

static Tiles tiles(const Conv *c, int m)
{
    Tiles g;
    g.TH = ceil_div(c->H, m);
    g.TW = ceil_div(c->W, m);
    g.T = g.TH * g.TW * c->B * 4 % 4096 ? g.TH * g.TW : g.TH * g.TW + 1;
    g.th = c->dh ? ir_bin(OP_DIV, ir_add(c->dh, ir_idx(m - 1)), ir_idx(m)) : ir_idx(g.TH);
    g.tw = c->dw ? ir_bin(OP_DIV, ir_add(c->dw, ir_idx(m - 1)), ir_idx(m)) : ir_idx(g.TW);
    g.dt = c->dh || c->dw ? ir_bin(OP_MUL, g.th, g.tw) : NULL;
    return g;
}

/* A compute's axis d of run-time extent e (NULL: fixed) */
static void set_dyn(Tensor *t, int d, Expr *e)
{
    t->dyn[d] = t->axes[d]->dyn = e;
}

/* sum(coef[i] * term[i]) over the nonzero coefficients, a coefficient of 1 or -1 as an
 * addition or a subtraction; zero when every coefficient is. */
static Expr *lin_comb(const double *coef, int stride, Expr **term, int n)
{
    Expr *acc = NULL;
    for (int i = 0; i < n; i++) {
        double c = coef[i * stride];
        if (c == 0)
            continue;
        double mag = c < 0 ? -c : c;
        Expr *x = mag == 1 ? term[i] : ir_bin(OP_MUL, ir_float(mag, DT_F32), term[i]);
        if (!acc)
            acc = c < 0 ? ir_un(UN_NEG, x) : x;
        else
            acc = ir_bin(c < 0 ? OP_SUB : OP_ADD, acc, x);
    }
    return acc ? acc : ir_float(0, DT_F32);
}

/* select(pos == 0, e[0], select(pos == 1, e[1], ... e[n - 1])) */
static Expr *pick(Expr *pos, Expr **e, int n)
{
    Expr *r = e[n - 1];
    for (int i = n - 2; i >= 0; i--)
        r = ir_select(ir_bin(OP_EQ, pos, ir_idx(i)), e[i], r);
    return r;
}

/* A name for a new tensor: base, or base_K, unused in p. */
static const char *fresh(Program *p, const char *base)
{
    const char *name = base;
    for (int k = 1; ir_program_find(p, name); k++)
        name = ir_fmt("%s_%d", base, k);
    return name;
}

/* U[ah, aw, fo, rco, rci, fi] = sum(kh, kw: G[ah, kh] * Wp[fo, rco, kh, kw, rci, fi] * G[aw, kw]) */
static Tensor *filter_transform(Program *p, const Tensor *t, const Conv *c, const Wino *k)
{
    int a = k->a;
    int64_t B = c->B, shape[6] = {a, a, c->Mb, c->Cb, B, B};
    int64_t inner = c->Mb * c->Cb * B * B;   /* the (fo, rco, rci, fi) of one (ah, aw) */
    const float *w = c->w->data;
    float *u = calloc((size_t)(a * a * inner) + 1, sizeof *u);
    if (!u)
        ir_die("out of memory");
    for (int64_t fo = 0; fo < c->Mb; fo++)
        for (int64_t rco = 0; rco < c->Cb; rco++)
            for (int64_t ci = 0; ci < B * B; ci++) {
                /* g: this (fo, rco, rci, fi)'s 3x3 filter; gt = G g, then (G g) G^T */
                double g[3][3], gt[6][3];
                for (int kh = 0; kh < 3; kh++)
                    for (int kw = 0; kw < 3; kw++)
                        g[kh][kw] = w[(((fo * c->Cb + rco) * 3 + kh) * 3 + kw) * B * B + ci];
                for (int i = 0; i < a; i++)
                    for (int kw = 0; kw < 3; kw++)
                        gt[i][kw] = k->g[i * 3] * g[0][kw] + k->g[i * 3 + 1] * g[1][kw] + k->g[i * 3 + 2] * g[2][kw];
                for (int i = 0; i < a; i++)
                    for (int j = 0; j < a; j++)
                        u[(i * a + j) * inner + (fo * c->Cb + rco) * B * B + ci] =
                            (float)(gt[i][0] * k->g[j * 3] + gt[i][1] * k->g[j * 3 + 1] + gt[i][2] * k->g[j * 3 + 2]);
            }
    Tensor *ut = ir_constant(fresh(p, ir_fmt("%s_wino_w", t->name)), DT_F32, 6, shape, u);
    free(u);
    ut->comment = ir_fmt("winograd F(%dx%d, 3x3): '%s' transformed, G g G^T", k->m, k->m, c->w->name);
    return ut;
}

/* The last tiles reach up to m - 1 rows and columns past the output, m + 1 past the
 * padded input X's own H + 2. Where the extent is decided at run time and X is a computed
 * padding (a select: zero outside its source), X is widened to hold them, zero there:
 * th * m + 2 rows (TH * m + 2 at the bound), and likewise the columns. The input transform
 * then reads every tile unguarded: its guards had split each tile into pieces (a ranged
 * CNN's input transform ran 7x the static one at the same extent). Fixed extents keep
 * their guards, on the last tiles only. */
static void widen_input(Conv *c, const Wino *k, const Tiles *g)
{
    Tensor *x = c->x;
    int m = k->m;
    int64_t zero;
    if (x->kind != T_COMPUTE || x->is_output || x->init || x->loop_state || x->body->kind != E_SELECT)
        return;
    Expr *d[2] = {c->dh, c->dw}, *dx[2] = {c->dxh, c->dxw}, *t[2] = {g->th, g->tw}, *cond = NULL;
    int64_t tiles[2] = {g->TH, g->TW}, out[2] = {c->H, c->W};
    int wide[2] = {0, 0};
    for (int a = 0; a < 2; a++) {
        IterVar *iv = x->axes[2 + a];
        if (!d[a] || !dx[a] || x->shape[2 + a] != out[a] + 2 ||
            !ir_expr_is_const(ir_sub(dx[a], ir_add(d[a], ir_idx(2))), &zero) || zero)
            continue;   /* fixed, or not the output's extent plus the padding */
        Expr *lt = ir_bin(OP_LT, v(iv), dx[a]);
        cond = cond ? ir_bin(OP_AND, cond, lt) : lt;
        x->shape[2 + a] = iv->extent = tiles[a] * m + 2;
        set_dyn(x, 2 + a, ir_add(ir_mul(t[a], ir_idx(m)), ir_idx(2)));
        wide[a] = 1;
    }
    if (!cond)
        return;
    Expr *b = x->body, *f = b->u.sel.f;
    if (f->kind == E_FLOAT && f->u.fval == 0)   /* a padding's select(inside, X, 0): one condition more */
        x->body = ir_select(ir_bin(OP_AND, cond, b->u.sel.cond), b->u.sel.t, f);
    else
        x->body = ir_select(cond, b, ir_float(0, DT_F32));
    c->XH = x->shape[2];
    c->XW = x->shape[3];
    c->dxh = x->dyn[2];
    c->dxw = x->dyn[3];
    c->wideh = wide[0];
    c->widew = wide[1];
}

/* V[n, cb, ah, aw, tile, ci] = (B^T d B)[ah, aw], d[i][j] = X[n, cb, th*m + i, tw*m + j, ci]
 * (zero past X's edge) for tile = th * TW + tw */
static Tensor *input_transform(Program *p, const Tensor *t, const Conv *c, const Wino *k, const Tiles *g)
{
    int a = k->a, m = k->m;
    int64_t shape[6] = {c->N, c->Cb, a, a, g->T, c->B};
    static const char *names[6] = {"n", "cb", "ah", "aw", "tile", "ci"};
    IterVar *ax[6];
    for (int d = 0; d < 6; d++)
        ax[d] = ir_itervar_new(names[d], shape[d], IV_SPATIAL);
    ax[2]->unroll_mod = ax[3]->unroll_mod = a;
    /* the spare tile of tiles(), where the loop runs over it (fixed extents), repeats the
     * last one */
    Expr *tile = g->T > g->TH * g->TW && !g->dt ? ir_bin(OP_MIN, v(ax[4]), ir_idx(g->TH * g->TW - 1)) : v(ax[4]);
    Expr *th = ir_bin(OP_DIV, tile, g->tw), *tw = ir_bin(OP_MOD, tile, g->tw);
    /* d[i][j], guarded where the last tiles reach past X: the last tile starts at most m - 1
     * before the output's last position, so X's H + 2 rows always hold rows 0..2 of it
     * (rows 3..a-1 are guarded where the extent is decided at run time and X was not
     * widened to whole tiles; fixed ones where they pass X) */
    Expr *xh = c->dxh ? c->dxh : ir_idx(c->XH), *xw = c->dxw ? c->dxw : ir_idx(c->XW);
    Expr *d[8][8], *col[8], *rows[8][8], *e[8], *byrow[8];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            Expr *y = ir_add(ir_mul(th, ir_idx(m)), ir_idx(i)), *x = ir_add(ir_mul(tw, ir_idx(m)), ir_idx(j));
            Expr *idx[5] = {v(ax[0]), v(ax[1]), y, x, v(ax[5])}, *cond = NULL;
            d[i][j] = ir_access(c->x, idx, 5);
            if (!c->wideh && (c->dh ? i > 2 : (g->TH - 1) * m + i >= c->XH))
                cond = ir_bin(OP_LT, y, xh);
            if (!c->widew && (c->dw ? j > 2 : (g->TW - 1) * m + j >= c->XW)) {
                Expr *cw = ir_bin(OP_LT, x, xw);
                cond = cond ? ir_bin(OP_AND, cond, cw) : cw;
            }
            if (cond)
                d[i][j] = ir_select(cond, d[i][j], ir_float(0, DT_F32));
        }
    /* rows[ah][j] = (B^T d)[ah][j]; then (B^T d B)[ah][aw] over j */
    for (int ah = 0; ah < a; ah++) {
        for (int j = 0; j < a; j++) {
            for (int i = 0; i < a; i++)
                col[i] = d[i][j];
            rows[ah][j] = lin_comb(k->bt + ah * a, 1, col, a);
        }
        for (int aw = 0; aw < a; aw++)
            e[aw] = lin_comb(k->bt + aw * a, 1, rows[ah], a);
        byrow[ah] = pick(v(ax[3]), e, a);
    }
    Tensor *vt = ir_compute(fresh(p, ir_fmt("%s_wino_in", t->name)), 6, ax, pick(v(ax[2]), byrow, a));
    if (!vt)
        ir_die("winograd: %s", ir_errmsg());
    set_dyn(vt, 0, c->dn);
    set_dyn(vt, 4, g->dt);
    vt->rows_axis = 4;   /* the tiles run over the rows: threads divide them */
    vt->comment = ir_fmt("winograd F(%dx%d, 3x3) input transform B^T d B of '%s'", m, m, c->x->name);
    return vt;
}

/* P[n, fo, ah, aw, tile, fi] = sum(rco, rci: V[n, rco, ah, aw, tile, rci] * U[ah, aw, fo, rco, rci, fi]) */
static Tensor *product(Program *p, const Tensor *t, const Conv *c, const Wino *k, const Tiles *g, Tensor *vt,
                       Tensor *ut)
{
    int64_t shape[6] = {c->N, c->Mb, k->a, k->a, vt->shape[4], c->B};
    static const char *names[6] = {"n", "fo", "ah", "aw", "tile", "fi"};
    IterVar *ax[6];
    for (int d = 0; d < 6; d++)
        ax[d] = ir_itervar_new(names[d], shape[d], IV_SPATIAL);
    IterVar *red[2] = {ir_itervar_new("rco", c->Cb, IV_REDUCE), ir_itervar_new("rci", c->B, IV_REDUCE)};
    Expr *vi[6] = {v(ax[0]), v(red[0]), v(ax[2]), v(ax[3]), v(ax[4]), v(red[1])};
    Expr *ui[6] = {v(ax[2]), v(ax[3]), v(ax[1]), v(red[0]), v(red[1]), v(ax[5])};
    Expr *body = ir_reduce(RED_SUM, ir_bin(OP_MUL, ir_access(vt, vi, 6), ir_access(ut, ui, 6)), red, 2);
    Tensor *pt = ir_compute(fresh(p, ir_fmt("%s_wino_gemm", t->name)), 6, ax, body);
    if (!pt)
        ir_die("winograd: %s", ir_errmsg());
    set_dyn(pt, 0, c->dn);
    set_dyn(pt, 4, g->dt);
    pt->rows_axis = -1;   /* by channel blocks: parts of the tiles would read U once per part
                             (a CRNN's products: 19% slower on one thread) */
    pt->comment = ir_fmt("winograd F(%dx%d, 3x3) products over the channels of '%s'", k->m, k->m, t->name);
    return pt;
}

/* Y[n, fo, h, w, fi] = (A^T p A)[h mod m, w mod m], p[ah][aw] = P[n, fo, ah, aw, (h / m) * TW + w / m, fi]:
 * the body that replaces the conv's (its axes, h and w marked unroll_mod m) */
static Expr *output_transform(Tensor *t, const Wino *k, const Tiles *g, Tensor *pt)
{
    int a = k->a, m = k->m;
    IterVar **ax = t->axes;
    ax[2]->unroll_mod = ax[3]->unroll_mod = m;
    Expr *h = v(ax[2]), *w = v(ax[3]);
    Expr *tile = ir_bin(OP_ADD, ir_bin(OP_MUL, ir_bin(OP_FLOORDIV, h, ir_idx(m)), g->tw),
                        ir_bin(OP_FLOORDIV, w, ir_idx(m)));
    Expr *pv[8][8], *cols[8][8], *row[8], *e[8], *byrow[8];
    for (int ah = 0; ah < a; ah++)
        for (int aw = 0; aw < a; aw++) {
            Expr *idx[6] = {v(ax[0]), v(ax[1]), ir_idx(ah), ir_idx(aw), tile, v(ax[4])};
            pv[ah][aw] = ir_access(pt, idx, 6);
        }
    /* cols[ah][j] = (p A)[ah][j]; then (A^T p A)[i][j] over ah */
    for (int ah = 0; ah < a; ah++)
        for (int j = 0; j < m; j++)
            cols[ah][j] = lin_comb(k->at + j * a, 1, pv[ah], a);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < m; j++) {
            for (int ah = 0; ah < a; ah++)
                row[ah] = cols[ah][j];
            e[j] = lin_comb(k->at + i * a, 1, row, a);
        }
        byrow[i] = pick(ir_bin(OP_FLOORMOD, w, ir_idx(m)), e, m);
    }
    return pick(ir_bin(OP_FLOORMOD, h, ir_idx(m)), byrow, m);
}

/* ---------------------------------------------------------------- the pass */

int ir_winograd(Program *p, int mode)
{
    if (mode == IR_WINOGRAD_OFF)
        return 0;
    ir_program_renumber(p);
    PtrVec out = {0};
    int n = 0, ntensors = p->tensors.n;
    /* (the new tensors go into p as they are made, so that their names are fresh, and
     * into out in their place: before the conv) */
    for (int i = 0; i < ntensors; i++) {
        Tensor *t = p->tensors.items[i];
        Conv c;
        const Wino *k = match_conv(t, &c) ? choose(&c, mode == IR_WINOGRAD_AUTO) : NULL;
        if (k) {
            Tiles g = tiles(&c, k->m);
            widen_input(&c, k, &g);
            Tensor *ut = filter_transform(p, t, &c, k);
            ir_vec_push(&out, ut, 1 << 24, "tensors");
            ir_program_add(p, ut);
            Tensor *vt = input_transform(p, t, &c, k, &g);
            ir_program_add(p, vt);
            Tensor *pt = product(p, t, &c, k, &g, vt, ut);
            ir_program_add(p, pt);
            vt->guard = pt->guard = t->guard;
            vt->loop = pt->loop = t->loop;
            ir_vec_push(&out, vt, 1 << 24, "tensors");
            ir_vec_push(&out, pt, 1 << 24, "tensors");
            /* the conv keeps its tensor, which its readers name: only its body changes */
            t->body = output_transform(t, k, &g, pt);
            t->comment = ir_fmt("%s%swinograd F(%dx%d, 3x3) output transform A^T p A", t->comment ? t->comment : "",
                                t->comment ? "; " : "", k->m, k->m);
            n++;
        }
        ir_vec_push(&out, t, 1 << 24, "tensors");
    }
    if (!n)
        return 0;
    p->tensors = out;
    ir_program_renumber(p);
    if (ir_program_verify(p))
        return ir_fail("winograd: the program is inconsistent: %s", ir_errmsg());
    return 0;
}

/* The pass: CPU targets (the layout pass blocks nothing for a GPU) */
static int winograd_run(Program *p, const PassCtx *ctx)
{
    if (!ctx->gpu && ir_winograd(p, ctx->winograd))
        return ir_fail("%s: %s", ctx->source, ir_errmsg());
    return 0;
}

const GraphPass ir_pass_winograd = {{"winograd", "3x3 stride-1 convs on blocked channels as Winograd F(4x4, 3x3): "
                                                 "transforms and a batch of channel products (CPU targets; "
                                                 "--winograd)"},
                                    winograd_run};
