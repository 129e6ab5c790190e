/* kg_sched.c - the .kg parser's `schedule TARGET { ... }` sections: each statement parsed
 * against its primitive's signature (prims[]); the target's section applied to the Schedule
 * with the sch_* primitives, the others' stage and axis names checked by a simulation. requires: the parser
 * state of kg_parse.h; gives: 0, or -1 with a positioned error. */
#include "kg_parse.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
    GenTok *t = kg_peek(p);
    a->kind = kind;
    a->tok = t;
    if (kind == 'c')
        return kg_parse_const(p, &a->value);
    const char *what = kind == 'S'   ? "a stage name"
                       : kind == 'T' ? "a tensor name"
                       : kind == 'm' ? "a memory scope (local, shared or global)"
                       : kind == 'g' ? "a thread tag such as blockIdx.x"
                       : kind == 'i' ? "a micro-kernel name such as fma_bcast"
                                     : "an axis name";
    if (t->kind != GT_NAME)
        return kg_err(p, t, "expected %s but found %s", what, kg_desc(t));
    kg_next(p);
    a->name = kg_tokstr(t);
    if (kind == 'g') {
        while (kg_is_p(kg_peek(p), ".")) {
            kg_next(p);
            GenTok *part = kg_next(p);
            if (part->kind != GT_NAME)
                return kg_err(p, part, "expected a name after '.' in a thread tag but found %s", kg_desc(part));
            if (strlen(a->name) + (size_t)part->len > GEN_MAX_NAME)
                return kg_err(p, part, "thread tag too long");
            a->name = ir_fmt("%s.%.*s", a->name, part->len, part->s);
        }
    }
    return 0;
}

static int parse_sched_stmt(P *p, SStmt *st)
{
    memset(st, 0, sizeof *st);
    st->first = (int)(kg_peek(p) - p->toks);
    GenTok *t = kg_peek(p);
    if (t->kind == GT_NAME && (kg_is_p(kg_peek2(p), ",") || kg_is_p(kg_peek2(p), "="))) {
        for (;;) {
            GenTok *n = kg_next(p);
            if (n->kind != GT_NAME)
                return kg_err(p, n, "expected a name but found %s", kg_desc(n));
            if (st->nlhs == KG_MAX_LHS)
                return kg_err(p, n, "too many names on the left (at most %d)", KG_MAX_LHS);
            st->lhs[st->nlhs++] = n;
            if (kg_accept(p, ","))
                continue;
            if (kg_accept(p, "="))
                break;
            return kg_err(p, kg_peek(p), "expected ',' or '=' but found %s", kg_desc(kg_peek(p)));
        }
    }
    GenTok *pt = kg_next(p);
    st->prim_tok = pt;
    st->prim = -1;
    for (int i = 0; i < NPRIMS; i++)
        if (kg_is_kw(pt, prims[i].name))
            st->prim = i;
    if (st->prim < 0) {
        if (pt->kind != GT_NAME)
            return kg_err(p, pt, "expected a schedule primitive but found %s", kg_desc(pt));
        return kg_err(p, pt, "unknown schedule primitive '%.*s' (expected split, tile, fuse, reorder, unroll, "
                   "vectorize, parallel, bind, compute_at, compute_inline, compute_root, cache_read, "
                   "cache_write, storage_align, tensorize or prefetch)", pt->len, pt->s);
    }
    const char *sig = prims[st->prim].sig, *pname = prims[st->prim].name, *usage = prims[st->prim].usage;
    int nsig = (int)strlen(sig), rep = sig[nsig - 1] == '+', nfixed = rep ? nsig - 1 : nsig;
    GenTok *open = kg_next(p);
    if (!kg_is_p(open, "("))
        return kg_err(p, open, "expected '(' after '%s' but found %s", pname, kg_desc(open));
    p->brackets++;
    st->args = ir_alloc(sizeof *st->args * KG_MAX_SCHED_ARGS);
    if (!kg_is_p(kg_peek(p), ")")) {
        for (;;) {
            char kind = st->nargs < nfixed ? sig[st->nargs] : rep ? sig[nfixed - 1] : 0;
            if (!kind || st->nargs == KG_MAX_SCHED_ARGS)
                return kg_err(p, kg_peek(p), "too many arguments to %s (usage: %s)", pname, usage);
            if (parse_sarg(p, kind, &st->args[st->nargs]))
                return -1;
            st->nargs++;
            if (kg_accept(p, ","))
                continue;
            break;
        }
    }
    GenTok *close = kg_peek(p);
    if (kg_close_bracket(p, open, ")"))
        return -1;
    if (st->nargs < nfixed)
        return kg_err(p, close, "%s takes %s%d argument%s, got %d (usage: %s)", pname, rep ? "at least " : "", nfixed,
                   nfixed == 1 ? "" : "s", st->nargs, usage);
    int nret = prims[st->prim].nret;
    if (st->nlhs && !nret)
        return kg_err(p, st->lhs[0], "%s returns nothing; remove the names before '='", pname);
    if (st->nlhs != nret)
        return kg_err(p, st->nlhs ? st->lhs[0] : pt, "%s returns %d %s; write: %s", pname, nret,
                   nret == 1 ? "name" : "names", usage);
    st->last = (int)(p->last - p->toks);
    return 0;
}

