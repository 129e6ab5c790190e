/* simplify.c - arithmetic simplifier: constant folding, canonical affine forms, div/mod
 * rules under known variable ranges, and decided comparisons.
 * requires: well-typed expressions; breaks: nothing (returns new nodes, shares unchanged ones)
 */
#include "ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TERMS 64

/* ---------------------------------------------------------------- ranges */

void ir_range_push(RangeMap *m, Var *v, int64_t lo, int64_t hi)
{
    if (m->n == m->cap)
        m->items = ir_grow_arena(m->items, m->n, &m->cap, sizeof *m->items, 16);
    m->items[m->n++] = (VarRange){v, lo, hi};
}

void ir_range_pop(RangeMap *m)
{
    if (m->n <= 0)
        ir_die("range map underflow");
    m->n--;
}

/* overflow-checked arithmetic; return 0 on overflow */
static int add_ok(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return 0;
    *r = a + b;
    return 1;
}

static int mul_ok(int64_t a, int64_t b, int64_t *r)
{
    if (a == 0 || b == 0) {
        *r = 0;
        return 1;
    }
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN))
        return 0;
    int64_t p = (int64_t)((uint64_t)a * (uint64_t)b);
    if (p / b != a)
        return 0;
    *r = p;
    return 1;
}

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t floormod64(int64_t a, int64_t b) { return a - floordiv64(a, b) * b; }

#define BIG ((int64_t)1 << 62)

/* Is e a division or modulo whose divisor is a run-time extent (reads a dim decided at run
 * time)? The rules for those fire for such models only. */
static int runtime_divisor(const Expr *e)
{
    return e->kind == E_BIN &&
           (e->u.bin.op == OP_DIV || e->u.bin.op == OP_MOD || e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD) &&
           ir_expr_uses_dims(e->u.bin.b);
}

