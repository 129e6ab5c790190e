/* kg_expr.c - the .kg parser's expressions: weak literals (a literal, or literals and
 * params folded here with overflow checks, takes the other operand's type), then the
 * grammar: primaries, accesses, calls and casts, reductions, unary and binary operators
 * by precedence. requires: the parser state of kg_parse.h; gives: Val, an Expr or a
 * weak literal, or -1 with a positioned error. */
#include "kg_parse.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- weak literals */

static int int_fits(int64_t v, DType t)
{
    switch (t) {
    case DT_BOOL: return v == 0 || v == 1;
    case DT_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case DT_U8: return v >= 0 && v <= UINT8_MAX;
    case DT_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case DT_U16: return v >= 0 && v <= UINT16_MAX;
    case DT_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case DT_U32: return v >= 0 && v <= UINT32_MAX;
    case DT_U64: return v >= 0;
    default: return 1;
    }
}

/* The weak literal v as a constant of type t; `what` names the operation for messages. */
Expr *kg_lit_as(P *p, const Val *v, DType t, const GenTok *at, const char *what)
{
    if (v->weak == 'f' && !ir_dtype_is_float(t)) {
        kg_err(p, at, "type mismatch in '%s': %s and the float literal %g (cast the %s side, e.g. f32(...))", what,
            ir_dtype_name(t), v->f, ir_dtype_name(t));
        return NULL;
    }
    if (ir_dtype_is_float(t)) {
        double f = v->weak == 'f' ? v->f : (double)v->i;
        if (isfinite(f) && fabs(f) > ir_dtype_float_max(t)) {
            kg_err(p, at, "%s literal %g does not fit in %s (in '%s')", v->weak == 'f' ? "float" : "integer", f,
                ir_dtype_name(t), what);
            return NULL;
        }
        return ir_float(f, t);
    }
    if (!int_fits(v->i, t)) {
        kg_err(p, at, "integer literal %lld does not fit in %s (in '%s')", (long long)v->i, ir_dtype_name(t), what);
        return NULL;
    }
    return ir_int(v->i, t);
}

/* A value as an expression: weak literals get their default type. */
Expr *kg_val_expr(const Val *v)
{
    if (v->weak == 'f')
        return ir_float(v->f, !isfinite(v->f) || fabs(v->f) <= FLT_MAX ? DT_F32 : DT_F64);
    if (v->weak == 'i')
        return int_fits(v->i, DT_INDEX) ? ir_idx(v->i) : ir_int(v->i, DT_I64);
    return v->e;
}

static int set_expr(P *p, Val *v, Expr *e, int depth, const GenTok *at)
{
    if (depth > KG_MAX_EXPR_DEPTH)
        return kg_err(p, at, "expression too deep (more than %d nested operations); split it into several computes",
                   KG_MAX_EXPR_DEPTH);
    v->e = e;
    v->weak = 0;
    v->depth = depth;
    return 0;
}

/* Bring a and b to one type: a weak side takes the other's type; two weak sides default
 * (to f32 when either is a float). */
static int unify(P *p, const Val *a, const Val *b, const GenTok *at, const char *what, Expr **x, Expr **y)
{
    if (a->weak && b->weak && (a->weak == 'f' || b->weak == 'f')) {
        *x = kg_lit_as(p, a, DT_F32, at, what);
        *y = kg_lit_as(p, b, DT_F32, at, what);
    } else if (a->weak && b->weak) {
        *x = kg_val_expr(a);
        *y = kg_val_expr(b);
    } else if (a->weak) {
        *y = b->e;
        *x = kg_lit_as(p, a, b->e->dtype, at, what);
    } else if (b->weak) {
        *x = a->e;
        *y = kg_lit_as(p, b, a->e->dtype, at, what);
    } else {
        *x = a->e;
        *y = b->e;
    }
    return *x && *y ? 0 : -1;
}

static int mul_overflows(int64_t a, int64_t b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a == -1)
        return b == INT64_MIN;
    if (b == -1)
        return a == INT64_MIN;
    if (a > 0)
        return b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a;
    return b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b;
}