static Section *find_section(P *p, const GenTok *name)
{
    for (int i = 0; i < p->sections.n; i++) {
        Section *s = p->sections.items[i];
        if (kg_same_tok(name, s->name))
            return s;
    }
    return NULL;
}

/* schedule NAME { statement NEWLINE ... } */
int kg_parse_schedule(P *p)
{
    kg_next(p);
    GenTok *name = kg_next(p);
    if (name->kind != GT_NAME)
        return kg_err(p, name, "expected a target name after 'schedule' (c, cuda, opencl, metal, wasm, js, ...) "
                   "but found %s", kg_desc(name));
    Section *dup = find_section(p, name);
    if (dup)
        return kg_err(p, name, "schedule section '%.*s' defined twice (first at line %d)", name->len, name->s,
                   dup->name->line);
    if (p->sections.n >= KG_MAX_SECTIONS)
        return kg_err(p, name, "too many schedule sections (the limit is %d)", KG_MAX_SECTIONS);
    while (kg_peek(p)->kind == GT_NEWLINE)
        kg_next(p);
    GenTok *open = kg_next(p);
    if (!kg_is_p(open, "{"))
        return kg_err(p, open, "expected '{' after 'schedule %.*s' but found %s", name->len, name->s, kg_desc(open));
    Section *sec = ir_alloc(sizeof *sec);
    sec->name = name;
    for (;;) {
        GenTok *t = kg_peek(p);
        if (t->kind == GT_NEWLINE) {
            kg_next(p);
            continue;
        }
        if (kg_is_p(t, "}")) {
            kg_next(p);
            break;
        }
        if (t->kind == GT_EOF)
            return kg_err(p, open, "schedule section '%.*s' is not closed: expected '}' but found end of file", name->len,
                       name->s);
        if (sec->stmts.n >= KG_MAX_SCHED_STMTS)
            return kg_err(p, t, "too many statements in one schedule section (the limit is %d)", KG_MAX_SCHED_STMTS);
        SStmt *st = ir_alloc(sizeof *st);
        if (parse_sched_stmt(p, st))
            return -1;
        ir_vec_push(&sec->stmts, st, KG_MAX_SCHED_STMTS, "schedule statements");
        t = kg_peek(p);
        if (t->kind == GT_NEWLINE)
            kg_next(p);
        else if (!kg_is_p(t, "}"))
            return kg_err(p, t, "expected end of line but found %s", kg_desc(t));
    }
    ir_vec_push(&p->sections, sec, KG_MAX_SECTIONS, "schedule sections");
    return 0;
}