int ir_const_bounds(const Expr *e, const RangeMap *m, int64_t *lo, int64_t *hi)
{
    if (ir_dtype_is_float(e->dtype))
        return 0;
    int64_t alo, ahi, blo, bhi;
    switch (e->kind) {
    case E_INT: *lo = *hi = e->u.ival; return 1;
    case E_VAR:
        if (m)
            for (int i = m->n - 1; i >= 0; i--)
                if (m->items[i].var == e->u.var) {
                    *lo = m->items[i].lo;
                    *hi = m->items[i].hi;
                    return 1;
                }
        if (e->u.var->is_dim) {
            *lo = e->u.var->lo;
            *hi = e->u.var->hi;
            return 1;
        }
        return 0;
    case E_UN:
        if (e->u.un.op == UN_NOT) {
            *lo = 0;
            *hi = 1;
            return 1;
        }
        if (e->u.un.op != UN_NEG || !ir_const_bounds(e->u.un.a, m, &alo, &ahi) || alo < -BIG || ahi > BIG)
            return 0;
        *lo = -ahi;
        *hi = -alo;
        return 1;
    case E_CAST:
        if (!ir_dtype_is_float(e->u.cast.a->dtype) && ir_dtype_bytes(e->dtype) >= 4 &&
            ir_dtype_is_signed(e->dtype) && ir_const_bounds(e->u.cast.a, m, lo, hi))
            return *lo >= INT32_MIN && *hi <= INT32_MAX;
        return 0;
    case E_SELECT:
        if (!ir_const_bounds(e->u.sel.t, m, &alo, &ahi) || !ir_const_bounds(e->u.sel.f, m, &blo, &bhi))
            return 0;
        *lo = alo < blo ? alo : blo;
        *hi = ahi > bhi ? ahi : bhi;
        return 1;
    case E_BIN: break;
    default: return 0;
    }
    int k = ir_binop_kind(e->u.bin.op);
    if (k == 'C' || k == 'L') {
        *lo = 0;
        *hi = 1;
        return 1;
    }
    int ba = ir_const_bounds(e->u.bin.a, m, &alo, &ahi);
    int bb = ir_const_bounds(e->u.bin.b, m, &blo, &bhi);
    if (bb && blo > 0 && blo != bhi && runtime_divisor(e)) {
        /* by a run-time extent (a dim decided at run time): x % W in [0, W), x / W shrinks */
        if (e->u.bin.op == OP_FLOORMOD || (e->u.bin.op == OP_MOD && ba && alo >= 0)) {
            *lo = ba && alo >= 0 && ahi < blo ? alo : 0;
            *hi = ba && alo >= 0 && ahi < blo ? ahi : bhi - 1;
            return 1;
        }
        if ((e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_DIV) && ba && alo >= 0) {
            *lo = alo / bhi;
            *hi = ahi / blo;
            return 1;
        }
        return 0;
    }
    if (e->u.bin.op == OP_FLOORMOD && !ba && bb && blo == bhi && blo > 0) {
        *lo = 0;
        *hi = blo - 1;
        return 1;
    }
    if (!ba)
        return 0;
    if ((e->u.bin.op == OP_MOD || e->u.bin.op == OP_FLOORMOD) && bb && blo == bhi && blo > 0) {
        if (alo >= 0 && ahi < blo) {
            *lo = alo;
            *hi = ahi;
        } else if (e->u.bin.op == OP_FLOORMOD || alo >= 0) {
            *lo = 0;
            *hi = blo - 1;
        } else {
            *lo = -(blo - 1);
            *hi = blo - 1;
        }
        return 1;
    }
    if (!bb || alo < -BIG || ahi > BIG || blo < -BIG || bhi > BIG)
        return 0;
    switch (e->u.bin.op) {
    case OP_ADD: *lo = alo + blo; *hi = ahi + bhi; return 1;
    case OP_SUB: *lo = alo - bhi; *hi = ahi - blo; return 1;
    case OP_MUL: {
        int64_t c[4];
        if (!mul_ok(alo, blo, &c[0]) || !mul_ok(alo, bhi, &c[1]) || !mul_ok(ahi, blo, &c[2]) ||
            !mul_ok(ahi, bhi, &c[3]))
            return 0;
        *lo = *hi = c[0];
        for (int i = 1; i < 4; i++) {
            if (c[i] < *lo)
                *lo = c[i];
            if (c[i] > *hi)
                *hi = c[i];
        }
        return 1;
    }
    case OP_DIV:
    case OP_FLOORDIV:
        if (blo != bhi || blo <= 0)
            return 0;
        if (e->u.bin.op == OP_DIV && alo < 0)
            return 0;
        *lo = floordiv64(alo, blo);
        *hi = floordiv64(ahi, blo);
        return 1;
    case OP_MIN:
        *lo = alo < blo ? alo : blo;
        *hi = ahi < bhi ? ahi : bhi;
        return 1;
    case OP_MAX:
        *lo = alo > blo ? alo : blo;
        *hi = ahi > bhi ? ahi : bhi;
        return 1;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- linear forms */

typedef struct {
    Expr *atom;
    int64_t coef;
} Term;

typedef struct {
    int64_t c;
    int n;
    Term t[MAX_TERMS];
    int ok;
} Lin;

static int is_int(const Expr *e) { return !ir_dtype_is_float(e->dtype) && e->dtype != DT_BOOL; }

static void lin_add_term(Lin *l, Expr *atom, int64_t coef)
{
    if (!l->ok || coef == 0)
        return;
    for (int i = 0; i < l->n; i++)
        if (ir_expr_equal(l->t[i].atom, atom)) {
            if (!add_ok(l->t[i].coef, coef, &l->t[i].coef))
                l->ok = 0;
            return;
        }
    if (l->n == MAX_TERMS) {
        l->ok = 0;
        return;
    }
    l->t[l->n++] = (Term){atom, coef};
}

/* Accumulate scale * e into l. e's children are already simplified. */
static void lin_collect(Lin *l, Expr *e, int64_t scale)
{
    int64_t v;
    if (!l->ok)
        return;
    switch (e->kind) {
    case E_INT:
        if (!mul_ok(e->u.ival, scale, &v) || !add_ok(l->c, v, &l->c))
            l->ok = 0;
        return;
    case E_UN:
        if (e->u.un.op == UN_NEG) {
            if (scale == INT64_MIN)
                l->ok = 0;
            else
                lin_collect(l, e->u.un.a, -scale);
            return;
        }
        break;
    case E_BIN:
        switch (e->u.bin.op) {
        case OP_ADD:
            lin_collect(l, e->u.bin.a, scale);
            lin_collect(l, e->u.bin.b, scale);
            return;
        case OP_SUB:
            if (scale == INT64_MIN) {
                l->ok = 0;
                return;
            }
            lin_collect(l, e->u.bin.a, scale);
            lin_collect(l, e->u.bin.b, -scale);
            return;
        case OP_MUL:
            if (ir_expr_is_const(e->u.bin.b, &v)) {
                if (!mul_ok(scale, v, &v))
                    l->ok = 0;
                else
                    lin_collect(l, e->u.bin.a, v);
                return;
            }
            if (ir_expr_is_const(e->u.bin.a, &v)) {
                if (!mul_ok(scale, v, &v))
                    l->ok = 0;
                else
                    lin_collect(l, e->u.bin.b, v);
                return;
            }
            break;
        default: break;
        }
        break;
    default: break;
    }
    lin_add_term(l, e, scale);
}

/* (x / c) * c*k + (x % c) * k = x * k, for the truncating and the floor pair alike */
static int lin_merge_divmod(Lin *l)
{
    for (int i = 0; i < l->n; i++) {
        Expr *d = l->t[i].atom;
        int64_t c;
        if (!l->t[i].coef || d->kind != E_BIN || (d->u.bin.op != OP_DIV && d->u.bin.op != OP_FLOORDIV) ||
            !ir_expr_is_const(d->u.bin.b, &c) || c <= 0 || l->t[i].coef % c)
            continue;
        BinOp mop = d->u.bin.op == OP_DIV ? OP_MOD : OP_FLOORMOD;
        for (int j = 0; j < l->n; j++) {
            Expr *r = l->t[j].atom;
            int64_t c2;
            if (j == i || !l->t[j].coef || r->kind != E_BIN || r->u.bin.op != mop ||
                !ir_expr_is_const(r->u.bin.b, &c2) || c2 != c || l->t[j].coef * c != l->t[i].coef ||
                !ir_expr_equal(r->u.bin.a, d->u.bin.a))
                continue;
            int64_t k = l->t[j].coef;
            l->t[i].coef = 0;
            l->t[j].coef = 0;
            lin_collect(l, d->u.bin.a, k);
            return 1;
        }
    }
    return 0;
}

/* x / E * E + x % E -> x for a run-time extent E (a fused axis taken apart by run-time
 * extents, stored compact at them): a term (x / E) * E and a term x % E with the same
 * coefficient. 1 when it merged a pair. */
static int lin_merge_runtime_divmod(Lin *l)
{
    for (int i = 0; i < l->n; i++) {
        Expr *m = l->t[i].atom, *d = NULL, *e = NULL;
        if (!l->t[i].coef || m->kind != E_BIN || m->u.bin.op != OP_MUL)
            continue;
        for (int s = 0; s < 2 && !d; s++) {
            Expr *q = s ? m->u.bin.b : m->u.bin.a, *f = s ? m->u.bin.a : m->u.bin.b;
            if (q->kind == E_BIN && (q->u.bin.op == OP_DIV || q->u.bin.op == OP_FLOORDIV) && runtime_divisor(q) &&
                ir_expr_equal(q->u.bin.b, f))
                d = q, e = f;
        }
        if (!d)
            continue;
        BinOp mop = d->u.bin.op == OP_DIV ? OP_MOD : OP_FLOORMOD;
        for (int j = 0; j < l->n; j++) {
            Expr *r = l->t[j].atom;
            if (j == i || l->t[j].coef != l->t[i].coef || r->kind != E_BIN || r->u.bin.op != mop ||
                !ir_expr_equal(r->u.bin.b, e) || !ir_expr_equal(r->u.bin.a, d->u.bin.a))
                continue;
            int64_t k = l->t[j].coef;
            l->t[i].coef = 0;
            l->t[j].coef = 0;
            lin_collect(l, d->u.bin.a, k);
            return 1;
        }
    }
    return 0;
}

/* Is e a positive extent: a constant above 0, or an expression of run-time dims (an extent,
 * as runtime_divisor takes it)? */
static int extent_divisor(const Expr *e)
{
    int64_t c;
    return ir_expr_is_const(e, &c) ? c > 0 : ir_expr_uses_dims(e);
}

/* (x / E) % F * E + x % E -> x % (E * F) for extents E and F, one of them at least decided at
 * run time: the dims of a run that one index takes apart (a reshape merging them), stored
 * compact, from the inside out; the rule above then merges x / (E * F) * (E * F) + x % (E * F)
 * into x. The term is ((x / E) % F) * E, or for a constant E the modulo with E in its
 * coefficient. E * F is built as ir_buffer_stride builds strides (ir_mul, the inner extent
 * first), so that the next step meets the same expression. 1 when it merged a pair. */
static int lin_merge_runtime_modchain(Lin *l)
{
    for (int i = 0; i < l->n; i++) {
        Expr *m = l->t[i].atom, *q = NULL, *e = NULL;
        int64_t k = l->t[i].coef, c;
        if (!k)
            continue;
        for (int s = 0; s < 2 && !q && m->kind == E_BIN && m->u.bin.op == OP_MUL; s++) {
            Expr *md = s ? m->u.bin.b : m->u.bin.a, *f = s ? m->u.bin.a : m->u.bin.b;
            if (md->kind == E_BIN && md->u.bin.a->kind == E_BIN && ir_expr_equal(md->u.bin.a->u.bin.b, f))
                q = md, e = f;
        }
        if (!q && m->kind == E_BIN && m->u.bin.a->kind == E_BIN && ir_expr_is_const(m->u.bin.a->u.bin.b, &c) &&
            c > 0 && k % c == 0) {
            q = m;
            e = m->u.bin.a->u.bin.b;
            k /= c;
        }
        if (!q)
            continue;
        Expr *d = q->u.bin.a;   /* x / E */
        int trunc = q->u.bin.op == OP_MOD && d->u.bin.op == OP_DIV;
        if (!trunc && !(q->u.bin.op == OP_FLOORMOD && d->u.bin.op == OP_FLOORDIV))
            continue;
        if (!extent_divisor(e) || !extent_divisor(q->u.bin.b) || (!runtime_divisor(q) && !runtime_divisor(d)))
            continue;
        for (int j = 0; j < l->n; j++) {
            Expr *r = l->t[j].atom;
            if (j == i || l->t[j].coef != k || r->kind != E_BIN || r->u.bin.op != q->u.bin.op ||
                !ir_expr_equal(r->u.bin.b, e) || !ir_expr_equal(r->u.bin.a, d->u.bin.a))
                continue;
            l->t[i].coef = 0;
            l->t[j].coef = 0;
            lin_add_term(l, ir_bin(q->u.bin.op, d->u.bin.a, ir_mul(e, q->u.bin.b)), k);
            return 1;
        }
    }
    return 0;
}

static Lin lin_of(Expr *e)
{
    Lin l;
    l.c = 0;
    l.n = 0;
    l.ok = 1;
    lin_collect(&l, e, 1);
    while (l.ok && (lin_merge_divmod(&l) || lin_merge_runtime_divmod(&l) || lin_merge_runtime_modchain(&l)))
        ;
    /* drop cancelled terms */
    int n = 0;
    for (int i = 0; i < l.n; i++)
        if (l.t[i].coef)
            l.t[n++] = l.t[i];
    l.n = n;
    return l;
}

/* Do the constant and all coefficients fit the type? (i32 index arithmetic must not
 * fold into a wrapped constant.) */
static int lin_fits(const Lin *l, DType t)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (t == DT_I32)
        lo = INT32_MIN, hi = INT32_MAX;
    else if (t == DT_I16)
        lo = INT16_MIN, hi = INT16_MAX;
    else if (t == DT_I8)
        lo = INT8_MIN, hi = INT8_MAX;
    else if (t != DT_I64)
        return 0;   /* unsigned and narrow types keep their C semantics */
    if (l->c < lo || l->c > hi)
        return 0;
    for (int i = 0; i < l->n; i++)
        if (l->t[i].coef < lo || l->t[i].coef > hi || l->t[i].coef == INT64_MIN)
            return 0;
    return 1;
}

static Expr *scaled(Expr *atom, int64_t c, DType t)
{
    return c == 1 ? atom : ir_bin(OP_MUL, atom, ir_int(c, t));
}

/* Rebuild a linear form: positive terms first in their order, then the negative ones,
 * then the constant. */
static Expr *lin_build(const Lin *l, DType t)
{
    Expr *e = NULL;
    for (int i = 0; i < l->n; i++)
        if (l->t[i].coef > 0) {
            Expr *x = scaled(l->t[i].atom, l->t[i].coef, t);
            e = e ? ir_bin(OP_ADD, e, x) : x;
        }
    for (int i = 0; i < l->n; i++)
        if (l->t[i].coef < 0) {
            if (l->t[i].coef == INT64_MIN)
                ir_die("coefficient overflow");
            Expr *x = scaled(l->t[i].atom, -l->t[i].coef, t);
            e = e ? ir_bin(OP_SUB, e, x) : ir_un(UN_NEG, x);
        }
    if (!e)
        return ir_int(l->c, t);
    if (l->c > 0)
        e = ir_bin(OP_ADD, e, ir_int(l->c, t));
    else if (l->c < 0 && l->c != INT64_MIN)
        e = ir_bin(OP_SUB, e, ir_int(-l->c, t));
    else if (l->c < 0)
        e = ir_bin(OP_ADD, e, ir_int(l->c, t));
    return e;
}

static int lin_bounds(const Lin *l, const RangeMap *m, int64_t *lo, int64_t *hi)
{
    int64_t L = l->c, H = l->c;
    for (int i = 0; i < l->n; i++) {
        int64_t alo, ahi, p, q;
        if (!ir_const_bounds(l->t[i].atom, m, &alo, &ahi))
            return 0;
        if (!mul_ok(alo, l->t[i].coef, &p) || !mul_ok(ahi, l->t[i].coef, &q))
            return 0;
        if (p > q) {
            int64_t s = p;
            p = q;
            q = s;
        }
        if (!add_ok(L, p, &L) || !add_ok(H, q, &H))
            return 0;
    }
    *lo = L;
    *hi = H;
    return 1;
}

/* ---------------------------------------------------------------- the simplifier */

static Expr *simp(Expr *e, const RangeMap *m);

static Expr *fold_int_bin(BinOp op, int64_t a, int64_t b, DType t, int *ok)
{
    int64_t r = 0;
    *ok = 1;
    switch (op) {
    case OP_ADD: *ok = add_ok(a, b, &r); break;
    case OP_SUB: *ok = b != INT64_MIN && add_ok(a, -b, &r); break;
    case OP_MUL: *ok = mul_ok(a, b, &r); break;
    case OP_DIV: *ok = b != 0 && !(a == INT64_MIN && b == -1); if (*ok) r = a / b; break;
    case OP_MOD: *ok = b != 0 && !(a == INT64_MIN && b == -1); if (*ok) r = a % b; break;
    case OP_FLOORDIV: *ok = b != 0 && !(a == INT64_MIN && b == -1); if (*ok) r = floordiv64(a, b); break;
    case OP_FLOORMOD: *ok = b != 0 && !(a == INT64_MIN && b == -1); if (*ok) r = floormod64(a, b); break;
    case OP_MIN: r = a < b ? a : b; break;
    case OP_MAX: r = a > b ? a : b; break;
    case OP_EQ: return ir_bool(a == b);
    case OP_NE: return ir_bool(a != b);
    case OP_LT: return ir_bool(ir_dtype_is_signed(t) ? a < b : (uint64_t)a < (uint64_t)b);
    case OP_LE: return ir_bool(ir_dtype_is_signed(t) ? a <= b : (uint64_t)a <= (uint64_t)b);
    case OP_GT: return ir_bool(ir_dtype_is_signed(t) ? a > b : (uint64_t)a > (uint64_t)b);
    case OP_GE: return ir_bool(ir_dtype_is_signed(t) ? a >= b : (uint64_t)a >= (uint64_t)b);
    case OP_AND: return ir_bool(a && b);
    case OP_OR: return ir_bool(a || b);
    case OP_BITAND: r = a & b; break;
    case OP_BITOR: r = a | b; break;
    case OP_BITXOR: r = a ^ b; break;
    default: *ok = 0; break;
    }
    if (!*ok)
        return NULL;
    /* only fold when the result fits the type (no C overflow semantics to imitate) */
    Expr *x = ir_int(r, t);
    if (x->u.ival != r) {
        *ok = 0;
        return NULL;
    }
    return x;
}

/* floordiv / floormod of a by a positive constant c, with a simplified */
static Expr *simp_divmod(BinOp op, Expr *a, int64_t c, DType t, const RangeMap *m)
{
    int is_div = op == OP_DIV || op == OP_FLOORDIV;
    int64_t lo, hi;
    int nonneg = ir_const_bounds(a, m, &lo, &hi) && lo >= 0;
    if (c == 1)
        return is_div ? a : ir_int(0, t);
    /* C's truncating ops agree with the floor ones only for a >= 0 */
    if ((op == OP_DIV || op == OP_MOD) && !nonneg)
        return ir_bin(op, a, ir_int(c, t));
    Lin l = lin_of(a);
    if (l.ok && lin_fits(&l, t)) {
        Lin mult = {0, 0, {{0}}, 1}, rest = {0, 0, {{0}}, 1};
        for (int i = 0; i < l.n; i++) {
            if (l.t[i].coef % c == 0)
                mult.t[mult.n++] = (Term){l.t[i].atom, l.t[i].coef / c};
            else
                rest.t[rest.n++] = l.t[i];
        }
        mult.c = floordiv64(l.c, c);
        rest.c = floormod64(l.c, c);
        int64_t rlo, rhi;
        if (lin_bounds(&rest, m, &rlo, &rhi) && floordiv64(rlo, c) == floordiv64(rhi, c)) {
            int64_t q = floordiv64(rlo, c);
            if (is_div) {
                mult.c += q;
                return lin_build(&mult, t);
            }
            rest.c -= q * c;
            return lin_build(&rest, t);
        }
        if (mult.n || mult.c) {
            Expr *r = lin_build(&rest, t);
            int64_t rlo2, rhi2;
            int rnn = ir_const_bounds(r, m, &rlo2, &rhi2) && rlo2 >= 0;
            BinOp rop = rnn ? (is_div ? OP_DIV : OP_MOD) : (is_div ? OP_FLOORDIV : OP_FLOORMOD);
            Expr *q = ir_bin(rop, r, ir_int(c, t));
            if (!is_div)
                return q;
            return simp(ir_bin(OP_ADD, lin_build(&mult, t), q), m);
        }
    }
    /* (x / c1) / c2 -> x / (c1 * c2) */
    int64_t c1, cc;
    if (is_div && a->kind == E_BIN && (a->u.bin.op == OP_FLOORDIV || (a->u.bin.op == OP_DIV && nonneg)) &&
        ir_expr_is_const(a->u.bin.b, &c1) && c1 > 0 && mul_ok(c1, c, &cc))
        return simp_divmod(a->u.bin.op, a->u.bin.a, cc, t, m);
    /* (x % c1) % c2 -> x % c2 when c2 divides c1 */
    if (!is_div && a->kind == E_BIN && (a->u.bin.op == OP_FLOORMOD || (a->u.bin.op == OP_MOD && nonneg)) &&
        ir_expr_is_const(a->u.bin.b, &c1) && c1 > 0 && c1 % c == 0)
        return simp_divmod(a->u.bin.op, a->u.bin.a, c, t, m);
    if (nonneg)
        op = is_div ? OP_DIV : OP_MOD;
    return ir_bin(op, a, ir_int(c, t));
}

/* Decide a comparison a OP b on integers through the bounds of a - b. Returns -1 if unknown. */
static int decide_cmp(BinOp op, Expr *a, Expr *b, const RangeMap *m)
{
    if (!ir_dtype_is_signed(a->dtype))
        return -1;
    Lin l = lin_of(ir_bin(OP_SUB, a, b));
    int64_t lo, hi;
    if (!l.ok || !lin_fits(&l, DT_I64) || !lin_bounds(&l, m, &lo, &hi))
        return -1;
    switch (op) {
    case OP_LT: return hi < 0 ? 1 : lo >= 0 ? 0 : -1;
    case OP_LE: return hi <= 0 ? 1 : lo > 0 ? 0 : -1;
    case OP_GT: return lo > 0 ? 1 : hi <= 0 ? 0 : -1;
    case OP_GE: return lo >= 0 ? 1 : hi < 0 ? 0 : -1;
    case OP_EQ: return lo == 0 && hi == 0 ? 1 : (lo > 0 || hi < 0) ? 0 : -1;
    case OP_NE: return lo == 0 && hi == 0 ? 0 : (lo > 0 || hi < 0) ? 1 : -1;
    default: return -1;
    }
}

static Expr *simp_bin(Expr *e, const RangeMap *m)
{
    BinOp op = e->u.bin.op;
    Expr *a = simp(e->u.bin.a, m), *b = simp(e->u.bin.b, m);
    DType t = a->dtype;
    int64_t va, vb;
    int ca = ir_expr_is_const(a, &va), cb = ir_expr_is_const(b, &vb), ok;
    int k = ir_binop_kind(op);

    if (ca && cb) {
        Expr *r = fold_int_bin(op, va, vb, t, &ok);
        if (ok)
            return r;
    }
    if (k == 'L') {
        if (ca)
            return op == OP_AND ? (va ? b : a) : (va ? a : b);
        if (cb)
            return op == OP_AND ? (vb ? a : b) : (vb ? b : a);
        return ir_bin(op, a, b);
    }
    if (a->kind == E_FLOAT && b->kind == E_FLOAT) {
        double x = a->u.fval, y = b->u.fval, r;
        switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        case OP_DIV: r = x / y; break;
        case OP_MIN: r = isnan(x) || isnan(y) ? NAN : x < y ? x : y; break;
        case OP_MAX: r = isnan(x) || isnan(y) ? NAN : x > y ? x : y; break;
        case OP_LT: return ir_bool(x < y);
        case OP_LE: return ir_bool(x <= y);
        case OP_GT: return ir_bool(x > y);
        case OP_GE: return ir_bool(x >= y);
        case OP_EQ: return ir_bool(x == y);
        case OP_NE: return ir_bool(x != y);
        default: return ir_bin(op, a, b);
        }
        return ir_float(r, t);
    }
    if (ir_dtype_is_float(t)) {
        if (op == OP_MUL && b->kind == E_FLOAT && b->u.fval == 1.0)
            return a;
        if (op == OP_MUL && a->kind == E_FLOAT && a->u.fval == 1.0)
            return b;
        if (op == OP_DIV && b->kind == E_FLOAT && b->u.fval == 1.0)
            return a;
        return ir_bin(op, a, b);
    }
    if (t == DT_BOOL) {
        if ((op == OP_EQ || op == OP_NE) && ca && cb)
            return ir_bool(op == OP_EQ ? va == vb : va != vb);
        return ir_bin(op, a, b);
    }
    switch (op) {
    case OP_ADD:
    case OP_SUB:
    case OP_MUL: {
        Expr *x = ir_bin(op, a, b);
        Lin l = lin_of(x);
        return l.ok && lin_fits(&l, t) ? lin_build(&l, t) : x;
    }
    case OP_DIV:
    case OP_MOD:
    case OP_FLOORDIV:
    case OP_FLOORMOD:
        if (cb && vb > 0)
            return simp_divmod(op, a, vb, t, m);
        {
            /* by a run-time extent (> 0): C's truncating ops where the dividend is >= 0 */
            Expr *x = ir_bin(op, a, b);
            int64_t alo, ahi, blo, bhi;
            if ((op == OP_FLOORDIV || op == OP_FLOORMOD) && runtime_divisor(x) && ir_const_bounds(a, m, &alo, &ahi) &&
                alo >= 0 && ir_const_bounds(b, m, &blo, &bhi) && blo > 0)
                x->u.bin.op = op == OP_FLOORDIV ? OP_DIV : OP_MOD;
            return x;
        }
    case OP_MIN:
    case OP_MAX: {
        if (ir_expr_equal(a, b))
            return a;
        int lt = decide_cmp(OP_LE, a, b, m);
        if (lt == 1)
            return op == OP_MIN ? a : b;
        if (decide_cmp(OP_GE, a, b, m) == 1)
            return op == OP_MIN ? b : a;
        return ir_bin(op, a, b);
    }
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: {
        int d = decide_cmp(op, a, b, m);
        if (d >= 0)
            return ir_bool(d);
        /* min(x, y) < b where y < b (a part of a fused run-time axis, min(f / c, E - 1), below
         * its extent E) */
        if (op == OP_LT && a->kind == E_BIN && a->u.bin.op == OP_MIN &&
            (decide_cmp(OP_LT, a->u.bin.b, b, m) == 1 || decide_cmp(OP_LT, a->u.bin.a, b, m) == 1))
            return ir_bool(1);
        /* x % E < E for a run-time extent E > 0 */
        int64_t elo, ehi;
        if (op == OP_LT && a->kind == E_BIN && (a->u.bin.op == OP_FLOORMOD || a->u.bin.op == OP_MOD) &&
            runtime_divisor(a) && ir_expr_equal(a->u.bin.b, b) && ir_const_bounds(b, m, &elo, &ehi) && elo > 0 &&
            (a->u.bin.op == OP_FLOORMOD || (ir_const_bounds(a->u.bin.a, m, &elo, &ehi) && elo >= 0)))
            return ir_bool(1);
        /* x / c < k -> x < c * k for c > 0 (floor division, or x known >= 0): the guard of a
         * fused, split axis reads as a plain bound */
        int64_t c, lo, hi, ck;
        Lin lx;
        if ((op == OP_LT || op == OP_GE || op == OP_LE || op == OP_GT) && cb && vb < INT64_MAX && ir_dtype_is_signed(t) &&
            a->kind == E_BIN &&
            (a->u.bin.op == OP_DIV || a->u.bin.op == OP_FLOORDIV) && ir_expr_is_const(a->u.bin.b, &c) && c > 0 &&
            (a->u.bin.op == OP_FLOORDIV || ((lx = lin_of(a->u.bin.a)).ok && lin_bounds(&lx, m, &lo, &hi) && lo >= 0))) {
            int64_t k2 = op == OP_LE || op == OP_GT ? vb + 1 : vb;   /* x/c <= k  <->  x/c < k + 1 */
            if (mul_ok(c, k2, &ck)) {
                BinOp nop = op == OP_LT || op == OP_LE ? OP_LT : OP_GE;
                return simp_bin(ir_bin(nop, a->u.bin.a, ir_int(ck, t)), m);
            }
        }
        return ir_bin(op, a, b);
    }
    default: return ir_bin(op, a, b);
    }
}