/* Fold an integer operation of two literals: 0 done, 1 not foldable, -1 error. */
static int fold_int(P *p, BinOp op, int64_t a, int64_t b, int64_t *r, const GenTok *at)
{
    switch (op) {
    case OP_ADD:
        if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
            break;
        *r = a + b;
        return 0;
    case OP_SUB:
        if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
            break;
        *r = a - b;
        return 0;
    case OP_MUL:
        if (mul_overflows(a, b))
            break;
        *r = a * b;
        return 0;
    case OP_DIV:
    case OP_MOD:
        if (b == 0)
            return kg_err(p, at, "division by zero in constant expression");
        if (a == INT64_MIN && b == -1)
            break;
        *r = op == OP_DIV ? a / b : a % b;
        return 0;
    case OP_MIN: *r = a < b ? a : b; return 0;
    case OP_MAX: *r = a > b ? a : b; return 0;
    case OP_SHL:
        if (b < 0 || b > 62)
            return kg_err(p, at, "shift count %lld out of range in constant expression", (long long)b);
        if (mul_overflows(a, (int64_t)1 << b))
            break;
        *r = a * ((int64_t)1 << b);
        return 0;
    case OP_SHR:
        if (b < 0 || b > 63)
            return kg_err(p, at, "shift count %lld out of range in constant expression", (long long)b);
        *r = a >= 0 ? a >> b : ~(~a >> b);
        return 0;
    case OP_BITAND: *r = a & b; return 0;
    case OP_BITOR: *r = a | b; return 0;
    case OP_BITXOR: *r = a ^ b; return 0;
    default: return 1;
    }
    return kg_err(p, at, "integer overflow in constant expression");
}

/* a op b for a comparison operator, on integers or doubles */
#define COMPARE(op, a, b)                                                                  \
    ((op) == OP_EQ ? (a) == (b) : (op) == OP_NE ? (a) != (b) : (op) == OP_LT ? (a) < (b) \
     : (op) == OP_LE ? (a) <= (b) : (op) == OP_GT ? (a) > (b) : (a) >= (b))

/* a = a op b. */
static int binop(P *p, BinOp op, Val *a, const Val *b, const GenTok *at)
{
    int kind = ir_binop_kind(op);
    if (a->weak == 'i' && b->weak == 'i') {
        if (kind == 'C')
            return set_expr(p, a, ir_bool(COMPARE(op, a->i, b->i)), 1, at);
        int64_t r = 0;
        int rc = fold_int(p, op, a->i, b->i, &r, at);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            a->i = r;
            return 0;
        }
    } else if (a->weak && b->weak) {
        double x = a->weak == 'f' ? a->f : (double)a->i, y = b->weak == 'f' ? b->f : (double)b->i, r = 0;
        if (kind == 'C')
            return set_expr(p, a, ir_bool(COMPARE(op, x, y)), 1, at);
        switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        case OP_DIV: r = x / y; break;
        case OP_MOD: r = fmod(x, y); break;
        case OP_MIN: r = x < y ? x : y; break;
        case OP_MAX: r = x > y ? x : y; break;
        default: goto build;
        }
        a->weak = 'f';
        a->f = r;
        return 0;
    }
build:;
    Expr *x, *y;
    if (unify(p, a, b, at, ir_binop_text(op), &x, &y))
        return -1;
    Expr *e = ir_binary(op, x, y);
    if (!e)
        return kg_err_ir(p, at);
    return set_expr(p, a, e, 1 + (a->depth > b->depth ? a->depth : b->depth), at);
}

/* c ? t : f, select(c, t, f) and where(c, t, f); out may alias cond. */
static int make_select(P *p, Val *out, const Val *cond, const Val *t, const Val *f, const GenTok *at,
                       const char *what)
{
    Expr *c = kg_val_expr(cond);
    if (c->dtype != DT_BOOL)
        return kg_err(p, cond->tok, "the condition of %s must be bool, got %s", what, ir_dtype_name(c->dtype));
    Expr *x, *y;
    if (unify(p, t, f, at, what, &x, &y))
        return -1;
    if (x->dtype != y->dtype)
        return kg_err(p, at, "the two sides of %s have different types: %s and %s", what, ir_dtype_name(x->dtype),
                   ir_dtype_name(y->dtype));
    int d = cond->depth;
    d = t->depth > d ? t->depth : d;
    d = f->depth > d ? f->depth : d;
    return set_expr(p, out, ir_select(c, x, y), d + 1, at);
}