/* The statement as written, with each run of blanks (and comments) between tokens as one space. */
char *kg_stmt_text(P *p, const SStmt *st)
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
    if (kg_find_param(p, a->tok))
        return kg_err(p, a->tok, "'%s' is a param, not a tensor", a->name);
    const char **names = ir_alloc(sizeof *names * (size_t)(s->stages.n + 1));
    for (int i = 0; i < s->stages.n; i++)
        names[i] = ((Stage *)s->stages.items[i])->t->name;
    return kg_err(p, a->tok, "unknown tensor '%s' (stages: %s)", a->name, list_names(names, s->stages.n));
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
    kg_err(p, a->tok, "unknown axis '%s' in stage %s (axes: %s)", a->name, st->t->name, list_names(names, st->leaf.n));
    return NULL;
}

static int has_axis_name(PtrVec *v, const GenTok *t)
{
    for (int i = 0; i < v->n; i++)
        if (kg_teq(t, ((IterVar *)v->items[i])->var->name))
            return 1;
    return 0;
}

/* The names on the left of split/tile/fuse must be new in the stage and distinct. */
static int check_lhs_axes(P *p, Stage *st, const SStmt *ss)
{
    for (int i = 0; i < ss->nlhs; i++) {
        const GenTok *t = ss->lhs[i];
        for (int k = 0; k < i; k++)
            if (kg_same_tok(t, ss->lhs[k]))
                return kg_err(p, t, "'%.*s' appears twice on the left", t->len, t->s);
        if (has_axis_name(&st->leaf, t) || has_axis_name(&st->root, t))
            return kg_err(p, t, "axis '%.*s' already exists in stage %s", t->len, t->s, st->t->name);
    }
    return 0;
}

static int check_new_stage(P *p, Schedule *s, const GenTok *t)
{
    if (kg_check_reserved(p, t))
        return -1;
    if (kg_find_param(p, t))
        return kg_err(p, t, "'%.*s' is already a param", t->len, t->s);
    if (sch_find(s, kg_tokstr(t)))
        return kg_err(p, t, "'%.*s' already names a stage", t->len, t->s);
    return 0;
}

void rename_axis(IterVar *iv, const GenTok *t) { iv->var->name = kg_tokstr(t); }

static int scope_arg(P *p, const SArg *a, Scope *sc)
{
    if (sch_parse_scope(a->name, sc))
        return kg_err(p, a->tok, "unknown memory scope '%s' (expected local, shared or global)", a->name);
    return 0;
}