static Expr *simp(Expr *e, const RangeMap *m)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR: return e;
    case E_BIN: return simp_bin(e, m);
    case E_UN: {
        Expr *a = simp(e->u.un.a, m);
        int64_t v;
        if (e->u.un.op == UN_NOT && ir_expr_is_const(a, &v))
            return ir_bool(!v);
        if (e->u.un.op == UN_NEG && a->kind == E_FLOAT)
            return ir_float(-a->u.fval, a->dtype);
        if (e->u.un.op == UN_NEG && a->kind == E_UN && a->u.un.op == UN_NEG)
            return a->u.un.a;
        if (e->u.un.op == UN_NEG && is_int(a)) {
            Lin l = lin_of(ir_un(UN_NEG, a));
            if (l.ok && lin_fits(&l, a->dtype))
                return lin_build(&l, a->dtype);
        }
        if (e->u.un.op == UN_BITNOT && ir_expr_is_const(a, &v))
            return ir_int(~v, a->dtype);
        return a == e->u.un.a ? e : ir_un(e->u.un.op, a);
    }
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            args[i] = simp(e->u.call.args[i], m);
        return ir_call(e->u.call.fn, args);
    }
    case E_CAST: {
        Expr *a = simp(e->u.cast.a, m);
        if (a->kind == E_INT && !ir_dtype_is_float(e->dtype))
            return ir_int(a->u.ival, e->dtype);
        if (a->kind == E_INT && ir_dtype_is_float(e->dtype))
            return ir_float((double)a->u.ival, e->dtype);
        if (a->kind == E_FLOAT && ir_dtype_is_float(e->dtype))
            return ir_float(a->u.fval, e->dtype);
        return ir_cast(e->dtype, a);
    }
    case E_BITCAST: return ir_bitcast(e->dtype, simp(e->u.cast.a, m));   /* (not folded) */
    case E_SELECT: {
        Expr *c = simp(e->u.sel.cond, m);
        int64_t v;
        if (ir_expr_is_const(c, &v))
            return simp(v ? e->u.sel.t : e->u.sel.f, m);
        Expr *t = simp(e->u.sel.t, m), *f = simp(e->u.sel.f, m);
        if (ir_expr_equal(t, f))
            return t;
        return ir_select(c, t, f);
    }
    case E_ACCESS: {
        Expr *idx[KG_MAX_DIMS];
        for (int i = 0; i < e->u.access.n; i++)
            idx[i] = simp(e->u.access.idx[i], m);
        return ir_access(e->u.access.t, idx, e->u.access.n);
    }
    case E_LOAD: return ir_load(e->u.load.buf, simp(e->u.load.index, m));
    case E_REDUCE: {
        RangeMap *mm = (RangeMap *)m, local = {0};
        if (!mm)
            mm = &local;
        for (int i = 0; i < e->u.reduce.naxes; i++)
            ir_range_push(mm, e->u.reduce.axes[i]->var, 0, e->u.reduce.axes[i]->extent - 1);
        Expr *b = simp(e->u.reduce.body, mm);
        for (int i = 0; i < e->u.reduce.naxes; i++)
            ir_range_pop(mm);
        return ir_reduce(e->u.reduce.op, b, e->u.reduce.axes, e->u.reduce.naxes);
    }
    }
    return e;
}