/* ---------------------------------------------------------------- expressions */

static int nest_in(P *p, const GenTok *at)
{
    if (++p->nest > KG_MAX_NEST)
        return kg_err(p, at, "expression nested too deeply (the limit is %d levels)", KG_MAX_NEST);
    return 0;
}

/* A constant expression over params and literals, e.g. an extent or a split factor. */
int kg_parse_const(P *p, int64_t *v)
{
    GenTok *t = kg_peek(p);
    int save = p->cexpr;
    p->cexpr = 1;
    Val x;
    int rc = kg_parse_expr(p, &x);
    p->cexpr = save;
    if (rc)
        return -1;
    if (x.weak == 'i') {
        *v = x.i;
        return 0;
    }
    if (!x.weak && x.e->kind == E_INT && x.e->dtype != DT_BOOL) {
        *v = x.e->u.ival;
        return 0;
    }
    return kg_err(p, t, "expected an integer constant expression (params and literals)%s",
               x.weak == 'f' ? ", got a float" : "");
}

int kg_parse_extent(P *p, const GenTok *axis, int64_t *v)
{
    GenTok *t = kg_peek(p);
    if (kg_parse_const(p, v))
        return -1;
    if (*v < 1)
        return kg_err(p, t, "the extent of '%.*s' must be >= 1, got %lld", axis->len, axis->s, (long long)*v);
    if (*v > KG_MAX_ELEMS)
        return kg_err(p, t, "the extent of '%.*s' is too large (%lld; indices are 32-bit)", axis->len, axis->s,
                   (long long)*v);
    return 0;
}

/* Is the call whose '(' was just consumed a reduction, `min(k < K: body)`? A ':' at the
 * call's own level that does not close a '?' says so. */
#define REDUCE_LOOKAHEAD 4096   /* tokens searched for the ':' (an axis list is never longer) */

static int looks_like_reduction(P *p)
{
    int depth = 0, pending = 0;
    for (int i = p->pos; i < p->ntok && i < p->pos + REDUCE_LOOKAHEAD; i++) {
        GenTok *t = &p->toks[i];
        if (t->kind == GT_EOF)
            return 0;
        if (t->kind != GT_PUNCT)
            continue;
        if (kg_is_p(t, "(") || kg_is_p(t, "[") || kg_is_p(t, "{"))
            depth++;
        else if (kg_is_p(t, ")") || kg_is_p(t, "]") || kg_is_p(t, "}")) {
            if (depth-- == 0)
                return 0;
        } else if (depth == 0 && kg_is_p(t, "?"))
            pending++;
        else if (depth == 0 && kg_is_p(t, ":")) {
            if (!pending)
                return 1;
            pending--;
        }
    }
    return 0;
}

/* name '(' already consumed: `k < K, r < R : body )`. */
static int parse_reduce(P *p, GenTok *name, const GenTok *open, ReduceOp op, Val *out)
{
    if (p->cexpr)
        return kg_err(p, name, "a constant expression may not contain a reduction");
    IterVar *axes[KG_MAX_REDUCE_AXES];
    int n = 0;
    for (;;) {
        GenTok *an = kg_next(p);
        if (an->kind != GT_NAME)
            return kg_err(p, an, "expected a reduction axis name (as in %.*s(k < K: body)) but found %s", name->len,
                       name->s, kg_desc(an));
        if (kg_check_new_axis(p, an))
            return -1;
        for (int k = 0; k < n; k++)
            if (kg_teq(an, axes[k]->var->name))
                return kg_err(p, an, "reduction axis '%.*s' defined twice", an->len, an->s);
        if (kg_expect(p, "<"))
            return -1;
        int64_t ext;
        if (kg_parse_extent(p, an, &ext))
            return -1;
        if (n == KG_MAX_REDUCE_AXES)
            return kg_err(p, an, "too many reduction axes (the limit is %d)", KG_MAX_REDUCE_AXES);
        axes[n++] = ir_itervar_new(kg_tokstr(an), ext, IV_REDUCE);
        if (kg_accept(p, ","))
            continue;
        if (kg_accept(p, ":"))
            break;
        return kg_err(p, kg_peek(p), "expected ',' or ':' after a reduction axis but found %s", kg_desc(kg_peek(p)));
    }
    if (p->nscope + n > KG_MAX_SCOPE)
        return kg_err(p, name, "too many axes in scope (the limit is %d)", KG_MAX_SCOPE);
    int scope0 = p->nscope;
    for (int k = 0; k < n; k++)
        p->scope[p->nscope++] = axes[k];
    Val body;
    int rc = kg_parse_expr(p, &body);
    p->nscope = scope0;
    if (rc || kg_close_bracket(p, open, ")"))
        return -1;
    Expr *b = kg_val_expr(&body);
    out->tok = name;
    return set_expr(p, out, ir_reduce(op, b, axes, n), body.depth + 1, name);
}