int kg_apply_stmt(P *p, Schedule *s, const SStmt *ss)
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
        return kg_err(p, at, "too many loops in stage %s (the limit is %d)", st->t->name, KG_MAX_LOOPS);
    switch (ss->prim) {
    case PR_SPLIT: {
        IterVar *o, *in;
        if (a[2].value < 1)
            return kg_err(p, a[2].tok, "split factor must be >= 1, got %lld", (long long)a[2].value);
        if (check_lhs_axes(p, st, ss))
            return -1;
        if (sch_split(st, ivs[1], a[2].value, &o, &in))
            return kg_err_ir(p, at);
        rename_axis(o, ss->lhs[0]);
        rename_axis(in, ss->lhs[1]);
        return 0;
    }
    case PR_TILE: {
        IterVar *r[4];
        for (int i = 3; i <= 4; i++)
            if (a[i].value < 1)
                return kg_err(p, a[i].tok, "tile factor must be >= 1, got %lld", (long long)a[i].value);
        if (check_lhs_axes(p, st, ss))
            return -1;
        if (sch_tile(st, ivs[1], ivs[2], a[3].value, a[4].value, &r[0], &r[1], &r[2], &r[3]))
            return kg_err_ir(p, at);
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
                return kg_err_ir(p, at);
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
            return kg_err_ir(p, at);
        c->t->name = kg_tokstr(ss->lhs[0]);
        return 0;
    }
    case PR_CACHE_WRITE: {
        if (scope_arg(p, &a[1], &scope) || check_new_stage(p, s, ss->lhs[0]))
            return -1;
        Stage *c = sch_cache_write(s, st, scope);
        if (!c)
            return kg_err_ir(p, at);
        c->t->name = kg_tokstr(ss->lhs[0]);
        return 0;
    }
    case PR_PREFETCH: {
        Stage *src = stage_arg(p, s, &a[1]);
        if (!src)
            return -1;
        if (ss->nargs > 5)
            return kg_err(p, a[5].tok, "too many arguments to prefetch (usage: %s)", prims[PR_PREFETCH].usage);
        rc = sch_prefetch(st, src->t, ivs[2], ss->nargs > 3 ? ivs[3] : NULL, ss->nargs > 4 ? ivs[4] : NULL);
        break;
    }
    case PR_STORAGE_ALIGN:
        if (a[1].value < 0 || a[1].value >= KG_MAX_DIMS)
            return kg_err(p, a[1].tok, "storage_align dimension must be between 0 and %d, got %lld", KG_MAX_DIMS - 1,
                       (long long)a[1].value);
        rc = sch_storage_align(st, (int)a[1].value, a[2].value, a[3].value);
        break;
    default: ir_die("bad schedule primitive %d", ss->prim);
    }
    return rc ? kg_err_ir(p, at) : 0;
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
    if (kg_find_param(p, a->tok)) {
        kg_err(p, a->tok, "'%s' is a param, not a tensor", a->name);
        return NULL;
    }
    const char **names = ir_alloc(sizeof *names * (size_t)(stages->n + 1));
    for (int i = 0; i < stages->n; i++)
        names[i] = ((DryStage *)stages->items[i])->name;
    kg_err(p, a->tok, "unknown tensor '%s' (stages: %s)", a->name, list_names(names, stages->n));
    return NULL;
}

static int dry_axis(P *p, DryStage *d, const SArg *a)
{
    if (d->any)
        return 0;
    for (int i = 0; i < d->axes.n; i++)
        if (!strcmp(d->axes.items[i], a->name))
            return 0;
    return kg_err(p, a->tok, "unknown axis '%s' in stage %s (axes: %s)", a->name, d->name,
               list_names((const char **)d->axes.items, d->axes.n));
}

static DryStage *dry_new(PtrVec *stages, const char *name)
{
    DryStage *d = ir_alloc(sizeof *d);
    d->name = name;
    ir_vec_push(stages, d, KG_MAX_TENSORS + KG_MAX_SCHED_STMTS, "stages");
    return d;
}

int kg_check_section(P *p, const Section *sec)
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
            return kg_err(p, a[ss->prim == PR_SPLIT ? 2 : a[3].value < 1 ? 3 : 4].tok, "%s factor must be >= 1",
                       prims[ss->prim].name);
        if (ss->prim == PR_SPLIT || ss->prim == PR_TILE || ss->prim == PR_FUSE)
            for (int k = 0; k < ss->nlhs; k++)
                ir_vec_push(&d->axes, kg_tokstr(ss->lhs[k]), 1 << 20, "axes");
        if (ss->prim == PR_CACHE_READ || ss->prim == PR_CACHE_WRITE) {
            char *name = kg_tokstr(ss->lhs[0]);
            if (kg_check_reserved(p, ss->lhs[0]))
                return -1;
            if (dry_find(&stages, name) || kg_find_param(p, ss->lhs[0]))
                return kg_err(p, ss->lhs[0], "'%s' already names a stage or a param", name);
            DryStage *c = dry_new(&stages, name);
            c->any = ss->prim == PR_CACHE_READ || d->any;
            for (int k = 0; ss->prim == PR_CACHE_WRITE && k < d->axes.n; k++)
                ir_vec_push(&c->axes, d->axes.items[k], 1 << 20, "axes");
        }
    }
    return 0;
}
