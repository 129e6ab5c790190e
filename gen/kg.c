/* kg.c - the .kg frontend: parses a tensor-expression source into a Program through the
 * ir_* constructors, creates its Schedule and applies the target's `schedule` section.
 * This file holds the tokens, names, statements and the file; expressions are
 * kg_expr.c's, schedule sections kg_sched.c's, the state they share kg_parse.h's.
 *
 * requires: a current arena (everything that outlives the call lives there);
 * gives: a verified Program, its Schedule, or -1 with "path:line:col: error: ...".
 *
 * Literals are weakly typed: a literal (or an expression of literals and params, folded
 * here with overflow checks) takes the type of the other operand; alone it defaults to i32
 * or f32 (i64 or f64 when too large). The language reference is docs/kg-language.md. */
#include "kg_parse.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const reserved[] = {"kernel", "param", "input", "output", "scan", "schedule",
                                       "init",   "update", "inf",  "nan",    "true", "false"};

/* ---------------------------------------------------------------- errors and tokens */

int kg_err(P *p, const GenTok *t, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gen_src_error(p->path, p->text, t->line, t->col, "%s", msg);
}

/* An ir_* or sch_* call failed: put the position in front of its message. */
int kg_err_ir(P *p, const GenTok *t) { return kg_err(p, t, "%s", ir_errmsg()); }

int kg_teq(const GenTok *t, const char *s)
{
    return (t->kind == GT_NAME || t->kind == GT_PUNCT) && (size_t)t->len == strlen(s) &&
           !memcmp(t->s, s, (size_t)t->len);
}

int kg_is_p(const GenTok *t, const char *s) { return t->kind == GT_PUNCT && kg_teq(t, s); }
int kg_is_kw(const GenTok *t, const char *s) { return t->kind == GT_NAME && kg_teq(t, s); }

int kg_same_tok(const GenTok *a, const GenTok *b)
{
    return a->len == b->len && !memcmp(a->s, b->s, (size_t)a->len);
}

char *kg_tokstr(const GenTok *t)
{
    char *s = ir_alloc((size_t)t->len + 1);
    memcpy(s, t->s, (size_t)t->len);
    return s;
}

/* "end of line", "'foo'": how a token is named in "expected X but found Y". */
const char *kg_desc(const GenTok *t)
{
    if (t->kind == GT_EOF)
        return "end of file";
    if (t->kind == GT_NEWLINE)
        return "end of line";
    return ir_fmt("'%.*s'", t->len, t->s);
}

GenTok *kg_peek(P *p)
{
    if (p->brackets > 0)
        while (p->toks[p->pos].kind == GT_NEWLINE)
            p->pos++;
    return &p->toks[p->pos];
}

/* The token after kg_peek(). */
GenTok *kg_peek2(P *p)
{
    int i = (int)(kg_peek(p) - p->toks);
    if (p->toks[i].kind == GT_EOF)
        return &p->toks[i];
    i++;
    if (p->brackets > 0)
        while (p->toks[i].kind == GT_NEWLINE)
            i++;
    return &p->toks[i];
}

GenTok *kg_next(P *p)
{
    GenTok *t = kg_peek(p);
    if (t->kind != GT_EOF)
        p->pos++;
    p->last = t;
    return t;
}

int kg_accept(P *p, const char *s)
{
    if (!kg_is_p(kg_peek(p), s))
        return 0;
    kg_next(p);
    return 1;
}

int kg_expect(P *p, const char *s)
{
    if (kg_accept(p, s))
        return 0;
    return kg_err(p, kg_peek(p), "expected '%s' but found %s", s, kg_desc(kg_peek(p)));
}

/* The list opened at `open` does not go on with ',' or close with `closer`. When the
 * offending token is on a later line, the bracket was most likely never closed. */
static int close_err(P *p, const GenTok *open, const char *closer)
{
    GenTok *t = kg_peek(p);
    if (p->last && t->line != p->last->line)
        return kg_err(p, open, "'%.*s' is not closed: expected '%s' but found %s on line %d", open->len, open->s,
                   closer, kg_desc(t), t->line);
    return kg_err(p, t, "expected '%s' but found %s", closer, kg_desc(t));
}

int kg_close_bracket(P *p, const GenTok *open, const char *closer)
{
    if (!kg_is_p(kg_peek(p), closer))
        return close_err(p, open, closer);
    kg_next(p);
    p->brackets--;
    return 0;
}

int kg_end_of_stmt(P *p)
{
    GenTok *t = kg_peek(p);
    if (t->kind == GT_NEWLINE) {
        kg_next(p);
        return 0;
    }
    if (t->kind == GT_EOF)
        return 0;
    return kg_err(p, t, "expected end of line but found %s", kg_desc(t));
}