/* Arguments after '(' up to and including ')'. */
static int parse_args(P *p, const GenTok *name, const GenTok *open, Val *args, int *n)
{
    *n = 0;
    if (kg_is_p(kg_peek(p), ")"))
        return kg_close_bracket(p, open, ")");
    for (;;) {
        if (*n == KG_MAX_CALL_ARGS)
            return kg_err(p, kg_peek(p), "too many arguments to %.*s()", name->len, name->s);
        if (kg_parse_expr(p, &args[(*n)++]))
            return -1;
        if (kg_accept(p, ","))
            continue;
        return kg_close_bracket(p, open, ")");
    }
}

/* A cast by dtype name, e.g. f32(x). */
static int make_cast(P *p, DType t, const GenTok *name, Val *a, Val *out)
{
    *out = *a;
    out->tok = (GenTok *)name;
    if (!a->weak)
        return set_expr(p, out, ir_cast(t, a->e), a->depth + 1, name);
    int64_t iv = a->i;
    if (a->weak == 'f') {
        if (ir_dtype_is_float(t))
            return set_expr(p, out, ir_float(a->f, t), 1, name);
        if (t == DT_BOOL)
            return set_expr(p, out, ir_bool(a->f != 0), 1, name);
        if (!(a->f > -9.2e18 && a->f < 9.2e18))
            return kg_err(p, name, "cannot convert %g to %s", a->f, ir_dtype_name(t));
        iv = (int64_t)a->f;
    }
    if (p->cexpr && !ir_dtype_is_float(t) && t != DT_BOOL) {
        out->weak = 'i';   /* i32(M / 2.0) stays usable as a constant */
        out->i = ir_int(iv, t)->u.ival;
        return 0;
    }
    return set_expr(p, out, ir_int(iv, t), 1, name);
}

