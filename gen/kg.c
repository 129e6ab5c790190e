/* kg.c - the .kg frontend: parses a tensor-expression source into a Program through the
 * ir_* constructors, creates its Schedule and applies the target's `schedule` section.
 *
 * requires: a current arena (everything that outlives the call lives there);
 * gives: a verified Program, its Schedule, or -1 with "path:line:col: error: ...".
 *
 * Literals are weakly typed: a literal (or an expression of literals and params, folded
 * here with overflow checks) takes the type of the other operand; alone it defaults to i32
 * or f32 (i64 or f64 when too large). The language reference is docs/kg-language.md. */
#include "gen.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define KG_MAX_NEST 200          /* nested parentheses, brackets, calls, unary operators */
#define KG_MAX_EXPR_DEPTH 1000   /* operations from an expression's root to its deepest leaf */
#define KG_MAX_SCOPE 256         /* axes in scope at once */
#define KG_MAX_REDUCE_AXES 16    /* axes of one reduction */
#define KG_MAX_CALL_ARGS 16      /* arguments parsed for one call */
#define KG_MAX_PARAMS 10000
#define KG_MAX_TENSORS 10000
#define KG_MAX_SECTIONS 64
#define KG_MAX_SCHED_STMTS 10000 /* statements in one schedule section */
#define KG_MAX_SCHED_ARGS 64     /* arguments of one schedule statement */
#define KG_MAX_LHS 4             /* names on the left of a schedule statement (tile) */
#define KG_MAX_ELEMS GEN_MAX_ELEMS /* elements of a tensor and extent of an axis: DT_INDEX is i32 */
#define KG_MAX_LOOPS 64          /* loops of one stage (schedule.c's MAX_LEAF) */

static const char *const reserved[] = {"kernel", "param", "input", "output", "scan", "schedule",
                                       "init",   "update", "inf",  "nan",    "true", "false"};

/* ---------------------------------------------------------------- parser state */

typedef struct {
    const char *name;
    int64_t value;
    GenTok *tok;
} Param;

typedef struct {
    char kind;          /* the signature letter it was parsed for (see prims[]) */
    GenTok *tok;        /* its first token */
    const char *name;   /* names, scopes and dotted bind tags */
    int64_t value;      /* constants */
} SArg;

typedef struct {
    int prim;              /* index into prims[] */
    int first, last;       /* token range of the whole statement */
    GenTok *prim_tok;
    GenTok *lhs[KG_MAX_LHS];
    int nlhs;
    SArg *args;
    int nargs;
} SStmt;

typedef struct {
    GenTok *name;
    PtrVec stmts;          /* SStmt* */
} Section;

typedef struct {
    const char *path, *text;
    GenTok *toks;
    int ntok, pos;
    GenTok *last;          /* the last token consumed */
    int brackets;          /* open ( and [: line ends inside them are skipped */
    int nest;              /* recursion depth of the expression parser */
    Define *defs;
    int ndefs;
    Program *prog;
    PtrVec params;         /* Param* */
    PtrVec tunables;       /* GenTunable*: `tune` lines */
    PtrVec sections;       /* Section* */
    const char *kernel_name;
    GenTok *kernel_tok;
    /* the expression being parsed */
    IterVar *scope[KG_MAX_SCOPE];
    int nscope;
    int cexpr;             /* a constant expression: only params and literals */
    GenTok *defining;      /* the tensor being defined (it may not read itself) */
    int in_scan_init;
    Tensor *scan;          /* the scan whose update is being parsed: it may read itself */
    Var *scan_time;
} P;

/* A parsed value: an expression, or a weak literal that takes the other operand's type. */
typedef struct {
    Expr *e;       /* NULL while weak */
    char weak;     /* 0, 'i' (i) or 'f' (f) */
    int64_t i;
    double f;
    int depth;     /* tree depth, bounded so later recursive passes cannot overflow the stack */
    GenTok *tok;   /* where it starts */
} Val;

/* ---------------------------------------------------------------- errors and tokens */

static int err(P *p, const GenTok *t, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gen_src_error(p->path, p->text, t->line, t->col, "%s", msg);
}

/* An ir_* or sch_* call failed: put the position in front of its message. */
static int err_ir(P *p, const GenTok *t) { return err(p, t, "%s", ir_errmsg()); }

static int teq(const GenTok *t, const char *s)
{
    return (t->kind == GT_NAME || t->kind == GT_PUNCT) && (size_t)t->len == strlen(s) &&
           !memcmp(t->s, s, (size_t)t->len);
}

static int is_p(const GenTok *t, const char *s) { return t->kind == GT_PUNCT && teq(t, s); }
static int is_kw(const GenTok *t, const char *s) { return t->kind == GT_NAME && teq(t, s); }

static int same_tok(const GenTok *a, const GenTok *b)
{
    return a->len == b->len && !memcmp(a->s, b->s, (size_t)a->len);
}

static char *tokstr(const GenTok *t)
{
    char *s = ir_alloc((size_t)t->len + 1);
    memcpy(s, t->s, (size_t)t->len);
    return s;
}

/* "end of line", "'foo'": how a token is named in "expected X but found Y". */
static const char *desc(const GenTok *t)
{
    if (t->kind == GT_EOF)
        return "end of file";
    if (t->kind == GT_NEWLINE)
        return "end of line";
    return ir_fmt("'%.*s'", t->len, t->s);
}

static GenTok *peek(P *p)
{
    if (p->brackets > 0)
        while (p->toks[p->pos].kind == GT_NEWLINE)
            p->pos++;
    return &p->toks[p->pos];
}

/* The token after peek(). */
static GenTok *peek2(P *p)
{
    int i = (int)(peek(p) - p->toks);
    if (p->toks[i].kind == GT_EOF)
        return &p->toks[i];
    i++;
    if (p->brackets > 0)
        while (p->toks[i].kind == GT_NEWLINE)
            i++;
    return &p->toks[i];
}

static GenTok *next(P *p)
{
    GenTok *t = peek(p);
    if (t->kind != GT_EOF)
        p->pos++;
    p->last = t;
    return t;
}

static int accept(P *p, const char *s)
{
    if (!is_p(peek(p), s))
        return 0;
    next(p);
    return 1;
}

static int expect(P *p, const char *s)
{
    if (accept(p, s))
        return 0;
    return err(p, peek(p), "expected '%s' but found %s", s, desc(peek(p)));
}

/* The list opened at `open` does not go on with ',' or close with `closer`. When the
 * offending token is on a later line, the bracket was most likely never closed. */
static int close_err(P *p, const GenTok *open, const char *closer)
{
    GenTok *t = peek(p);
    if (p->last && t->line != p->last->line)
        return err(p, open, "'%.*s' is not closed: expected '%s' but found %s on line %d", open->len, open->s,
                   closer, desc(t), t->line);
    return err(p, t, "expected '%s' but found %s", closer, desc(t));
}

static int close_bracket(P *p, const GenTok *open, const char *closer)
{
    if (!is_p(peek(p), closer))
        return close_err(p, open, closer);
    next(p);
    p->brackets--;
    return 0;
}

static int end_of_stmt(P *p)
{
    GenTok *t = peek(p);
    if (t->kind == GT_NEWLINE) {
        next(p);
        return 0;
    }
    if (t->kind == GT_EOF)
        return 0;
    return err(p, t, "expected end of line but found %s", desc(t));
}

/* ---------------------------------------------------------------- names */

static Param *find_param(P *p, const GenTok *t)
{
    for (int i = 0; i < p->params.n; i++) {
        Param *pm = p->params.items[i];
        if (teq(t, pm->name))
            return pm;
    }
    return NULL;
}

static Tensor *find_tensor(P *p, const GenTok *t)
{
    for (int i = 0; i < p->prog->tensors.n; i++) {
        Tensor *x = p->prog->tensors.items[i];
        if (teq(t, x->name))
            return x;
    }
    return NULL;
}

static IterVar *find_axis(P *p, const GenTok *t)
{
    for (int i = p->nscope - 1; i >= 0; i--)
        if (teq(t, p->scope[i]->var->name))
            return p->scope[i];
    return NULL;
}

static int check_reserved(P *p, const GenTok *t)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (is_kw(t, reserved[i]))
            return err(p, t, "'%s' is a reserved word; choose another name", reserved[i]);
    return 0;
}