Expr *ir_simplify(Expr *e, const RangeMap *m) { return e ? simp(e, m) : NULL; }

Expr *ir_add(Expr *a, Expr *b) { return simp(ir_bin(OP_ADD, a, b), NULL); }
Expr *ir_sub(Expr *a, Expr *b) { return simp(ir_bin(OP_SUB, a, b), NULL); }
Expr *ir_mul(Expr *a, Expr *b) { return simp(ir_bin(OP_MUL, a, b), NULL); }

/* ---------------------------------------------------------------- statements */

/* `v < E` where v's loop runs over [0, E) exactly (a CPU loop over an extent decided at
 * run time, which the ranges do not bound): true */
typedef struct {
    Var *v;
    Expr *ext;
    int hits;
} InLoop;

static Expr *in_loop_expr(Expr *e, void *ctx)
{
    InLoop *l = ctx;
    if (e->kind == E_BIN && e->u.bin.op == OP_LT && e->u.bin.a->kind == E_VAR && e->u.bin.a->u.var == l->v &&
        ir_expr_equal(e->u.bin.b, l->ext)) {
        l->hits++;
        return ir_bool(1);
    }
    return ir_expr_map(e, in_loop_expr, ctx);
}

static Stmt *in_loop(Stmt *s, void *ctx) { return ir_stmt_map(s, in_loop, in_loop_expr, ctx); }