static int parse_call(P *p, GenTok *name, Val *out)
{
    GenTok *open = kg_next(p);
    p->brackets++;
    char fname[GEN_MAX_NAME + 1];
    memcpy(fname, name->s, (size_t)name->len);
    fname[name->len] = 0;
    memset(out, 0, sizeof *out);
    out->tok = name;

    if (!strcmp(fname, "sum"))
        return parse_reduce(p, name, open, RED_SUM, out);
    if (!strcmp(fname, "prod"))
        return parse_reduce(p, name, open, RED_PROD, out);
    int is_min = !strcmp(fname, "min"), is_max = !strcmp(fname, "max");
    if ((is_min || is_max) && looks_like_reduction(p))
        return parse_reduce(p, name, open, is_min ? RED_MIN : RED_MAX, out);

    DType dt;
    MathFn fn;
    int is_cast = !ir_dtype_parse(fname, &dt), is_sel = !strcmp(fname, "select") || !strcmp(fname, "where");
    int is_math = !ir_mathfn_parse(fname, &fn);
    if (!is_cast && !is_sel && !is_math && !is_min && !is_max) {
        if (kg_find_tensor(p, name))
            return kg_err(p, name, "'%s' is a tensor; index it with [...]", fname);
        return kg_err(p, name, "unknown function '%s'", fname);
    }
    Val args[KG_MAX_CALL_ARGS];
    int n;
    if (parse_args(p, name, open, args, &n))
        return -1;
    if (is_cast) {
        if (n != 1)
            return kg_err(p, name, "%s() takes 1 argument, got %d", fname, n);
        return make_cast(p, dt, name, &args[0], out);
    }
    if (is_sel) {
        if (n != 3)
            return kg_err(p, name, "%s() takes 3 arguments (condition, then, else), got %d", fname, n);
        return make_select(p, out, &args[0], &args[1], &args[2], name, fname);
    }
    if (is_min || is_max) {
        if (n < 2)
            return kg_err(p, name, "%s() takes 2 or more arguments, or a reduction: %s(k < K: body)", fname, fname);
        *out = args[0];
        for (int k = 1; k < n; k++)
            if (binop(p, is_min ? OP_MIN : OP_MAX, out, &args[k], name))
                return -1;
        out->tok = name;
        return 0;
    }
    /* a math function: weak arguments take the type of the first typed one */
    DType t = DT_COUNT;
    int any_float = 0, depth = 0;
    for (int k = 0; k < n; k++) {
        if (!args[k].weak && t == DT_COUNT)
            t = args[k].e->dtype;
        any_float |= args[k].weak == 'f';
        depth = args[k].depth > depth ? args[k].depth : depth;
    }
    if (t == DT_COUNT)
        t = any_float || fn != FN_ABS ? DT_F32 : DT_INDEX;
    Expr *ex[KG_MAX_CALL_ARGS];
    for (int k = 0; k < n; k++) {
        ex[k] = args[k].weak ? kg_lit_as(p, &args[k], t, args[k].tok, fname) : args[k].e;
        if (!ex[k])
            return -1;
    }
    Expr *e = ir_mathcall(fn, ex, n);
    if (!e)
        return kg_err_ir(p, name);
    return set_expr(p, out, e, depth + 1, name);
}

/* Is e, as an index, `t - c` for a constant c? Sets c. */
static int time_offset(const Expr *e, const Var *t, int64_t *coef, int64_t *c)
{
    int64_t k1, c1, k2, c2;
    const int64_t big = (int64_t)1 << 40;
    switch (e->kind) {
    case E_INT:
        *coef = 0;
        *c = e->u.ival;
        return *c > -big && *c < big;
    case E_VAR:
        if (e->u.var != t)
            return 0;
        *coef = 1;
        *c = 0;
        return 1;
    case E_CAST:
    case E_BITCAST: return time_offset(e->u.cast.a, t, coef, c);
    case E_UN:
        if (e->u.un.op != UN_NEG || !time_offset(e->u.un.a, t, coef, c))
            return 0;
        *coef = -*coef;
        *c = -*c;
        return 1;
    case E_BIN:
        if (!time_offset(e->u.bin.a, t, &k1, &c1) || !time_offset(e->u.bin.b, t, &k2, &c2))
            return 0;
        switch (e->u.bin.op) {
        case OP_ADD: *coef = k1 + k2; *c = c1 + c2; break;
        case OP_SUB: *coef = k1 - k2; *c = c1 - c2; break;
        case OP_MUL:
            if (k1 && k2)
                return 0;
            *coef = k1 * c2 + k2 * c1;
            *c = c1 * c2;
            break;
        default: return 0;
        }
        return *coef > -big && *coef < big && *c > -big && *c < big;
    default: return 0;
    }
}

/* An index of an access to t. Out-of-range constants are left to ir_program_verify, since
 * a select may guard them (padding). */
static Expr *index_expr(P *p, Val *v, Tensor *t, int dim)
{
    Expr *e = kg_val_expr(v);
    if (ir_dtype_is_float(e->dtype) || e->dtype == DT_BOOL) {
        kg_err(p, v->tok, "index %d of '%s' must be an integer, got %s", dim, t->name, ir_dtype_name(e->dtype));
        return NULL;
    }
    int64_t coef, c;
    if (t == p->scan && dim == 0 && (!time_offset(e, p->scan_time, &coef, &c) || coef != 1 || c > -1)) {
        kg_err(p, v->tok, "scan update may read '%s' only at earlier time steps (%s[%s - c, ...] with a constant c >= 1)",
            t->name, t->name, p->scan_time->name);
        return NULL;
    }
    return e->dtype == DT_INDEX ? e : ir_cast(DT_INDEX, e);
}