/* A new tensor or param name (is_param) must be fresh among params and tensors. */
static int check_new_name(P *p, const GenTok *t, int is_param)
{
    if (t->kind != GT_NAME)
        return err(p, t, "expected a %s name but found %s", is_param ? "param" : "tensor", desc(t));
    if (check_reserved(p, t))
        return -1;
    Param *pm = find_param(p, t);
    if (pm)
        return err(p, t, is_param ? "param '%.*s' defined twice (first at line %d)"
                                  : "'%.*s' is already a param (line %d)",
                   t->len, t->s, pm->tok->line);
    Tensor *x = find_tensor(p, t);
    if (x)
        return err(p, t, is_param ? "'%.*s' is already a tensor (line %d)"
                                  : "tensor '%.*s' defined twice (first at line %d)",
                   t->len, t->s, x->pos.line);
    return 0;
}

/* A new axis name: not reserved, not a param, not an axis already in scope. */
static int check_new_axis(P *p, const GenTok *t)
{
    if (t->kind != GT_NAME)
        return err(p, t, "expected an axis name but found %s", desc(t));
    if (check_reserved(p, t))
        return -1;
    if (find_param(p, t))
        return err(p, t, "axis '%.*s' has the name of a param", t->len, t->s);
    if (find_axis(p, t))
        return err(p, t, "axis '%.*s' is already defined here", t->len, t->s);
    return 0;
}

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
static Expr *lit_as(P *p, const Val *v, DType t, const GenTok *at, const char *what)
{
    if (v->weak == 'f' && !ir_dtype_is_float(t)) {
        err(p, at, "type mismatch in '%s': %s and the float literal %g (cast the %s side, e.g. f32(...))", what,
            ir_dtype_name(t), v->f, ir_dtype_name(t));
        return NULL;
    }
    if (ir_dtype_is_float(t)) {
        double f = v->weak == 'f' ? v->f : (double)v->i;
        if (isfinite(f) && fabs(f) > ir_dtype_float_max(t)) {
            err(p, at, "%s literal %g does not fit in %s (in '%s')", v->weak == 'f' ? "float" : "integer", f,
                ir_dtype_name(t), what);
            return NULL;
        }
        return ir_float(f, t);
    }
    if (!int_fits(v->i, t)) {
        err(p, at, "integer literal %lld does not fit in %s (in '%s')", (long long)v->i, ir_dtype_name(t), what);
        return NULL;
    }
    return ir_int(v->i, t);
}

/* A value as an expression: weak literals get their default type. */
static Expr *val_expr(const Val *v)
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
        return err(p, at, "expression too deep (more than %d nested operations); split it into several computes",
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
        *x = lit_as(p, a, DT_F32, at, what);
        *y = lit_as(p, b, DT_F32, at, what);
    } else if (a->weak && b->weak) {
        *x = val_expr(a);
        *y = val_expr(b);
    } else if (a->weak) {
        *y = b->e;
        *x = lit_as(p, a, b->e->dtype, at, what);
    } else if (b->weak) {
        *x = a->e;
        *y = lit_as(p, b, a->e->dtype, at, what);
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
            return err(p, at, "division by zero in constant expression");
        if (a == INT64_MIN && b == -1)
            break;
        *r = op == OP_DIV ? a / b : a % b;
        return 0;
    case OP_MIN: *r = a < b ? a : b; return 0;
    case OP_MAX: *r = a > b ? a : b; return 0;
    case OP_SHL:
        if (b < 0 || b > 62)
            return err(p, at, "shift count %lld out of range in constant expression", (long long)b);
        if (mul_overflows(a, (int64_t)1 << b))
            break;
        *r = a * ((int64_t)1 << b);
        return 0;
    case OP_SHR:
        if (b < 0 || b > 63)
            return err(p, at, "shift count %lld out of range in constant expression", (long long)b);
        *r = a >= 0 ? a >> b : ~(~a >> b);
        return 0;
    case OP_BITAND: *r = a & b; return 0;
    case OP_BITOR: *r = a | b; return 0;
    case OP_BITXOR: *r = a ^ b; return 0;
    default: return 1;
    }
    return err(p, at, "integer overflow in constant expression");
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
        return err_ir(p, at);
    return set_expr(p, a, e, 1 + (a->depth > b->depth ? a->depth : b->depth), at);
}

/* c ? t : f, select(c, t, f) and where(c, t, f); out may alias cond. */
static int make_select(P *p, Val *out, const Val *cond, const Val *t, const Val *f, const GenTok *at,
                       const char *what)
{
    Expr *c = val_expr(cond);
    if (c->dtype != DT_BOOL)
        return err(p, cond->tok, "the condition of %s must be bool, got %s", what, ir_dtype_name(c->dtype));
    Expr *x, *y;
    if (unify(p, t, f, at, what, &x, &y))
        return -1;
    if (x->dtype != y->dtype)
        return err(p, at, "the two sides of %s have different types: %s and %s", what, ir_dtype_name(x->dtype),
                   ir_dtype_name(y->dtype));
    int d = cond->depth;
    d = t->depth > d ? t->depth : d;
    d = f->depth > d ? f->depth : d;
    return set_expr(p, out, ir_select(c, x, y), d + 1, at);
}

/* ---------------------------------------------------------------- expressions */

static int parse_expr(P *p, Val *out);

static int nest_in(P *p, const GenTok *at)
{
    if (++p->nest > KG_MAX_NEST)
        return err(p, at, "expression nested too deeply (the limit is %d levels)", KG_MAX_NEST);
    return 0;
}

/* A constant expression over params and literals, e.g. an extent or a split factor. */
static int parse_const(P *p, int64_t *v)
{
    GenTok *t = peek(p);
    int save = p->cexpr;
    p->cexpr = 1;
    Val x;
    int rc = parse_expr(p, &x);
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
    return err(p, t, "expected an integer constant expression (params and literals)%s",
               x.weak == 'f' ? ", got a float" : "");
}