static Stmt *simp_stmt(Stmt *s, RangeMap *m)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case S_FOR: {
        Expr *min = simp(s->u.loop.min, m), *ext = simp(s->u.loop.extent, m);
        int64_t e, lo, hi;
        if (ir_expr_is_const(ext, &e) && e <= 0)
            return NULL;
        if (ir_expr_is_const(ext, &e) && e == 1 && s->u.loop.kind != FOR_BOUND) {
            Var *v = s->u.loop.var;
            return simp_stmt(ir_stmt_subst(s->u.loop.body, &v, &min, 1), m);
        }
        int64_t elo, ehi;
        int known = ir_const_bounds(min, m, &lo, &hi) && ir_const_bounds(ext, m, &elo, &ehi);
        if (known)
            ir_range_push(m, s->u.loop.var, lo, hi + ehi - 1);
        Stmt *body = simp_stmt(s->u.loop.body, m);
        int64_t z;
        if (body && (s->u.loop.kind == FOR_SERIAL || s->u.loop.kind == FOR_PARALLEL) &&
            ir_expr_is_const(min, &z) && z == 0 && !ir_expr_is_const(ext, NULL)) {
            InLoop l = {s->u.loop.var, ext, 0};
            Stmt *b = in_loop(body, &l);
            if (l.hits)
                body = simp_stmt(b, m);
        }
        if (known)
            ir_range_pop(m);
        if (!body)
            return NULL;
        Stmt *r = ir_for(s->u.loop.var, min, ext, s->u.loop.kind, body);
        r->u.loop.bind_tag = s->u.loop.bind_tag;
        r->u.loop.tensorize = s->u.loop.tensorize;
        return r;
    }
    case S_LET: {
        Expr *v = simp(s->u.let.value, m);
        if (v->kind == E_INT || v->kind == E_VAR) {
            Var *var = s->u.let.var;
            return simp_stmt(ir_stmt_subst(s->u.let.body, &var, &v, 1), m);
        }
        int64_t lo, hi;
        int known = ir_const_bounds(v, m, &lo, &hi);
        if (known)
            ir_range_push(m, s->u.let.var, lo, hi);
        Stmt *body = simp_stmt(s->u.let.body, m);
        if (known)
            ir_range_pop(m);
        return body ? ir_let(s->u.let.var, v, body) : NULL;
    }
    case S_IF: {
        Expr *c = simp(s->u.cond.cond, m);
        int64_t v;
        if (ir_expr_is_const(c, &v))
            return simp_stmt(v ? s->u.cond.then : s->u.cond.els, m);
        Stmt *t = simp_stmt(s->u.cond.then, m), *f = simp_stmt(s->u.cond.els, m);
        if (!t && !f)
            return NULL;
        if (!t)
            return ir_if(simp(ir_un(UN_NOT, c), m), f, NULL);
        /* if (c) { if (c) x } -> if (c) x: guards of a stage and of its tile often agree */
        if (!f && t->kind == S_IF && !t->u.cond.els && ir_expr_equal(t->u.cond.cond, c))
            return t;
        return ir_if_like(s, c, t, f);
    }
    case S_STORE:
        return ir_store(s->u.store.buf, simp(s->u.store.index, m), simp(s->u.store.value, m));
    case S_PREFETCH: return ir_prefetch(s->u.store.buf, simp(s->u.store.index, m));
    case S_ALLOC: {
        Stmt *b = simp_stmt(s->u.alloc.body, m);
        return b ? ir_allocate(s->u.alloc.buf, b) : NULL;
    }
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = simp_stmt(s->u.seq.items[i], m);
        return ir_seq(items, s->u.seq.n);
    }
    case S_COMMENT:
    case S_BARRIER: return s;
    }
    return s;
}