/* name '[' idx, ... ']' */
static int parse_access(P *p, GenTok *name, Val *out)
{
    if (p->cexpr)
        return kg_err(p, name, "a constant expression may not read tensors (only params and literals)");
    Tensor *t = NULL;
    if (p->scan && kg_teq(name, p->scan->name))
        t = p->scan;
    else if (p->defining && kg_same_tok(name, p->defining))
        return kg_err(p, name,
                   p->in_scan_init ? "scan init may not read '%.*s'"
                                   : "'%.*s' cannot read itself (use a scan for recurrences)",
                   name->len, name->s);
    else
        t = kg_find_tensor(p, name);
    if (!t) {
        if (kg_find_param(p, name))
            return kg_err(p, name, "'%.*s' is a param, not a tensor", name->len, name->s);
        if (kg_find_axis(p, name))
            return kg_err(p, name, "'%.*s' is an axis, not a tensor", name->len, name->s);
        return kg_err(p, name, "unknown tensor '%.*s'", name->len, name->s);
    }
    GenTok *open = kg_next(p);
    p->brackets++;
    Expr *idx[KG_MAX_DIMS];
    int n = 0, depth = 0;
    for (;;) {
        Val v;
        if (kg_parse_expr(p, &v))
            return -1;
        if (n < t->ndim) {
            if (!(idx[n] = index_expr(p, &v, t, n)))
                return -1;
        }
        depth = v.depth > depth ? v.depth : depth;
        n++;
        if (kg_accept(p, ","))
            continue;
        if (kg_close_bracket(p, open, "]"))
            return -1;
        break;
    }
    if (n != t->ndim)
        return kg_err(p, name, "'%s' has %d dimension%s, indexed with %d", t->name, t->ndim, t->ndim == 1 ? "" : "s", n);
    memset(out, 0, sizeof *out);
    out->tok = name;
    return set_expr(p, out, ir_access(t, idx, n), depth + 1, name);
}

static int parse_name(P *p, GenTok *t, Val *out)
{
    memset(out, 0, sizeof *out);
    out->tok = t;
    out->depth = 1;
    IterVar *iv = kg_find_axis(p, t);
    if (iv && p->cexpr)
        return kg_err(p, t, "'%.*s' is an axis, but a constant expression may use only params and literals", t->len, t->s);
    if (iv)
        return set_expr(p, out, ir_varref(iv->var), 1, t);
    Param *pm = kg_find_param(p, t);
    if (pm) {
        out->weak = 'i';
        out->i = pm->value;
        return 0;
    }
    if (kg_is_kw(t, "inf") || kg_is_kw(t, "nan")) {
        out->weak = 'f';
        out->f = kg_is_kw(t, "inf") ? INFINITY : NAN;
        return 0;
    }
    if (kg_is_kw(t, "true") || kg_is_kw(t, "false"))
        return set_expr(p, out, ir_bool(kg_is_kw(t, "true")), 1, t);
    if (kg_find_tensor(p, t) || (p->defining && kg_same_tok(t, p->defining)))
        return kg_err(p, t, "'%.*s' is a tensor; index it as %.*s[...]", t->len, t->s, t->len, t->s);
    if (p->cexpr)
        return kg_err(p, t, "unknown param '%.*s' (a constant expression may use only params and literals)", t->len, t->s);
    return kg_err(p, t, "unknown name '%.*s'", t->len, t->s);
}

static int parse_primary(P *p, Val *out)
{
    GenTok *t = kg_next(p);
    memset(out, 0, sizeof *out);
    out->tok = t;
    out->depth = 1;
    if (t->kind == GT_INT) {
        out->weak = 'i';
        out->i = t->ival;
        return 0;
    }
    if (t->kind == GT_FLOAT) {
        out->weak = 'f';
        out->f = t->fval;
        return 0;
    }
    if (kg_is_p(t, "(")) {
        p->brackets++;
        if (kg_parse_expr(p, out) || kg_close_bracket(p, t, ")"))
            return -1;
        out->tok = t;
        return 0;
    }
    if (t->kind == GT_NAME) {
        GenTok *n = kg_peek(p);
        if (kg_is_p(n, "("))
            return parse_call(p, t, out);
        if (kg_is_p(n, "["))
            return parse_access(p, t, out);
        return parse_name(p, t, out);
    }
    return kg_err(p, t, "expected an expression but found %s", kg_desc(t));
}