static int parse_extent(P *p, const GenTok *axis, int64_t *v)
{
    GenTok *t = peek(p);
    if (parse_const(p, v))
        return -1;
    if (*v < 1)
        return err(p, t, "the extent of '%.*s' must be >= 1, got %lld", axis->len, axis->s, (long long)*v);
    if (*v > KG_MAX_ELEMS)
        return err(p, t, "the extent of '%.*s' is too large (%lld; indices are 32-bit)", axis->len, axis->s,
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
        if (is_p(t, "(") || is_p(t, "[") || is_p(t, "{"))
            depth++;
        else if (is_p(t, ")") || is_p(t, "]") || is_p(t, "}")) {
            if (depth-- == 0)
                return 0;
        } else if (depth == 0 && is_p(t, "?"))
            pending++;
        else if (depth == 0 && is_p(t, ":")) {
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
        return err(p, name, "a constant expression may not contain a reduction");
    IterVar *axes[KG_MAX_REDUCE_AXES];
    int n = 0;
    for (;;) {
        GenTok *an = next(p);
        if (an->kind != GT_NAME)
            return err(p, an, "expected a reduction axis name (as in %.*s(k < K: body)) but found %s", name->len,
                       name->s, desc(an));
        if (check_new_axis(p, an))
            return -1;
        for (int k = 0; k < n; k++)
            if (teq(an, axes[k]->var->name))
                return err(p, an, "reduction axis '%.*s' defined twice", an->len, an->s);
        if (expect(p, "<"))
            return -1;
        int64_t ext;
        if (parse_extent(p, an, &ext))
            return -1;
        if (n == KG_MAX_REDUCE_AXES)
            return err(p, an, "too many reduction axes (the limit is %d)", KG_MAX_REDUCE_AXES);
        axes[n++] = ir_itervar_new(tokstr(an), ext, IV_REDUCE);
        if (accept(p, ","))
            continue;
        if (accept(p, ":"))
            break;
        return err(p, peek(p), "expected ',' or ':' after a reduction axis but found %s", desc(peek(p)));
    }
    if (p->nscope + n > KG_MAX_SCOPE)
        return err(p, name, "too many axes in scope (the limit is %d)", KG_MAX_SCOPE);
    int scope0 = p->nscope;
    for (int k = 0; k < n; k++)
        p->scope[p->nscope++] = axes[k];
    Val body;
    int rc = parse_expr(p, &body);
    p->nscope = scope0;
    if (rc || close_bracket(p, open, ")"))
        return -1;
    Expr *b = val_expr(&body);
    out->tok = name;
    return set_expr(p, out, ir_reduce(op, b, axes, n), body.depth + 1, name);
}

/* Arguments after '(' up to and including ')'. */
static int parse_args(P *p, const GenTok *name, const GenTok *open, Val *args, int *n)
{
    *n = 0;
    if (is_p(peek(p), ")"))
        return close_bracket(p, open, ")");
    for (;;) {
        if (*n == KG_MAX_CALL_ARGS)
            return err(p, peek(p), "too many arguments to %.*s()", name->len, name->s);
        if (parse_expr(p, &args[(*n)++]))
            return -1;
        if (accept(p, ","))
            continue;
        return close_bracket(p, open, ")");
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
            return err(p, name, "cannot convert %g to %s", a->f, ir_dtype_name(t));
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
    GenTok *open = next(p);
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
        if (find_tensor(p, name))
            return err(p, name, "'%s' is a tensor; index it with [...]", fname);
        return err(p, name, "unknown function '%s'", fname);
    }
    Val args[KG_MAX_CALL_ARGS];
    int n;
    if (parse_args(p, name, open, args, &n))
        return -1;
    if (is_cast) {
        if (n != 1)
            return err(p, name, "%s() takes 1 argument, got %d", fname, n);
        return make_cast(p, dt, name, &args[0], out);
    }
    if (is_sel) {
        if (n != 3)
            return err(p, name, "%s() takes 3 arguments (condition, then, else), got %d", fname, n);
        return make_select(p, out, &args[0], &args[1], &args[2], name, fname);
    }
    if (is_min || is_max) {
        if (n < 2)
            return err(p, name, "%s() takes 2 or more arguments, or a reduction: %s(k < K: body)", fname, fname);
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
        ex[k] = args[k].weak ? lit_as(p, &args[k], t, args[k].tok, fname) : args[k].e;
        if (!ex[k])
            return -1;
    }
    Expr *e = ir_mathcall(fn, ex, n);
    if (!e)
        return err_ir(p, name);
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
    Expr *e = val_expr(v);
    if (ir_dtype_is_float(e->dtype) || e->dtype == DT_BOOL) {
        err(p, v->tok, "index %d of '%s' must be an integer, got %s", dim, t->name, ir_dtype_name(e->dtype));
        return NULL;
    }
    int64_t coef, c;
    if (t == p->scan && dim == 0 && (!time_offset(e, p->scan_time, &coef, &c) || coef != 1 || c > -1)) {
        err(p, v->tok, "scan update may read '%s' only at earlier time steps (%s[%s - c, ...] with a constant c >= 1)",
            t->name, t->name, p->scan_time->name);
        return NULL;
    }
    return e->dtype == DT_INDEX ? e : ir_cast(DT_INDEX, e);
}

/* name '[' idx, ... ']' */
static int parse_access(P *p, GenTok *name, Val *out)
{
    if (p->cexpr)
        return err(p, name, "a constant expression may not read tensors (only params and literals)");
    Tensor *t = NULL;
    if (p->scan && teq(name, p->scan->name))
        t = p->scan;
    else if (p->defining && same_tok(name, p->defining))
        return err(p, name,
                   p->in_scan_init ? "scan init may not read '%.*s'"
                                   : "'%.*s' cannot read itself (use a scan for recurrences)",
                   name->len, name->s);
    else
        t = find_tensor(p, name);
    if (!t) {
        if (find_param(p, name))
            return err(p, name, "'%.*s' is a param, not a tensor", name->len, name->s);
        if (find_axis(p, name))
            return err(p, name, "'%.*s' is an axis, not a tensor", name->len, name->s);
        return err(p, name, "unknown tensor '%.*s'", name->len, name->s);
    }
    GenTok *open = next(p);
    p->brackets++;
    Expr *idx[KG_MAX_DIMS];
    int n = 0, depth = 0;
    for (;;) {
        Val v;
        if (parse_expr(p, &v))
            return -1;
        if (n < t->ndim) {
            if (!(idx[n] = index_expr(p, &v, t, n)))
                return -1;
        }
        depth = v.depth > depth ? v.depth : depth;
        n++;
        if (accept(p, ","))
            continue;
        if (close_bracket(p, open, "]"))
            return -1;
        break;
    }
    if (n != t->ndim)
        return err(p, name, "'%s' has %d dimension%s, indexed with %d", t->name, t->ndim, t->ndim == 1 ? "" : "s", n);
    memset(out, 0, sizeof *out);
    out->tok = name;
    return set_expr(p, out, ir_access(t, idx, n), depth + 1, name);
}

static int parse_name(P *p, GenTok *t, Val *out)
{
    memset(out, 0, sizeof *out);
    out->tok = t;
    out->depth = 1;
    IterVar *iv = find_axis(p, t);
    if (iv && p->cexpr)
        return err(p, t, "'%.*s' is an axis, but a constant expression may use only params and literals", t->len, t->s);
    if (iv)
        return set_expr(p, out, ir_varref(iv->var), 1, t);
    Param *pm = find_param(p, t);
    if (pm) {
        out->weak = 'i';
        out->i = pm->value;
        return 0;
    }
    if (is_kw(t, "inf") || is_kw(t, "nan")) {
        out->weak = 'f';
        out->f = is_kw(t, "inf") ? INFINITY : NAN;
        return 0;
    }
    if (is_kw(t, "true") || is_kw(t, "false"))
        return set_expr(p, out, ir_bool(is_kw(t, "true")), 1, t);
    if (find_tensor(p, t) || (p->defining && same_tok(t, p->defining)))
        return err(p, t, "'%.*s' is a tensor; index it as %.*s[...]", t->len, t->s, t->len, t->s);
    if (p->cexpr)
        return err(p, t, "unknown param '%.*s' (a constant expression may use only params and literals)", t->len, t->s);
    return err(p, t, "unknown name '%.*s'", t->len, t->s);
}

static int parse_primary(P *p, Val *out)
{
    GenTok *t = next(p);
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
    if (is_p(t, "(")) {
        p->brackets++;
        if (parse_expr(p, out) || close_bracket(p, t, ")"))
            return -1;
        out->tok = t;
        return 0;
    }
    if (t->kind == GT_NAME) {
        GenTok *n = peek(p);
        if (is_p(n, "("))
            return parse_call(p, t, out);
        if (is_p(n, "["))
            return parse_access(p, t, out);
        return parse_name(p, t, out);
    }
    return err(p, t, "expected an expression but found %s", desc(t));
}

/* -v, !v, ~v (and +v, which changes nothing); literals fold. */
static int unary(P *p, const GenTok *op, Val *v)
{
    if (is_p(op, "+"))
        return 0;
    if (is_p(op, "-") && v->weak == 'f') {
        v->f = -v->f;
        return 0;
    }
    if (is_p(op, "-") && v->weak == 'i') {
        if (v->i == INT64_MIN)
            return err(p, op, "integer overflow in constant expression");
        v->i = -v->i;
        return 0;
    }
    if (is_p(op, "~") && v->weak == 'i') {
        v->i = ~v->i;
        return 0;
    }
    Expr *e = ir_unary(is_p(op, "-") ? UN_NEG : is_p(op, "!") ? UN_NOT : UN_BITNOT, val_expr(v));
    if (!e)
        return err_ir(p, op);
    return set_expr(p, v, e, v->depth + 1, op);
}

static int parse_unary(P *p, Val *out)
{
    GenTok *t = peek(p);
    if (nest_in(p, t))
        return -1;
    int rc;
    if (is_p(t, "-") || is_p(t, "!") || is_p(t, "~") || is_p(t, "+")) {
        next(p);
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
        GenTok *t = peek(p);
        int k = -1;
        for (int i = 0; t->kind == GT_PUNCT && i < (int)(sizeof binops / sizeof *binops); i++)
            if (is_p(t, binops[i].text))
                k = i;
        if (k < 0 || binops[k].prec < min_prec)
            return 0;
        next(p);
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

static int parse_expr(P *p, Val *out)
{
    if (parse_binary(p, 1, out))
        return -1;
    GenTok *q = peek(p);
    if (!is_p(q, "?"))
        return 0;
    next(p);
    if (nest_in(p, q))
        return -1;
    Val t, f;
    int rc = parse_expr(p, &t);
    if (!rc)
        rc = expect(p, ":");
    if (!rc)
        rc = parse_expr(p, &f);
    p->nest--;
    if (rc)
        return -1;
    GenTok *start = out->tok;
    if (make_select(p, out, out, &t, &f, q, "'?:'"))
        return -1;
    out->tok = start;
    return 0;
}

/* ---------------------------------------------------------------- statements */

static int add_tensor(P *p, Tensor *t, const GenTok *name, int is_output)
{
    if (p->prog->tensors.n >= KG_MAX_TENSORS)
        return err(p, name, "too many tensors (the limit is %d)", KG_MAX_TENSORS);
    t->is_output = is_output;
    t->pos = (SrcPos){p->path, name->line, name->col};
    if (ir_program_add(p->prog, t))
        return err_ir(p, name);
    return 0;
}

/* '[' i < N, ... ']' after a compute's or scan's name: its axes. */
static int parse_axes(P *p, const GenTok *name, IterVar **axes, int *n)
{
    GenTok *open = next(p);
    if (!is_p(open, "["))
        return err(p, open, "expected '[' and the axes after '%.*s', e.g. %.*s[i < N] = ..., but found %s", name->len,
                   name->s, name->len, name->s, desc(open));
    p->brackets++;
    *n = 0;
    int64_t numel = 1;
    for (;;) {
        GenTok *an = next(p);
        if (check_new_axis(p, an))
            return -1;
        for (int k = 0; k < *n; k++)
            if (teq(an, axes[k]->var->name))
                return err(p, an, "axis '%.*s' defined twice", an->len, an->s);
        if (!is_p(peek(p), "<"))
            return err(p, peek(p), "expected '<' and the extent after axis '%.*s' but found %s", an->len, an->s,
                       desc(peek(p)));
        next(p);
        int64_t ext;
        if (parse_extent(p, an, &ext))
            return -1;
        if (*n == KG_MAX_DIMS)
            return err(p, an, "too many dimensions (the limit is %d)", KG_MAX_DIMS);
        axes[(*n)++] = ir_itervar_new(tokstr(an), ext, IV_SPATIAL);
        numel = numel > KG_MAX_ELEMS / ext ? (int64_t)KG_MAX_ELEMS + 1 : numel * ext;
        if (accept(p, ","))
            continue;
        if (close_bracket(p, open, "]"))
            return -1;
        break;
    }
    if (numel > KG_MAX_ELEMS)
        return err(p, name, "'%.*s' is too large: more than %lld elements (indices are 32-bit)", name->len, name->s,
                   (long long)KG_MAX_ELEMS);
    return 0;
}

static void enter_body(P *p, GenTok *name, IterVar **axes, int n)
{
    p->nscope = 0;
    for (int k = 0; k < n; k++)
        p->scope[p->nscope++] = axes[k];
    p->defining = name;
}

static void leave_body(P *p)
{
    p->nscope = 0;
    p->defining = NULL;
    p->in_scan_init = 0;
    p->scan = NULL;
    p->scan_time = NULL;
}

static int parse_dtype(P *p, DType *dt)
{
    GenTok *d = next(p);
    char buf[GEN_MAX_NAME + 1];
    snprintf(buf, sizeof buf, "%.*s", d->len, d->s);
    if (d->kind != GT_NAME || ir_dtype_parse(buf, dt))
        return err(p, d, "expected a dtype (bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64) "
                         "but found %s", desc(d));
    return 0;
}

/* name[i < N, ...] = expr */
static int parse_compute(P *p, int is_output)
{
    GenTok *name = next(p);
    if (check_new_name(p, name, 0))
        return -1;
    IterVar *axes[KG_MAX_DIMS];
    int n;
    if (parse_axes(p, name, axes, &n))
        return -1;
    if (!is_p(peek(p), "="))
        return err(p, peek(p), "expected '=' and the compute's expression but found %s", desc(peek(p)));
    next(p);
    enter_body(p, name, axes, n);
    Val body;
    int rc = parse_expr(p, &body);
    leave_body(p);
    if (rc)
        return -1;
    Tensor *t = ir_compute(tokstr(name), n, axes, val_expr(&body));
    if (!t)
        return err_ir(p, name);
    return add_tensor(p, t, name, is_output);
}

/* scan h[t < T, i < N] [: dtype] NEWLINE init[(steps)] = expr NEWLINE update = expr */
static int parse_scan(P *p, int is_output)
{
    GenTok *kw = next(p);
    GenTok *name = next(p);
    if (check_new_name(p, name, 0))
        return -1;
    IterVar *axes[KG_MAX_DIMS];
    int n;
    if (parse_axes(p, name, axes, &n))
        return -1;
    DType dt = DT_F32;
    int has_dt = 0;
    if (accept(p, ":")) {
        if (parse_dtype(p, &dt))
            return -1;
        has_dt = 1;
    }
    if (end_of_stmt(p))
        return -1;

    GenTok *it = next(p);
    if (!is_kw(it, "init"))
        return err(p, it, "expected 'init = ...' on the line after '%.*s %.*s[...]' but found %s", kw->len, kw->s,
                   name->len, name->s, desc(it));
    int64_t steps = 1;
    if (is_p(peek(p), "(")) {
        GenTok *open = next(p);
        p->brackets++;
        GenTok *st = peek(p);
        if (parse_const(p, &steps) || close_bracket(p, open, ")"))
            return -1;
        if (steps < 1 || steps > axes[0]->extent)
            return err(p, st, "init steps must be between 1 and the time extent %lld, got %lld",
                       (long long)axes[0]->extent, (long long)steps);
    }
    if (expect(p, "="))
        return -1;
    enter_body(p, name, axes, n);
    p->in_scan_init = 1;
    Val iv;
    int rc = parse_expr(p, &iv);
    leave_body(p);
    if (rc)
        return -1;
    Expr *init = has_dt && iv.weak ? lit_as(p, &iv, dt, it, "init") : val_expr(&iv);
    if (!init)
        return -1;
    if (has_dt && init->dtype != dt)
        return err(p, iv.tok, "the scan's init has type %s but the scan is %s", ir_dtype_name(init->dtype),
                   ir_dtype_name(dt));
    dt = init->dtype;
    if (end_of_stmt(p))
        return -1;

    GenTok *ut = next(p);
    if (!is_kw(ut, "update"))
        return err(p, ut, "expected 'update = ...' on the line after the scan's init but found %s", desc(ut));
    if (expect(p, "="))
        return -1;
    Tensor *t = ir_scan_begin(tokstr(name), dt, n, axes);
    if (!t)
        return err_ir(p, name);
    enter_body(p, name, axes, n);
    p->scan = t;
    p->scan_time = axes[0]->var;
    Val uv;
    rc = parse_expr(p, &uv);
    leave_body(p);
    if (rc)
        return -1;
    Expr *update = uv.weak ? lit_as(p, &uv, dt, ut, "update") : uv.e;
    if (!update)
        return -1;
    if (update->dtype != dt)
        return err(p, uv.tok, "the scan's update has type %s but its init has type %s", ir_dtype_name(update->dtype),
                   ir_dtype_name(dt));
    if (ir_scan_finish(t, steps, init, update))
        return err_ir(p, name);
    return add_tensor(p, t, name, is_output);
}

static int parse_param(P *p)
{
    next(p);
    GenTok *name = next(p);
    if (check_new_name(p, name, 1))
        return -1;
    if (expect(p, "="))
        return -1;
    int64_t v;
    if (parse_const(p, &v))
        return -1;
    for (int i = 0; i < p->ndefs; i++)
        if (p->defs[i].name && teq(name, p->defs[i].name)) {
            v = p->defs[i].value;   /* the last -D wins */
            p->defs[i].used = 1;
        }
    if (p->params.n >= KG_MAX_PARAMS)
        return err(p, name, "too many params (the limit is %d)", KG_MAX_PARAMS);
    Param *pm = ir_alloc(sizeof *pm);
    pm->name = tokstr(name);
    pm->value = v;
    pm->tok = name;
    ir_vec_push(&p->params, pm, KG_MAX_PARAMS, "params");
    return 0;
}

/* tune NB in {16, 32, 64}: values `kgen tune` may give the param NB */
static int parse_tune(P *p)
{
    next(p);
    GenTok *name = next(p);
    Param *pm = find_param(p, name);
    if (!pm)
        return err(p, name, "'tune' needs a param declared above it, not %s", desc(name));
    GenTok *in = next(p);
    if (in->kind != GT_NAME || !is_kw(in, "in"))
        return err(p, in, "expected 'in' and the values, e.g. tune %.*s in {16, 32}, but found %s", name->len,
                   name->s, desc(in));
    if (expect(p, "{"))
        return -1;
    GenTunable *tu = ir_alloc(sizeof *tu);
    tu->name = tokstr(name);
    tu->value = pm->value;
    for (;;) {
        if (tu->n == GEN_MAX_TUNE_VALUES)
            return err(p, peek(p), "too many values to tune (the limit is %d)", GEN_MAX_TUNE_VALUES);
        if (parse_const(p, &tu->values[tu->n++]))
            return -1;
        if (!is_p(peek(p), ","))
            break;
        next(p);
    }
    if (expect(p, "}"))
        return -1;
    ir_vec_push(&p->tunables, tu, KG_MAX_PARAMS, "tune lines");
    return 0;
}

/* input A : f32[M, K] */
static int parse_input(P *p)
{
    next(p);
    GenTok *name = next(p);
    if (check_new_name(p, name, 0))
        return -1;
    if (!is_p(peek(p), ":"))
        return err(p, peek(p), "expected ':' and the input's type, e.g. %.*s : f32[N], but found %s", name->len,
                   name->s, desc(peek(p)));
    next(p);
    DType dt;
    if (parse_dtype(p, &dt))
        return -1;
    GenTok *open = next(p);
    if (!is_p(open, "["))
        return err(p, open, "expected '[' and the shape after the dtype, e.g. %s[M, N], but found %s",
                   ir_dtype_name(dt), desc(open));
    p->brackets++;
    int64_t shape[KG_MAX_DIMS], numel = 1;
    int n = 0;
    for (;;) {
        GenTok *t = peek(p);
        int64_t v;
        if (parse_const(p, &v))
            return -1;
        if (v < 1 || v > KG_MAX_ELEMS)
            return err(p, t, "dimension %d of '%.*s' must be between 1 and %lld, got %lld", n, name->len, name->s,
                       (long long)KG_MAX_ELEMS, (long long)v);
        if (n == KG_MAX_DIMS)
            return err(p, t, "too many dimensions (the limit is %d)", KG_MAX_DIMS);
        shape[n++] = v;
        numel = numel > KG_MAX_ELEMS / v ? (int64_t)KG_MAX_ELEMS + 1 : numel * v;
        if (accept(p, ","))
            continue;
        if (close_bracket(p, open, "]"))
            return -1;
        break;
    }
    if (numel > KG_MAX_ELEMS)
        return err(p, name, "'%.*s' is too large: more than %lld elements (indices are 32-bit)", name->len, name->s,
                   (long long)KG_MAX_ELEMS);
    Tensor *t = ir_placeholder(tokstr(name), dt, n, shape);
    if (!t)
        return err_ir(p, name);
    return add_tensor(p, t, name, 0);
}

/* output X (mark), output X[...] = ..., output scan ... */
static int parse_output(P *p)
{
    GenTok *kw = next(p);
    GenTok *name = peek(p);
    if (is_kw(name, "scan"))
        return parse_scan(p, 1);
    if (name->kind != GT_NAME)
        return err(p, name, "expected a tensor name after '%.*s' but found %s", kw->len, kw->s, desc(name));
    if (is_p(peek2(p), "["))
        return parse_compute(p, 1);
    next(p);
    Tensor *t = find_tensor(p, name);
    if (!t)
        return err(p, name, "unknown tensor '%.*s'", name->len, name->s);
    if (t->kind == T_PLACEHOLDER)
        return err(p, name, "'%s' is an input; only computed tensors can be outputs", t->name);
    if (t->is_output)
        return err(p, name, "'%s' is already an output", t->name);
    t->is_output = 1;
    return 0;
}

static int parse_kernel(P *p)
{
    next(p);
    GenTok *name = next(p);
    if (name->kind != GT_NAME)
        return err(p, name, "expected the kernel's name after 'kernel' but found %s", desc(name));
    if (p->kernel_tok)
        return err(p, name, "the kernel's name is already set (line %d)", p->kernel_tok->line);
    p->kernel_name = tokstr(name);
    p->kernel_tok = name;
    return 0;
}

/* ---------------------------------------------------------------- schedule sections: parsing */

/* Signature letters: S stage, T tensor, A axis of the first argument's stage, a axis of the
 * second argument's stage, c integer constant, m memory scope, g dotted bind tag, i
 * micro-kernel name; a final '+' repeats the letter before it. */
enum { PR_SPLIT, PR_TILE, PR_FUSE, PR_REORDER, PR_UNROLL, PR_VECTORIZE, PR_PARALLEL, PR_BIND,
       PR_COMPUTE_AT, PR_COMPUTE_INLINE, PR_COMPUTE_ROOT, PR_CACHE_READ, PR_CACHE_WRITE, PR_STORAGE_ALIGN,
       PR_TENSORIZE, PR_PREFETCH };

static const struct {
    const char *name, *sig;
    int nret;
    const char *usage;
} prims[] = {
    [PR_SPLIT] = {"split", "SAc", 2, "xo, xi = split(stage, axis, factor)"},
    [PR_TILE] = {"tile", "SAAcc", 4, "xo, yo, xi, yi = tile(stage, x, y, x_factor, y_factor)"},
    [PR_FUSE] = {"fuse", "SAA+", 1, "f = fuse(stage, outer, inner, ...)"},
    [PR_REORDER] = {"reorder", "SA+", 0, "reorder(stage, axis, ...)"},
    [PR_UNROLL] = {"unroll", "SA", 0, "unroll(stage, axis)"},
    [PR_VECTORIZE] = {"vectorize", "SA", 0, "vectorize(stage, axis)"},
    [PR_PARALLEL] = {"parallel", "SA", 0, "parallel(stage, axis)"},
    [PR_BIND] = {"bind", "SAg", 0, "bind(stage, axis, blockIdx.x)"},
    [PR_COMPUTE_AT] = {"compute_at", "SSa", 0, "compute_at(stage, parent_stage, parent_axis)"},
    [PR_COMPUTE_INLINE] = {"compute_inline", "S", 0, "compute_inline(stage)"},
    [PR_COMPUTE_ROOT] = {"compute_root", "S", 0, "compute_root(stage)"},
    [PR_CACHE_READ] = {"cache_read", "TmS+", 1, "X = cache_read(tensor, scope, reader, ...)"},
    [PR_CACHE_WRITE] = {"cache_write", "Sm", 1, "X = cache_write(stage, scope)"},
    [PR_STORAGE_ALIGN] = {"storage_align", "Sccc", 0, "storage_align(stage, dim, factor, offset)"},
    [PR_TENSORIZE] = {"tensorize", "SAi", 0, "tensorize(stage, axis, fma_bcast)"},
    [PR_PREFETCH] = {"prefetch", "STA+", 0, "prefetch(stage, tensor, reduce_axis[, rows_axis[, blocks_axis]])"},
};
#define NPRIMS ((int)(sizeof prims / sizeof *prims))

static int parse_sarg(P *p, char kind, SArg *a)
{
    GenTok *t = peek(p);
    a->kind = kind;
    a->tok = t;
    if (kind == 'c')
        return parse_const(p, &a->value);
    const char *what = kind == 'S'   ? "a stage name"
                       : kind == 'T' ? "a tensor name"
                       : kind == 'm' ? "a memory scope (local, shared or global)"
                       : kind == 'g' ? "a thread tag such as blockIdx.x"
                       : kind == 'i' ? "a micro-kernel name such as fma_bcast"
                                     : "an axis name";
    if (t->kind != GT_NAME)
        return err(p, t, "expected %s but found %s", what, desc(t));
    next(p);
    a->name = tokstr(t);
    if (kind == 'g') {
        while (is_p(peek(p), ".")) {
            next(p);
            GenTok *part = next(p);
            if (part->kind != GT_NAME)
                return err(p, part, "expected a name after '.' in a thread tag but found %s", desc(part));
            if (strlen(a->name) + (size_t)part->len > GEN_MAX_NAME)
                return err(p, part, "thread tag too long");
            a->name = ir_fmt("%s.%.*s", a->name, part->len, part->s);
        }
    }
    return 0;
}

static int parse_sched_stmt(P *p, SStmt *st)
{
    memset(st, 0, sizeof *st);
    st->first = (int)(peek(p) - p->toks);
    GenTok *t = peek(p);
    if (t->kind == GT_NAME && (is_p(peek2(p), ",") || is_p(peek2(p), "="))) {
        for (;;) {
            GenTok *n = next(p);
            if (n->kind != GT_NAME)
                return err(p, n, "expected a name but found %s", desc(n));
            if (st->nlhs == KG_MAX_LHS)
                return err(p, n, "too many names on the left (at most %d)", KG_MAX_LHS);
            st->lhs[st->nlhs++] = n;
            if (accept(p, ","))
                continue;
            if (accept(p, "="))
                break;
            return err(p, peek(p), "expected ',' or '=' but found %s", desc(peek(p)));
        }
    }
    GenTok *pt = next(p);
    st->prim_tok = pt;
    st->prim = -1;
    for (int i = 0; i < NPRIMS; i++)
        if (is_kw(pt, prims[i].name))
            st->prim = i;
    if (st->prim < 0) {
        if (pt->kind != GT_NAME)
            return err(p, pt, "expected a schedule primitive but found %s", desc(pt));
        return err(p, pt, "unknown schedule primitive '%.*s' (expected split, tile, fuse, reorder, unroll, "
                   "vectorize, parallel, bind, compute_at, compute_inline, compute_root, cache_read, "
                   "cache_write, storage_align, tensorize or prefetch)", pt->len, pt->s);
    }
    const char *sig = prims[st->prim].sig, *pname = prims[st->prim].name, *usage = prims[st->prim].usage;
    int nsig = (int)strlen(sig), rep = sig[nsig - 1] == '+', nfixed = rep ? nsig - 1 : nsig;
    GenTok *open = next(p);
    if (!is_p(open, "("))
        return err(p, open, "expected '(' after '%s' but found %s", pname, desc(open));
    p->brackets++;
    st->args = ir_alloc(sizeof *st->args * KG_MAX_SCHED_ARGS);
    if (!is_p(peek(p), ")")) {
        for (;;) {
            char kind = st->nargs < nfixed ? sig[st->nargs] : rep ? sig[nfixed - 1] : 0;
            if (!kind || st->nargs == KG_MAX_SCHED_ARGS)
                return err(p, peek(p), "too many arguments to %s (usage: %s)", pname, usage);
            if (parse_sarg(p, kind, &st->args[st->nargs]))
                return -1;
            st->nargs++;
            if (accept(p, ","))
                continue;
            break;
        }
    }
    GenTok *close = peek(p);
    if (close_bracket(p, open, ")"))
        return -1;
    if (st->nargs < nfixed)
        return err(p, close, "%s takes %s%d argument%s, got %d (usage: %s)", pname, rep ? "at least " : "", nfixed,
                   nfixed == 1 ? "" : "s", st->nargs, usage);
    int nret = prims[st->prim].nret;
    if (st->nlhs && !nret)
        return err(p, st->lhs[0], "%s returns nothing; remove the names before '='", pname);
    if (st->nlhs != nret)
        return err(p, st->nlhs ? st->lhs[0] : pt, "%s returns %d %s; write: %s", pname, nret,
                   nret == 1 ? "name" : "names", usage);
    st->last = (int)(p->last - p->toks);
    return 0;
}

static Section *find_section(P *p, const GenTok *name)
{
    for (int i = 0; i < p->sections.n; i++) {
        Section *s = p->sections.items[i];
        if (same_tok(name, s->name))
            return s;
    }
    return NULL;
}

/* schedule NAME { statement NEWLINE ... } */
static int parse_schedule(P *p)
{
    next(p);
    GenTok *name = next(p);
    if (name->kind != GT_NAME)
        return err(p, name, "expected a target name after 'schedule' (c, cuda, opencl, metal, wasm, js, ...) "
                   "but found %s", desc(name));
    Section *dup = find_section(p, name);
    if (dup)
        return err(p, name, "schedule section '%.*s' defined twice (first at line %d)", name->len, name->s,
                   dup->name->line);
    if (p->sections.n >= KG_MAX_SECTIONS)
        return err(p, name, "too many schedule sections (the limit is %d)", KG_MAX_SECTIONS);
    while (peek(p)->kind == GT_NEWLINE)
        next(p);
    GenTok *open = next(p);
    if (!is_p(open, "{"))
        return err(p, open, "expected '{' after 'schedule %.*s' but found %s", name->len, name->s, desc(open));
    Section *sec = ir_alloc(sizeof *sec);
    sec->name = name;
    for (;;) {
        GenTok *t = peek(p);
        if (t->kind == GT_NEWLINE) {
            next(p);
            continue;
        }
        if (is_p(t, "}")) {
            next(p);
            break;
        }
        if (t->kind == GT_EOF)
            return err(p, open, "schedule section '%.*s' is not closed: expected '}' but found end of file", name->len,
                       name->s);
        if (sec->stmts.n >= KG_MAX_SCHED_STMTS)
            return err(p, t, "too many statements in one schedule section (the limit is %d)", KG_MAX_SCHED_STMTS);
        SStmt *st = ir_alloc(sizeof *st);
        if (parse_sched_stmt(p, st))
            return -1;
        ir_vec_push(&sec->stmts, st, KG_MAX_SCHED_STMTS, "schedule statements");
        t = peek(p);
        if (t->kind == GT_NEWLINE)
            next(p);
        else if (!is_p(t, "}"))
            return err(p, t, "expected end of line but found %s", desc(t));
    }
    ir_vec_push(&p->sections, sec, KG_MAX_SECTIONS, "schedule sections");
    return 0;
}

/* The statement as written, with each run of blanks (and comments) between tokens as one space. */
static char *stmt_text(P *p, const SStmt *st)
{
    StrBuf b = {0};
    const GenTok *prev = NULL;
    for (int i = st->first; i <= st->last; i++) {
        const GenTok *t = &p->toks[i];
        if (t->kind == GT_NEWLINE)
            continue;
        if (prev && prev->s + prev->len != t->s)
            sb_puts(&b, " ");
        sb_printf(&b, "%.*s", t->len, t->s);
        prev = t;
    }
    char *s = ir_strdup(b.data ? b.data : "");
    sb_free(&b);
    return s;
}

/* ---------------------------------------------------------------- schedule sections: applying */

#define LIST_MAX 24   /* names listed in "unknown ..." messages */

static const char *list_names(const char **names, int n)
{
    StrBuf b = {0};
    for (int i = 0; i < n && i < LIST_MAX; i++)
        sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
    if (n > LIST_MAX)
        sb_printf(&b, ", ... (%d more)", n - LIST_MAX);
    const char *s = ir_strdup(b.data ? b.data : "none");
    sb_free(&b);
    return s;
}

static int unknown_stage(P *p, Schedule *s, const SArg *a)
{
    if (find_param(p, a->tok))
        return err(p, a->tok, "'%s' is a param, not a tensor", a->name);
    const char **names = ir_alloc(sizeof *names * (size_t)(s->stages.n + 1));
    for (int i = 0; i < s->stages.n; i++)
        names[i] = ((Stage *)s->stages.items[i])->t->name;
    return err(p, a->tok, "unknown tensor '%s' (stages: %s)", a->name, list_names(names, s->stages.n));
}

static Stage *stage_arg(P *p, Schedule *s, const SArg *a)
{
    Stage *st = sch_find(s, a->name);
    if (!st)
        unknown_stage(p, s, a);
    return st;
}

static IterVar *axis_arg(P *p, Stage *st, const SArg *a)
{
    IterVar *iv = sch_find_axis(st, a->name);
    if (iv)
        return iv;
    const char **names = ir_alloc(sizeof *names * (size_t)(st->leaf.n + 1));
    for (int i = 0; i < st->leaf.n; i++)
        names[i] = ((IterVar *)st->leaf.items[i])->var->name;
    err(p, a->tok, "unknown axis '%s' in stage %s (axes: %s)", a->name, st->t->name, list_names(names, st->leaf.n));
    return NULL;
}

static int has_axis_name(PtrVec *v, const GenTok *t)
{
    for (int i = 0; i < v->n; i++)
        if (teq(t, ((IterVar *)v->items[i])->var->name))
            return 1;
    return 0;
}

/* The names on the left of split/tile/fuse must be new in the stage and distinct. */
static int check_lhs_axes(P *p, Stage *st, const SStmt *ss)
{
    for (int i = 0; i < ss->nlhs; i++) {
        const GenTok *t = ss->lhs[i];
        for (int k = 0; k < i; k++)
            if (same_tok(t, ss->lhs[k]))
                return err(p, t, "'%.*s' appears twice on the left", t->len, t->s);
        if (has_axis_name(&st->leaf, t) || has_axis_name(&st->root, t))
            return err(p, t, "axis '%.*s' already exists in stage %s", t->len, t->s, st->t->name);
    }
    return 0;
}

static int check_new_stage(P *p, Schedule *s, const GenTok *t)
{
    if (check_reserved(p, t))
        return -1;
    if (find_param(p, t))
        return err(p, t, "'%.*s' is already a param", t->len, t->s);
    if (sch_find(s, tokstr(t)))
        return err(p, t, "'%.*s' already names a stage", t->len, t->s);
    return 0;
}

static void rename_axis(IterVar *iv, const GenTok *t) { iv->var->name = tokstr(t); }

static int scope_arg(P *p, const SArg *a, Scope *sc)
{
    if (sch_parse_scope(a->name, sc))
        return err(p, a->tok, "unknown memory scope '%s' (expected local, shared or global)", a->name);
    return 0;
}

static int apply_stmt(P *p, Schedule *s, const SStmt *ss)
{
    const SArg *a = ss->args;
    GenTok *at = ss->prim_tok;
    Stage *st = NULL, *parent = NULL;
    IterVar *ivs[KG_MAX_SCHED_ARGS] = {0};
    Scope scope = SCOPE_LOCAL;
    int rc = 0;

    if (ss->prim != PR_CACHE_READ && !(st = stage_arg(p, s, &a[0])))
        return -1;
    for (int i = 1; i < ss->nargs; i++)
        if (a[i].kind == 'A' && !(ivs[i] = axis_arg(p, st, &a[i])))
            return -1;
    if ((ss->prim == PR_SPLIT || ss->prim == PR_TILE) && st->leaf.n + ss->nlhs / 2 > KG_MAX_LOOPS)
        return err(p, at, "too many loops in stage %s (the limit is %d)", st->t->name, KG_MAX_LOOPS);
    switch (ss->prim) {
    case PR_SPLIT: {
        IterVar *o, *in;
        if (a[2].value < 1)
            return err(p, a[2].tok, "split factor must be >= 1, got %lld", (long long)a[2].value);
        if (check_lhs_axes(p, st, ss))
            return -1;
        if (sch_split(st, ivs[1], a[2].value, &o, &in))
            return err_ir(p, at);
        rename_axis(o, ss->lhs[0]);
        rename_axis(in, ss->lhs[1]);
        return 0;
    }
    case PR_TILE: {
        IterVar *r[4];
        for (int i = 3; i <= 4; i++)
            if (a[i].value < 1)
                return err(p, a[i].tok, "tile factor must be >= 1, got %lld", (long long)a[i].value);
        if (check_lhs_axes(p, st, ss))
            return -1;
        if (sch_tile(st, ivs[1], ivs[2], a[3].value, a[4].value, &r[0], &r[1], &r[2], &r[3]))
            return err_ir(p, at);
        for (int i = 0; i < 4; i++)
            rename_axis(r[i], ss->lhs[i]);
        return 0;
    }
    case PR_FUSE: {
        if (check_lhs_axes(p, st, ss))
            return -1;
        IterVar *f = ivs[1];
        for (int i = 2; i < ss->nargs; i++)
            if (sch_fuse(st, f, ivs[i], &f))
                return err_ir(p, at);
        rename_axis(f, ss->lhs[0]);
        return 0;
    }
    case PR_REORDER: rc = sch_reorder(st, ivs + 1, ss->nargs - 1); break;
    case PR_UNROLL: rc = sch_unroll(st, ivs[1]); break;
    case PR_VECTORIZE: rc = sch_vectorize(st, ivs[1]); break;
    case PR_PARALLEL: rc = sch_parallel(st, ivs[1]); break;
    case PR_BIND: rc = sch_bind(st, ivs[1], a[2].name); break;
    case PR_TENSORIZE: rc = sch_tensorize(st, ivs[1], a[2].name, ir_fmt("%s:%d:%d", p->path, at->line, at->col)); break;
    case PR_COMPUTE_AT: {
        if (!(parent = stage_arg(p, s, &a[1])))
            return -1;
        IterVar *iv = axis_arg(p, parent, &a[2]);
        if (!iv)
            return -1;
        rc = sch_compute_at(s, st, parent, iv);
        break;
    }
    case PR_COMPUTE_INLINE: rc = sch_compute_inline(s, st); break;
    case PR_COMPUTE_ROOT: rc = sch_compute_root(st); break;
    case PR_CACHE_READ: {
        Stage *src = stage_arg(p, s, &a[0]);
        Stage *readers[KG_MAX_SCHED_ARGS];
        if (!src || scope_arg(p, &a[1], &scope))
            return -1;
        for (int i = 2; i < ss->nargs; i++)
            if (!(readers[i - 2] = stage_arg(p, s, &a[i])))
                return -1;
        if (check_new_stage(p, s, ss->lhs[0]))
            return -1;
        Stage *c = sch_cache_read(s, src->t, scope, readers, ss->nargs - 2);
        if (!c)
            return err_ir(p, at);
        c->t->name = tokstr(ss->lhs[0]);
        return 0;
    }
    case PR_CACHE_WRITE: {
        if (scope_arg(p, &a[1], &scope) || check_new_stage(p, s, ss->lhs[0]))
            return -1;
        Stage *c = sch_cache_write(s, st, scope);
        if (!c)
            return err_ir(p, at);
        c->t->name = tokstr(ss->lhs[0]);
        return 0;
    }
    case PR_PREFETCH: {
        Stage *src = stage_arg(p, s, &a[1]);
        if (!src)
            return -1;
        if (ss->nargs > 5)
            return err(p, a[5].tok, "too many arguments to prefetch (usage: %s)", prims[PR_PREFETCH].usage);
        rc = sch_prefetch(st, src->t, ivs[2], ss->nargs > 3 ? ivs[3] : NULL, ss->nargs > 4 ? ivs[4] : NULL);
        break;
    }
    case PR_STORAGE_ALIGN:
        if (a[1].value < 0 || a[1].value >= KG_MAX_DIMS)
            return err(p, a[1].tok, "storage_align dimension must be between 0 and %d, got %lld", KG_MAX_DIMS - 1,
                       (long long)a[1].value);
        rc = sch_storage_align(st, (int)a[1].value, a[2].value, a[3].value);
        break;
    default: ir_die("bad schedule primitive %d", ss->prim);
    }
    return rc ? err_ir(p, at) : 0;
}

/* Sections for other targets are not applied, but their names are checked against a
 * simulation that only tracks which axis names each stage has (names are never removed). */
typedef struct {
    const char *name;
    int any;          /* axes unknown (a cache_read copy): accept any axis name */
    PtrVec axes;      /* const char* */
} DryStage;

static DryStage *dry_find(PtrVec *stages, const char *name)
{
    for (int i = 0; i < stages->n; i++) {
        DryStage *d = stages->items[i];
        if (!strcmp(d->name, name))
            return d;
    }
    return NULL;
}

static DryStage *dry_stage(P *p, PtrVec *stages, const SArg *a)
{
    DryStage *d = dry_find(stages, a->name);
    if (d)
        return d;
    if (find_param(p, a->tok)) {
        err(p, a->tok, "'%s' is a param, not a tensor", a->name);
        return NULL;
    }
    const char **names = ir_alloc(sizeof *names * (size_t)(stages->n + 1));
    for (int i = 0; i < stages->n; i++)
        names[i] = ((DryStage *)stages->items[i])->name;
    err(p, a->tok, "unknown tensor '%s' (stages: %s)", a->name, list_names(names, stages->n));
    return NULL;
}

static int dry_axis(P *p, DryStage *d, const SArg *a)
{
    if (d->any)
        return 0;
    for (int i = 0; i < d->axes.n; i++)
        if (!strcmp(d->axes.items[i], a->name))
            return 0;
    return err(p, a->tok, "unknown axis '%s' in stage %s (axes: %s)", a->name, d->name,
               list_names((const char **)d->axes.items, d->axes.n));
}

static DryStage *dry_new(PtrVec *stages, const char *name)
{
    DryStage *d = ir_alloc(sizeof *d);
    d->name = name;
    ir_vec_push(stages, d, KG_MAX_TENSORS + KG_MAX_SCHED_STMTS, "stages");
    return d;
}

static int check_section(P *p, const Section *sec)
{
    PtrVec stages = {0};
    for (int i = 0; i < p->prog->tensors.n; i++) {
        Tensor *t = p->prog->tensors.items[i];
        DryStage *d = dry_new(&stages, t->name);
        if (t->kind == T_PLACEHOLDER)
            continue;
        for (int k = 0; k < t->ndim; k++)
            ir_vec_push(&d->axes, (void *)t->axes[k]->var->name, 1 << 20, "axes");
        if (t->kind == T_COMPUTE && t->body->kind == E_REDUCE)
            for (int k = 0; k < t->body->u.reduce.naxes; k++)
                ir_vec_push(&d->axes, (void *)t->body->u.reduce.axes[k]->var->name, 1 << 20, "axes");
    }
    for (int i = 0; i < sec->stmts.n; i++) {
        const SStmt *ss = sec->stmts.items[i];
        const SArg *a = ss->args;
        DryStage *d = dry_stage(p, &stages, &a[0]);
        if (!d)
            return -1;
        for (int k = 1; k < ss->nargs; k++) {
            if (a[k].kind == 'A' && dry_axis(p, d, &a[k]))
                return -1;
            if ((a[k].kind == 'S' || a[k].kind == 'T') && !dry_stage(p, &stages, &a[k]))
                return -1;
            if (a[k].kind == 'a' && dry_axis(p, dry_find(&stages, a[1].name), &a[k]))
                return -1;
            Scope sc;
            if (a[k].kind == 'm' && scope_arg(p, &a[k], &sc))
                return -1;
        }
        if ((ss->prim == PR_SPLIT && a[2].value < 1) || (ss->prim == PR_TILE && (a[3].value < 1 || a[4].value < 1)))
            return err(p, a[ss->prim == PR_SPLIT ? 2 : a[3].value < 1 ? 3 : 4].tok, "%s factor must be >= 1",
                       prims[ss->prim].name);
        if (ss->prim == PR_SPLIT || ss->prim == PR_TILE || ss->prim == PR_FUSE)
            for (int k = 0; k < ss->nlhs; k++)
                ir_vec_push(&d->axes, tokstr(ss->lhs[k]), 1 << 20, "axes");
        if (ss->prim == PR_CACHE_READ || ss->prim == PR_CACHE_WRITE) {
            char *name = tokstr(ss->lhs[0]);
            if (check_reserved(p, ss->lhs[0]))
                return -1;
            if (dry_find(&stages, name) || find_param(p, ss->lhs[0]))
                return err(p, ss->lhs[0], "'%s' already names a stage or a param", name);
            DryStage *c = dry_new(&stages, name);
            c->any = ss->prim == PR_CACHE_READ || d->any;
            for (int k = 0; ss->prim == PR_CACHE_WRITE && k < d->axes.n; k++)
                ir_vec_push(&c->axes, d->axes.items[k], 1 << 20, "axes");
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the file */

static int parse_stmt(P *p)
{
    GenTok *t = peek(p);
    if (t->kind == GT_NAME) {
        if (is_kw(t, "kernel"))
            return parse_kernel(p);
        if (is_kw(t, "param"))
            return parse_param(p);
        if (is_kw(t, "tune") && peek2(p)->kind == GT_NAME)
            return parse_tune(p);
        if (is_kw(t, "input"))
            return parse_input(p);
        if (is_kw(t, "output"))
            return parse_output(p);
        if (is_kw(t, "scan"))
            return parse_scan(p, 0);
        if (is_kw(t, "schedule"))
            return parse_schedule(p);
        if (is_kw(t, "init") || is_kw(t, "update"))
            return err(p, t, "'%.*s' outside a scan (it belongs on the lines right after 'scan NAME[...]')", t->len,
                       t->s);
        if (is_p(peek2(p), "["))
            return parse_compute(p, 0);
        if (is_p(peek2(p), "="))
            return err(p, peek2(p), "a compute needs its axes: %.*s[i < N, ...] = ...", t->len, t->s);
    }
    return err(p, t, "expected a statement (kernel, param, input, output, scan, schedule or a compute X[i < N] = ...) "
                     "but found %s", desc(t));
}

/* The program's name when there is no `kernel` line: the file's stem if it is a C name. */
static const char *default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = 0;
    while (base[n] == '_' || (base[n] >= 'a' && base[n] <= 'z') || (base[n] >= 'A' && base[n] <= 'Z') ||
           (n > 0 && base[n] >= '0' && base[n] <= '9'))
        n++;
    if (!n || (base[n] && base[n] != '.'))
        return "kernel";
    return ir_fmt("%.*s", (int)n, base);
}

/* Does the program cut after tensor i fail to verify? (Its last compute stands in as the
 * output, so only the tensors' own checks can fail.) */
static int prefix_fails(Program *prog, int i)
{
    int last = i;
    while (last >= 0 && ((Tensor *)prog->tensors.items[last])->kind == T_PLACEHOLDER)
        last--;
    if (last < 0)
        return 0;
    Tensor *t = prog->tensors.items[last];
    Program part = {prog->name, {prog->tensors.items, i + 1, i + 1}};
    int was = t->is_output;
    t->is_output = 1;
    int bad = ir_program_verify(&part) != 0;
    t->is_output = was;
    return bad;
}

/* ir_program_verify failed: the first tensor whose prefix of the program fails is the
 * culprit (found by bisection), so the message can point at its definition. */
static int verify_error(P *p)
{
    char msg[4096];
    snprintf(msg, sizeof msg, "%s", ir_errmsg());
    int lo = 0, hi = p->prog->tensors.n - 1;
    if (hi < 0 || !prefix_fails(p->prog, hi))
        return gen_src_error(p->path, NULL, 0, 0, "%s", msg);
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (prefix_fails(p->prog, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    prefix_fails(p->prog, lo);   /* again, for its message */
    Tensor *t = p->prog->tensors.items[lo];
    return gen_src_error(p->path, p->text, t->pos.line, t->pos.col, "%s", ir_errmsg());
}

static int finish(P *p, const char *target, KgModule *out)
{
    for (int i = 0; i < p->ndefs; i++)
        if (!p->defs[i].used)
            return gen_src_error(p->path, NULL, 0, 0, "-D%s=%lld does not match any param",
                                 p->defs[i].name ? p->defs[i].name : "", (long long)p->defs[i].value);
    int outputs = 0;
    for (int i = 0; i < p->prog->tensors.n; i++)
        outputs += ((Tensor *)p->prog->tensors.items[i])->is_output;
    if (!outputs)
        return gen_src_error(p->path, NULL, 0, 0, "no output: mark a computed tensor with 'output'");
    if (p->kernel_name)
        p->prog->name = p->kernel_name;
    if (ir_program_verify(p->prog))
        return verify_error(p);
    Schedule *s = sch_create(p->prog);
    if (!s)
        return gen_src_error(p->path, NULL, 0, 0, "%s", ir_errmsg());
    /* check the other targets' sections first: applying one changes the program */
    int apply_any = target && strcmp(target, "none") != 0;
    Section *chosen = NULL;
    /* a `gpu` section serves cuda, opencl and metal when they have none of their own */
    int is_gpu = target && (!strcmp(target, "cuda") || !strcmp(target, "opencl") || !strcmp(target, "metal"));
    /* wasm is C built by emcc: a `c` section serves it when it has none of its own */
    int is_wasm = target && !strcmp(target, "wasm");
    int exact = 0;
    for (int i = 0; i < p->sections.n && apply_any; i++)
        exact |= teq(((Section *)p->sections.items[i])->name, target);
    for (int i = 0; i < p->sections.n; i++) {
        Section *sec = p->sections.items[i];
        if (apply_any && !chosen && (teq(sec->name, target) || (is_gpu && !exact && teq(sec->name, "gpu")) ||
                                       (is_wasm && !exact && teq(sec->name, "c"))))
            chosen = sec;
        else if (check_section(p, sec))
            return -1;
    }
    for (int k = 0; chosen && k < chosen->stmts.n; k++) {
        SStmt *ss = chosen->stmts.items[k];
        if (apply_stmt(p, s, ss))
            return -1;
        ir_vec_push(&out->schedule_lines, stmt_text(p, ss), KG_MAX_SCHED_STMTS, "schedule statements");
    }
    out->scheduled = chosen != NULL;
    out->prog = p->prog;
    out->sched = s;
    out->kernel_name = p->kernel_name;
    out->tunables = p->tunables;
    return 0;
}

int gen_parse_kg(const char *path, const char *text, Define *defs, int ndefs, const char *target, KgModule *out)
{
    memset(out, 0, sizeof *out);
    path = ir_strdup(path ? path : "<input>");
    if (!text)
        return gen_src_error(path, NULL, 0, 0, "no source text");
    for (int i = 0; i < ndefs; i++)
        defs[i].used = 0;
    P p = {0};
    p.path = path;
    p.text = text;
    p.defs = defs;
    p.ndefs = ndefs > 0 ? ndefs : 0;
    if (gen_lex(path, text, &p.toks, &p.ntok))
        return -1;
    p.prog = ir_program_new(default_name(path));
    int rc = 0;
    for (;;) {
        GenTok *t = peek(&p);
        if (t->kind == GT_EOF)
            break;
        if (t->kind == GT_NEWLINE) {
            next(&p);
            continue;
        }
        if ((rc = parse_stmt(&p)) != 0 || (rc = end_of_stmt(&p)) != 0)
            break;
    }
    if (!rc)
        rc = finish(&p, target, out);
    free(p.toks);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}