/* ---------------------------------------------------------------- names */

Param *kg_find_param(P *p, const GenTok *t)
{
    for (int i = 0; i < p->params.n; i++) {
        Param *pm = p->params.items[i];
        if (kg_teq(t, pm->name))
            return pm;
    }
    return NULL;
}

Tensor *kg_find_tensor(P *p, const GenTok *t)
{
    for (int i = 0; i < p->prog->tensors.n; i++) {
        Tensor *x = p->prog->tensors.items[i];
        if (kg_teq(t, x->name))
            return x;
    }
    return NULL;
}

IterVar *kg_find_axis(P *p, const GenTok *t)
{
    for (int i = p->nscope - 1; i >= 0; i--)
        if (kg_teq(t, p->scope[i]->var->name))
            return p->scope[i];
    return NULL;
}

int kg_check_reserved(P *p, const GenTok *t)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (kg_is_kw(t, reserved[i]))
            return kg_err(p, t, "'%s' is a reserved word; choose another name", reserved[i]);
    return 0;
}

/* A new tensor or param name (is_param) must be fresh among params and tensors. */
static int check_new_name(P *p, const GenTok *t, int is_param)
{
    if (t->kind != GT_NAME)
        return kg_err(p, t, "expected a %s name but found %s", is_param ? "param" : "tensor", kg_desc(t));
    if (kg_check_reserved(p, t))
        return -1;
    Param *pm = kg_find_param(p, t);
    if (pm)
        return kg_err(p, t, is_param ? "param '%.*s' defined twice (first at line %d)"
                                  : "'%.*s' is already a param (line %d)",
                   t->len, t->s, pm->tok->line);
    Tensor *x = kg_find_tensor(p, t);
    if (x)
        return kg_err(p, t, is_param ? "'%.*s' is already a tensor (line %d)"
                                  : "tensor '%.*s' defined twice (first at line %d)",
                   t->len, t->s, x->pos.line);
    return 0;
}

/* A new axis name: not reserved, not a param, not an axis already in scope. */
int kg_check_new_axis(P *p, const GenTok *t)
{
    if (t->kind != GT_NAME)
        return kg_err(p, t, "expected an axis name but found %s", kg_desc(t));
    if (kg_check_reserved(p, t))
        return -1;
    if (kg_find_param(p, t))
        return kg_err(p, t, "axis '%.*s' has the name of a param", t->len, t->s);
    if (kg_find_axis(p, t))
        return kg_err(p, t, "axis '%.*s' is already defined here", t->len, t->s);
    return 0;
}

/* ---------------------------------------------------------------- statements */

static int add_tensor(P *p, Tensor *t, const GenTok *name, int is_output)
{
    if (p->prog->tensors.n >= KG_MAX_TENSORS)
        return kg_err(p, name, "too many tensors (the limit is %d)", KG_MAX_TENSORS);
    t->is_output = is_output;
    t->pos = (SrcPos){p->path, name->line, name->col};
    if (ir_program_add(p->prog, t))
        return kg_err_ir(p, name);
    return 0;
}