/* -v, !v, ~v (and +v, which changes nothing); literals fold. */
static int unary(P *p, const GenTok *op, Val *v)
{
    if (kg_is_p(op, "+"))
        return 0;
    if (kg_is_p(op, "-") && v->weak == 'f') {
        v->f = -v->f;
        return 0;
    }
    if (kg_is_p(op, "-") && v->weak == 'i') {
        if (v->i == INT64_MIN)
            return kg_err(p, op, "integer overflow in constant expression");
        v->i = -v->i;
        return 0;
    }
    if (kg_is_p(op, "~") && v->weak == 'i') {
        v->i = ~v->i;
        return 0;
    }
    Expr *e = ir_unary(kg_is_p(op, "-") ? UN_NEG : kg_is_p(op, "!") ? UN_NOT : UN_BITNOT, kg_val_expr(v));
    if (!e)
        return kg_err_ir(p, op);
    return set_expr(p, v, e, v->depth + 1, op);
}

static int parse_unary(P *p, Val *out)
{
    GenTok *t = kg_peek(p);
    if (nest_in(p, t))
        return -1;
    int rc;
    if (kg_is_p(t, "-") || kg_is_p(t, "!") || kg_is_p(t, "~") || kg_is_p(t, "+")) {
        kg_next(p);
        rc = parse_unary(p, out);
        if (!rc)
            rc = unary(p, t, out);
        out->tok = t;
    } else {
        rc = parse_primary(p, out);
    }
    p->nest--;
    return rc;
}

static const struct {
    const char *text;
    BinOp op;
    int prec;
} binops[] = {
    {"||", OP_OR, 1},  {"&&", OP_AND, 2}, {"|", OP_BITOR, 3}, {"^", OP_BITXOR, 4}, {"&", OP_BITAND, 5},
    {"==", OP_EQ, 6},  {"!=", OP_NE, 6},  {"<", OP_LT, 7},    {"<=", OP_LE, 7},    {">", OP_GT, 7},
    {">=", OP_GE, 7},  {"<<", OP_SHL, 8}, {">>", OP_SHR, 8},  {"+", OP_ADD, 9},    {"-", OP_SUB, 9},
    {"*", OP_MUL, 10}, {"/", OP_DIV, 10}, {"%", OP_MOD, 10},
};

/* Precedence climbing over C's binary operator levels. */
static int parse_binary(P *p, int min_prec, Val *out)
{
    if (parse_unary(p, out))
        return -1;
    for (;;) {
        GenTok *t = kg_peek(p);
        int k = -1;
        for (int i = 0; t->kind == GT_PUNCT && i < (int)(sizeof binops / sizeof *binops); i++)
            if (kg_is_p(t, binops[i].text))
                k = i;
        if (k < 0 || binops[k].prec < min_prec)
            return 0;
        kg_next(p);
        Val rhs;
        if (nest_in(p, t))
            return -1;
        int rc = parse_binary(p, binops[k].prec + 1, &rhs);
        p->nest--;
        if (rc)
            return -1;
        GenTok *start = out->tok;
        if (binop(p, binops[k].op, out, &rhs, t))
            return -1;
        out->tok = start;
    }
}

int kg_parse_expr(P *p, Val *out)
{
    if (parse_binary(p, 1, out))
        return -1;
    GenTok *q = kg_peek(p);
    if (!kg_is_p(q, "?"))
        return 0;
    kg_next(p);
    if (nest_in(p, q))
        return -1;
    Val t, f;
    int rc = kg_parse_expr(p, &t);
    if (!rc)
        rc = kg_expect(p, ":");
    if (!rc)
        rc = kg_parse_expr(p, &f);
    p->nest--;
    if (rc)
        return -1;
    GenTok *start = out->tok;
    if (make_select(p, out, out, &t, &f, q, "'?:'"))
        return -1;
    out->tok = start;
    return 0;
}