Stmt *ir_simplify_stmt(Stmt *s)
{
    RangeMap m = {0};
    return simp_stmt(s, &m);
}

/* ---------------------------------------------------------------- intervals */

static int uses_any(const Expr *e, Var **vars, int n)
{
    for (int i = 0; i < n; i++)
        if (ir_expr_uses_var(e, vars[i]))
            return 1;
    return 0;
}

int ir_index_affine(Expr *e, const RangeMap *m, Var *const *vars, int nvars, int64_t *coefs)
{
    if (!is_int(e))
        return 0;
    Lin l = lin_of(simp(e, m));
    if (!l.ok)
        return 0;
    for (int i = 0; i < nvars; i++)
        coefs[i] = 0;
    for (int i = 0; i < l.n; i++) {
        if (l.t[i].atom->kind != E_VAR)
            return 0;
        for (int j = 0; j < nvars; j++)
            if (l.t[i].atom->u.var == vars[j])
                coefs[j] = l.t[i].coef;
    }
    return 1;
}

int ir_affine_interval(Expr *e, Var **inner, const int64_t *extents, int ninner, const RangeMap *m,
                       Expr **lo, Expr **hi)
{
    Expr *s = simp(e, m);
    Lin l = lin_of(s);
    if (!l.ok)
        return 0;
    RangeMap im = {0};
    if (m)
        for (int i = 0; i < m->n; i++)
            ir_range_push(&im, m->items[i].var, m->items[i].lo, m->items[i].hi);
    for (int i = 0; i < ninner; i++)
        ir_range_push(&im, inner[i], 0, extents[i] - 1);
    Lin outer = {l.c, 0, {{0}}, 1};
    int64_t dlo = 0, dhi = 0;
    for (int i = 0; i < l.n; i++) {
        if (!uses_any(l.t[i].atom, inner, ninner)) {
            outer.t[outer.n++] = l.t[i];
            continue;
        }
        /* a term in inner variables only (possibly nonlinear): use its constant bounds,
         * unless it also uses a variable that is not inner and not ranged */
        int64_t alo, ahi, p, q;
        Lin single = {0, 1, {{l.t[i].atom, l.t[i].coef}}, 1};
        if (!lin_bounds(&single, &im, &alo, &ahi))
            return 0;
        /* make sure the atom does not depend on an outer (symbolic) variable */
        if (l.t[i].atom->kind != E_VAR) {
            RangeMap only = {0};
            for (int j = 0; j < ninner; j++)
                ir_range_push(&only, inner[j], 0, extents[j] - 1);
            int64_t x, y;
            if (!ir_const_bounds(l.t[i].atom, &only, &x, &y))
                return 0;
        }
        p = alo;
        q = ahi;
        if (!add_ok(dlo, p, &dlo) || !add_ok(dhi, q, &dhi))
            return 0;
    }
    Expr *base = lin_build(&outer, e->dtype);
    *lo = simp(ir_bin(OP_ADD, base, ir_int(dlo, e->dtype)), m);
    *hi = simp(ir_bin(OP_ADD, base, ir_int(dhi, e->dtype)), m);
    return 1;
}