/* '[' i < N, ... ']' after a compute's or scan's name: its axes. */
static int parse_axes(P *p, const GenTok *name, IterVar **axes, int *n)
{
    GenTok *open = kg_next(p);
    if (!kg_is_p(open, "["))
        return kg_err(p, open, "expected '[' and the axes after '%.*s', e.g. %.*s[i < N] = ..., but found %s", name->len,
                   name->s, name->len, name->s, kg_desc(open));
    p->brackets++;
    *n = 0;
    int64_t numel = 1;
    for (;;) {
        GenTok *an = kg_next(p);
        if (kg_check_new_axis(p, an))
            return -1;
        for (int k = 0; k < *n; k++)
            if (kg_teq(an, axes[k]->var->name))
                return kg_err(p, an, "axis '%.*s' defined twice", an->len, an->s);
        if (!kg_is_p(kg_peek(p), "<"))
            return kg_err(p, kg_peek(p), "expected '<' and the extent after axis '%.*s' but found %s", an->len, an->s,
                       kg_desc(kg_peek(p)));
        kg_next(p);
        int64_t ext;
        if (kg_parse_extent(p, an, &ext))
            return -1;
        if (*n == KG_MAX_DIMS)
            return kg_err(p, an, "too many dimensions (the limit is %d)", KG_MAX_DIMS);
        axes[(*n)++] = ir_itervar_new(kg_tokstr(an), ext, IV_SPATIAL);
        numel = numel > KG_MAX_ELEMS / ext ? (int64_t)KG_MAX_ELEMS + 1 : numel * ext;
        if (kg_accept(p, ","))
            continue;
        if (kg_close_bracket(p, open, "]"))
            return -1;
        break;
    }
    if (numel > KG_MAX_ELEMS)
        return kg_err(p, name, "'%.*s' is too large: more than %lld elements (indices are 32-bit)", name->len, name->s,
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
    GenTok *d = kg_next(p);
    char buf[GEN_MAX_NAME + 1];
    snprintf(buf, sizeof buf, "%.*s", d->len, d->s);
    if (d->kind != GT_NAME || ir_dtype_parse(buf, dt))
        return kg_err(p, d, "expected a dtype (bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64) "
                         "but found %s", kg_desc(d));
    return 0;
}

/* name[i < N, ...] = expr */
static int parse_compute(P *p, int is_output)
{
    GenTok *name = kg_next(p);
    if (check_new_name(p, name, 0))
        return -1;
    IterVar *axes[KG_MAX_DIMS];
    int n;
    if (parse_axes(p, name, axes, &n))
        return -1;
    if (!kg_is_p(kg_peek(p), "="))
        return kg_err(p, kg_peek(p), "expected '=' and the compute's expression but found %s", kg_desc(kg_peek(p)));
    kg_next(p);
    enter_body(p, name, axes, n);
    Val body;
    int rc = kg_parse_expr(p, &body);
    leave_body(p);
    if (rc)
        return -1;
    Tensor *t = ir_compute(kg_tokstr(name), n, axes, kg_val_expr(&body));
    if (!t)
        return kg_err_ir(p, name);
    return add_tensor(p, t, name, is_output);
}

/* scan h[t < T, i < N] [: dtype] NEWLINE init[(steps)] = expr NEWLINE update = expr */
static int parse_scan(P *p, int is_output)
{
    GenTok *kw = kg_next(p);
    GenTok *name = kg_next(p);
    if (check_new_name(p, name, 0))
        return -1;
    IterVar *axes[KG_MAX_DIMS];
    int n;
    if (parse_axes(p, name, axes, &n))
        return -1;
    DType dt = DT_F32;
    int has_dt = 0;
    if (kg_accept(p, ":")) {
        if (parse_dtype(p, &dt))
            return -1;
        has_dt = 1;
    }
    if (kg_end_of_stmt(p))
        return -1;

    GenTok *it = kg_next(p);
    if (!kg_is_kw(it, "init"))
        return kg_err(p, it, "expected 'init = ...' on the line after '%.*s %.*s[...]' but found %s", kw->len, kw->s,
                   name->len, name->s, kg_desc(it));
    int64_t steps = 1;
    if (kg_is_p(kg_peek(p), "(")) {
        GenTok *open = kg_next(p);
        p->brackets++;
        GenTok *st = kg_peek(p);
        if (kg_parse_const(p, &steps) || kg_close_bracket(p, open, ")"))
            return -1;
        if (steps < 1 || steps > axes[0]->extent)
            return kg_err(p, st, "init steps must be between 1 and the time extent %lld, got %lld",
                       (long long)axes[0]->extent, (long long)steps);
    }
    if (kg_expect(p, "="))
        return -1;
    enter_body(p, name, axes, n);
    p->in_scan_init = 1;
    Val iv;
    int rc = kg_parse_expr(p, &iv);
    leave_body(p);
    if (rc)
        return -1;
    Expr *init = has_dt && iv.weak ? kg_lit_as(p, &iv, dt, it, "init") : kg_val_expr(&iv);
    if (!init)
        return -1;
    if (has_dt && init->dtype != dt)
        return kg_err(p, iv.tok, "the scan's init has type %s but the scan is %s", ir_dtype_name(init->dtype),
                   ir_dtype_name(dt));
    dt = init->dtype;
    if (kg_end_of_stmt(p))
        return -1;

    GenTok *ut = kg_next(p);
    if (!kg_is_kw(ut, "update"))
        return kg_err(p, ut, "expected 'update = ...' on the line after the scan's init but found %s", kg_desc(ut));
    if (kg_expect(p, "="))
        return -1;
    Tensor *t = ir_scan_begin(kg_tokstr(name), dt, n, axes);
    if (!t)
        return kg_err_ir(p, name);
    enter_body(p, name, axes, n);
    p->scan = t;
    p->scan_time = axes[0]->var;
    Val uv;
    rc = kg_parse_expr(p, &uv);
    leave_body(p);
    if (rc)
        return -1;
    Expr *update = uv.weak ? kg_lit_as(p, &uv, dt, ut, "update") : uv.e;
    if (!update)
        return -1;
    if (update->dtype != dt)
        return kg_err(p, uv.tok, "the scan's update has type %s but its init has type %s", ir_dtype_name(update->dtype),
                   ir_dtype_name(dt));
    if (ir_scan_finish(t, steps, init, update))
        return kg_err_ir(p, name);
    return add_tensor(p, t, name, is_output);
}

static int parse_param(P *p)
{
    kg_next(p);
    GenTok *name = kg_next(p);
    if (check_new_name(p, name, 1))
        return -1;
    if (kg_expect(p, "="))
        return -1;
    int64_t v;
    if (kg_parse_const(p, &v))
        return -1;
    for (int i = 0; i < p->ndefs; i++)
        if (p->defs[i].name && kg_teq(name, p->defs[i].name)) {
            v = p->defs[i].value;   /* the last -D wins */
            p->defs[i].used = 1;
        }
    if (p->params.n >= KG_MAX_PARAMS)
        return kg_err(p, name, "too many params (the limit is %d)", KG_MAX_PARAMS);
    Param *pm = ir_alloc(sizeof *pm);
    pm->name = kg_tokstr(name);
    pm->value = v;
    pm->tok = name;
    ir_vec_push(&p->params, pm, KG_MAX_PARAMS, "params");
    return 0;
}

/* tune NB in {16, 32, 64}: values `kgen tune` may give the param NB */
static int parse_tune(P *p)
{
    kg_next(p);
    GenTok *name = kg_next(p);
    Param *pm = kg_find_param(p, name);
    if (!pm)
        return kg_err(p, name, "'tune' needs a param declared above it, not %s", kg_desc(name));
    GenTok *in = kg_next(p);
    if (in->kind != GT_NAME || !kg_is_kw(in, "in"))
        return kg_err(p, in, "expected 'in' and the values, e.g. tune %.*s in {16, 32}, but found %s", name->len,
                   name->s, kg_desc(in));
    if (kg_expect(p, "{"))
        return -1;
    GenTunable *tu = ir_alloc(sizeof *tu);
    tu->name = kg_tokstr(name);
    tu->value = pm->value;
    for (;;) {
        if (tu->n == GEN_MAX_TUNE_VALUES)
            return kg_err(p, kg_peek(p), "too many values to tune (the limit is %d)", GEN_MAX_TUNE_VALUES);
        if (kg_parse_const(p, &tu->values[tu->n++]))
            return -1;
        if (!kg_is_p(kg_peek(p), ","))
            break;
        kg_next(p);
    }
    if (kg_expect(p, "}"))
        return -1;
    ir_vec_push(&p->tunables, tu, KG_MAX_PARAMS, "tune lines");
    return 0;
}

/* input A : f32[M, K] */
static int parse_input(P *p)
{
    kg_next(p);
    GenTok *name = kg_next(p);
    if (check_new_name(p, name, 0))
        return -1;
    if (!kg_is_p(kg_peek(p), ":"))
        return kg_err(p, kg_peek(p), "expected ':' and the input's type, e.g. %.*s : f32[N], but found %s", name->len,
                   name->s, kg_desc(kg_peek(p)));
    kg_next(p);
    DType dt;
    if (parse_dtype(p, &dt))
        return -1;
    GenTok *open = kg_next(p);
    if (!kg_is_p(open, "["))
        return kg_err(p, open, "expected '[' and the shape after the dtype, e.g. %s[M, N], but found %s",
                   ir_dtype_name(dt), kg_desc(open));
    p->brackets++;
    int64_t shape[KG_MAX_DIMS], numel = 1;
    int n = 0;
    for (;;) {
        GenTok *t = kg_peek(p);
        int64_t v;
        if (kg_parse_const(p, &v))
            return -1;
        if (v < 1 || v > KG_MAX_ELEMS)
            return kg_err(p, t, "dimension %d of '%.*s' must be between 1 and %lld, got %lld", n, name->len, name->s,
                       (long long)KG_MAX_ELEMS, (long long)v);
        if (n == KG_MAX_DIMS)
            return kg_err(p, t, "too many dimensions (the limit is %d)", KG_MAX_DIMS);
        shape[n++] = v;
        numel = numel > KG_MAX_ELEMS / v ? (int64_t)KG_MAX_ELEMS + 1 : numel * v;
        if (kg_accept(p, ","))
            continue;
        if (kg_close_bracket(p, open, "]"))
            return -1;
        break;
    }
    if (numel > KG_MAX_ELEMS)
        return kg_err(p, name, "'%.*s' is too large: more than %lld elements (indices are 32-bit)", name->len, name->s,
                   (long long)KG_MAX_ELEMS);
    Tensor *t = ir_placeholder(kg_tokstr(name), dt, n, shape);
    if (!t)
        return kg_err_ir(p, name);
    return add_tensor(p, t, name, 0);
}

/* output X (mark), output X[...] = ..., output scan ... */
static int parse_output(P *p)
{
    GenTok *kw = kg_next(p);
    GenTok *name = kg_peek(p);
    if (kg_is_kw(name, "scan"))
        return parse_scan(p, 1);
    if (name->kind != GT_NAME)
        return kg_err(p, name, "expected a tensor name after '%.*s' but found %s", kw->len, kw->s, kg_desc(name));
    if (kg_is_p(kg_peek2(p), "["))
        return parse_compute(p, 1);
    kg_next(p);
    Tensor *t = kg_find_tensor(p, name);
    if (!t)
        return kg_err(p, name, "unknown tensor '%.*s'", name->len, name->s);
    if (t->kind == T_PLACEHOLDER)
        return kg_err(p, name, "'%s' is an input; only computed tensors can be outputs", t->name);
    if (t->is_output)
        return kg_err(p, name, "'%s' is already an output", t->name);
    t->is_output = 1;
    return 0;
}

static int parse_kernel(P *p)
{
    kg_next(p);
    GenTok *name = kg_next(p);
    if (name->kind != GT_NAME)
        return kg_err(p, name, "expected the kernel's name after 'kernel' but found %s", kg_desc(name));
    if (p->kernel_tok)
        return kg_err(p, name, "the kernel's name is already set (line %d)", p->kernel_tok->line);
    p->kernel_name = kg_tokstr(name);
    p->kernel_tok = name;
    return 0;
}

/* ---------------------------------------------------------------- the file */

static int parse_stmt(P *p)
{
    GenTok *t = kg_peek(p);
    if (t->kind == GT_NAME) {
        if (kg_is_kw(t, "kernel"))
            return parse_kernel(p);
        if (kg_is_kw(t, "param"))
            return parse_param(p);
        if (kg_is_kw(t, "tune") && kg_peek2(p)->kind == GT_NAME)
            return parse_tune(p);
        if (kg_is_kw(t, "input"))
            return parse_input(p);
        if (kg_is_kw(t, "output"))
            return parse_output(p);
        if (kg_is_kw(t, "scan"))
            return parse_scan(p, 0);
        if (kg_is_kw(t, "schedule"))
            return kg_parse_schedule(p);
        if (kg_is_kw(t, "init") || kg_is_kw(t, "update"))
            return kg_err(p, t, "'%.*s' outside a scan (it belongs on the lines right after 'scan NAME[...]')", t->len,
                       t->s);
        if (kg_is_p(kg_peek2(p), "["))
            return parse_compute(p, 0);
        if (kg_is_p(kg_peek2(p), "="))
            return kg_err(p, kg_peek2(p), "a compute needs its axes: %.*s[i < N, ...] = ...", t->len, t->s);
    }
    return kg_err(p, t, "expected a statement (kernel, param, input, output, scan, schedule or a compute X[i < N] = ...) "
                     "but found %s", kg_desc(t));
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
    Program part = {.name = prog->name, .tensors = {prog->tensors.items, i + 1, i + 1}};
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
        exact |= kg_teq(((Section *)p->sections.items[i])->name, target);
    for (int i = 0; i < p->sections.n; i++) {
        Section *sec = p->sections.items[i];
        if (apply_any && !chosen && (kg_teq(sec->name, target) || (is_gpu && !exact && kg_teq(sec->name, "gpu")) ||
                                       (is_wasm && !exact && kg_teq(sec->name, "c"))))
            chosen = sec;
        else if (kg_check_section(p, sec))
            return -1;
    }
    for (int k = 0; chosen && k < chosen->stmts.n; k++) {
        SStmt *ss = chosen->stmts.items[k];
        if (kg_apply_stmt(p, s, ss))
            return -1;
        ir_vec_push(&out->schedule_lines, kg_stmt_text(p, ss), KG_MAX_SCHED_STMTS, "schedule statements");
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
        GenTok *t = kg_peek(&p);
        if (t->kind == GT_EOF)
            break;
        if (t->kind == GT_NEWLINE) {
            kg_next(&p);
            continue;
        }
        if ((rc = parse_stmt(&p)) != 0 || (rc = kg_end_of_stmt(&p)) != 0)
            break;
    }
    if (!rc)
        rc = finish(&p, target, out);
    free(p.toks);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}
