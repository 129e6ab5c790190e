/* schedule.c - stages and the schedule primitives. Each primitive checks its
 * preconditions and fails with a message naming the stage and axes. */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LEAF 64
#define MAX_STAGES 100000
#define MAX_RELS 64

static Stage *stage_new(Tensor *t)
{
    Stage *st = ir_alloc(sizeof *st);
    st->t = t;
    st->scope = SCOPE_WORKSPACE;
    st->align_axis = -1;
    if (ir_tensor_is_leaf(t))
        return st;
    for (int d = 0; d < t->ndim; d++)
        ir_vec_push(&st->root, t->axes[d], MAX_LEAF, "axes");
    if (t->kind == T_COMPUTE && t->body->kind == E_REDUCE)
        for (int r = 0; r < t->body->u.reduce.naxes; r++)
            ir_vec_push(&st->root, t->body->u.reduce.axes[r], MAX_LEAF, "axes");
    for (int i = 0; i < st->root.n; i++)
        ir_vec_push(&st->leaf, st->root.items[i], MAX_LEAF, "axes");
    return st;
}

Schedule *sch_create(Program *p)
{
    Schedule *s = ir_alloc(sizeof *s);
    s->prog = p;
    for (int i = 0; i < p->tensors.n; i++)
        ir_vec_push(&s->stages, stage_new(p->tensors.items[i]), MAX_STAGES, "stages");
    return s;
}

Stage *sch_stage(Schedule *s, Tensor *t)
{
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (st->t == t)
            return st;
    }
    return NULL;
}

Stage *sch_find(Schedule *s, const char *name)
{
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (!strcmp(st->t->name, name))
            return st;
    }
    return NULL;
}

IterVar *sch_find_axis(Stage *st, const char *name)
{
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        if (!strcmp(iv->var->name, name))
            return iv;
    }
    for (int i = 0; i < st->root.n; i++) {
        IterVar *iv = st->root.items[i];
        if (!strcmp(iv->var->name, name))
            return iv;
    }
    return NULL;
}

static int leaf_pos(Stage *st, IterVar *iv)
{
    for (int i = 0; i < st->leaf.n; i++)
        if (st->leaf.items[i] == iv)
            return i;
    return -1;
}

static const char *axis_list(Stage *st)
{
    StrBuf b = {0};
    for (int i = 0; i < st->leaf.n; i++)
        sb_printf(&b, "%s%s", i ? ", " : "", ((IterVar *)st->leaf.items[i])->var->name);
    char *r = ir_strdup(b.data ? b.data : "none");
    sb_free(&b);
    return r;
}

static int need_leaf(Stage *st, IterVar *iv, const char *prim)
{
    if (!iv)
        return ir_fail("%s: missing axis", prim);
    if (leaf_pos(st, iv) < 0)
        return ir_fail("%s: '%s' is not a current loop axis of stage %s (axes: %s)", prim, iv->var->name,
                       st->t->name, axis_list(st));
    return 0;
}

static int need_loops(Stage *st, const char *prim)
{
    if (ir_tensor_is_leaf(st->t))
        return ir_fail("%s: %s is an input and has no loops", prim, st->t->name);
    if (st->attach == ATTACH_INLINE)
        return ir_fail("%s: %s is inlined and has no loops of its own", prim, st->t->name);
    return 0;
}

static void add_rel(Stage *st, Relation r)
{
    if (st->nrels == st->caprels)
        st->rels = ir_grow_arena(st->rels, st->nrels, &st->caprels, sizeof *st->rels, 8);
    st->rels[st->nrels++] = r;
}

int sch_split(Stage *st, IterVar *parent, int64_t factor, IterVar **outer, IterVar **inner)
{
    if (need_loops(st, "split") || need_leaf(st, parent, "split"))
        return -1;
    if (factor < 1)
        return ir_fail("split: factor %lld of %s.%s must be at least 1", (long long)factor, st->t->name,
                       parent->var->name);
    if (st->t->kind == T_SCAN && parent == st->t->axes[0])
        return ir_fail("split: the time axis %s of scan %s cannot be split", parent->var->name, st->t->name);
    if (st->nrels >= MAX_RELS || st->leaf.n >= MAX_LEAF)
        return ir_fail("split: too many loops on %s (limit %d)", st->t->name, MAX_LEAF);
    int64_t in = factor < parent->extent ? factor : parent->extent;
    IterVar *o = ir_itervar_new(ir_fmt("%s_outer", parent->var->name), (parent->extent + factor - 1) / factor,
                                parent->kind);
    IterVar *i = ir_itervar_new(ir_fmt("%s_inner", parent->var->name), in, parent->kind);
    int p = leaf_pos(st, parent);
    ir_vec_push(&st->leaf, NULL, MAX_LEAF, "loop axes");
    memmove(&st->leaf.items[p + 2], &st->leaf.items[p + 1], sizeof(void *) * (size_t)(st->leaf.n - p - 2));
    st->leaf.items[p] = o;
    st->leaf.items[p + 1] = i;
    add_rel(st, (Relation){REL_SPLIT, parent, o, i, NULL, factor});
    *outer = o;
    *inner = i;
    return 0;
}

int sch_tile(Stage *st, IterVar *x, IterVar *y, int64_t fx, int64_t fy, IterVar **xo, IterVar **yo, IterVar **xi,
             IterVar **yi)
{
    if (need_loops(st, "tile") || need_leaf(st, x, "tile") || need_leaf(st, y, "tile"))
        return -1;
    if (x == y)
        return ir_fail("tile: both axes are %s", x->var->name);
    if (sch_split(st, x, fx, xo, xi) || sch_split(st, y, fy, yo, yi))
        return -1;
    IterVar *order[4] = {*xo, *yo, *xi, *yi};
    return sch_reorder(st, order, 4);
}

int sch_fuse(Stage *st, IterVar *outer, IterVar *inner, IterVar **fused)
{
    if (need_loops(st, "fuse") || need_leaf(st, outer, "fuse") || need_leaf(st, inner, "fuse"))
        return -1;
    int p = leaf_pos(st, outer), q = leaf_pos(st, inner);
    if (q != p + 1)
        return ir_fail("fuse: %s must come right before %s in the loop order of %s (order: %s)", outer->var->name,
                       inner->var->name, st->t->name, axis_list(st));
    if (outer->kind != inner->kind)
        return ir_fail("fuse: cannot fuse the spatial and reduce axes %s and %s of %s", outer->var->name,
                       inner->var->name, st->t->name);
    if (st->t->kind == T_SCAN && outer == st->t->axes[0])
        return ir_fail("fuse: the time axis %s of scan %s cannot be fused", outer->var->name, st->t->name);
    if (st->nrels >= MAX_RELS)
        return ir_fail("fuse: too many splits and fuses on %s (limit %d)", st->t->name, MAX_RELS);
    /* a chain of fuses reads n_co_h_fused, not n_co_fused_h_fused */
    const char *on = outer->var->name;
    size_t ol = strlen(on);
    int chained = ol > 6 && !strcmp(on + ol - 6, "_fused");
    IterVar *f = ir_itervar_new(ir_fmt("%.*s_%s_fused", (int)(chained ? ol - 6 : ol), on, inner->var->name),
                                outer->extent * inner->extent, outer->kind);
    st->leaf.items[p] = f;
    memmove(&st->leaf.items[q], &st->leaf.items[q + 1], sizeof(void *) * (size_t)(st->leaf.n - q - 1));
    st->leaf.n--;
    add_rel(st, (Relation){REL_FUSE, NULL, outer, inner, f, 0});
    *fused = f;
    return 0;
}

int sch_reorder(Stage *st, IterVar **order, int n)
{
    if (need_loops(st, "reorder"))
        return -1;
    int pos[MAX_LEAF];
    for (int i = 0; i < n; i++) {
        if (need_leaf(st, order[i], "reorder"))
            return -1;
        pos[i] = leaf_pos(st, order[i]);
        for (int j = 0; j < i; j++)
            if (order[j] == order[i])
                return ir_fail("reorder: axis %s is listed twice", order[i]->var->name);
    }
    /* the listed axes take the listed order within the positions they occupy */
    int sorted[MAX_LEAF];
    memcpy(sorted, pos, sizeof(int) * (size_t)n);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            int t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    if (st->t->kind == T_SCAN) {
        for (int i = 0; i < n; i++)
            if (order[i] == st->t->axes[0] && sorted[i] != 0)
                return ir_fail("reorder: the time axis %s of scan %s must stay outermost", order[i]->var->name,
                               st->t->name);
        if (n > 0 && sorted[0] == 0 && order[0] != st->t->axes[0] && leaf_pos(st, st->t->axes[0]) == 0)
            return ir_fail("reorder: the time axis %s of scan %s must stay outermost", st->t->axes[0]->var->name,
                           st->t->name);
    }
    for (int i = 0; i < n; i++)
        st->leaf.items[sorted[i]] = order[i];
    return 0;
}

static int annotate(Stage *st, IterVar *iv, Annotation ann, const char *prim)
{
    if (need_loops(st, prim) || need_leaf(st, iv, prim))
        return -1;
    if (iv->ann != ANN_NONE && iv->ann != ann)
        return ir_fail("%s: axis %s of %s is already annotated", prim, iv->var->name, st->t->name);
    if (st->t->kind == T_SCAN && iv == st->t->axes[0])
        return ir_fail("%s: the time axis %s of scan %s must stay a serial loop", prim, iv->var->name, st->t->name);
    iv->ann = ann;
    return 0;
}

int sch_unroll(Stage *st, IterVar *iv) { return annotate(st, iv, ANN_UNROLL, "unroll"); }

int sch_vectorize(Stage *st, IterVar *iv)
{
    if (annotate(st, iv, ANN_VECTORIZE, "vectorize"))
        return -1;
    if (iv->kind == IV_REDUCE) {
        iv->ann = ANN_NONE;
        return ir_fail("vectorize: %s is a reduce axis of %s; its iterations depend on each other "
                       "(vectorize a spatial axis and reorder it innermost)",
                       iv->var->name, st->t->name);
    }
    return 0;
}

int sch_parallel(Stage *st, IterVar *iv)
{
    if (annotate(st, iv, ANN_PARALLEL, "parallel"))
        return -1;
    if (iv->kind == IV_REDUCE) {
        iv->ann = ANN_NONE;
        return ir_fail("parallel: %s is a reduce axis of %s; parallel iterations would race on the sum",
                       iv->var->name, st->t->name);
    }
    return 0;
}

int sch_bind(Stage *st, IterVar *iv, const char *tag)
{
    static const char *tags[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
                                 "threadIdx.z"};
    int ok = 0;
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
        ok |= !strcmp(tags[i], tag);
    if (!ok)
        return ir_fail("bind: unknown thread tag '%s' (use blockIdx.x/y/z or threadIdx.x/y/z)", tag);
    if (annotate(st, iv, ANN_BIND, "bind"))
        return -1;
    if (iv->kind == IV_REDUCE) {
        iv->ann = ANN_NONE;
        return ir_fail("bind: %s is a reduce axis of %s", iv->var->name, st->t->name);
    }
    iv->bind_tag = ir_strdup(tag);
    return 0;
}

/* The micro-kernels tensorize knows (templates/kgen_ukernels.h): fma_bcast and fma, each
 * also with a fixed width (_f32xW); 0, or -1 if unknown. */
static int tensorize_name(const char *name, int *kinds, int *width)
{
    static const struct {
        const char *name;
        int kind;
    } kernels[] = {{"fma_bcast", TZ_BCAST}, {"fma", TZ_ELEM}};
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
        *kinds = kernels[k].kind;
        *width = 0;
        if (!strcmp(name, kernels[k].name))
            return 0;
        for (int i = 0; i < IR_TZ_NWIDTHS; i++)
            if (!strcmp(name, ir_fmt("%s_f32x%d", kernels[k].name, ir_tz_widths[i]))) {
                *width = ir_tz_widths[i];
                return 0;
            }
    }
    return -1;
}

static int tensorize_as(Stage *st, IterVar *iv, const char *name, const char *where, int lanes, int soft)
{
    const char *prim = "tensorize";
    Tensorize *t = ir_alloc(sizeof *t);
    if (need_loops(st, prim) || need_leaf(st, iv, prim))
        return -1;
    if (tensorize_name(name, &t->kinds, &t->width))
        return ir_fail("tensorize: unknown micro-kernel '%s' (kgen has fma_bcast and fma, and fma_bcast_f32xW "
                       "and fma_f32xW for a fixed width W of 4, 8, 16, 32 or 64)", name);
    if (soft)
        t->kinds = TZ_BCAST | TZ_ELEM;   /* kgen's own request: whichever the loop matches */
    if (iv->kind == IV_REDUCE)
        return ir_fail("tensorize: %s is a reduce axis of %s; %s runs along a spatial axis of the "
                       "accumulator (reorder it innermost)", iv->var->name, st->t->name, name);
    if (iv->ann != ANN_NONE && iv->ann != ANN_VECTORIZE && iv->ann != ANN_TENSORIZE)
        return ir_fail("tensorize: axis %s of %s is already annotated", iv->var->name, st->t->name);
    Tensor *x = st->t;
    if (x->kind != T_COMPUTE || x->body->kind != E_REDUCE || x->body->u.reduce.op != RED_SUM || x->dtype != DT_F32)
        return ir_fail("tensorize: %s is not a sum reduction of f32 values; %s accumulates acc[j] += %s "
                       "(apply it to the stage that reduces, e.g. the cache_write copy)", x->name, name,
                       t->kinds == TZ_ELEM ? "a[j] * b[j]" : "a * b[j]");
    t->name = ir_strdup(name);
    t->lanes = lanes;
    t->soft = soft;
    t->stage = x->name;
    t->axis = iv->var->name;
    t->where = where ? ir_strdup(where) : NULL;
    iv->ann = ANN_TENSORIZE;
    iv->tensorize = t;
    return 0;
}

int sch_tensorize(Stage *st, IterVar *iv, const char *name, const char *where)
{
    return tensorize_as(st, iv, name, where, 0, 0);
}

int sch_tensorize_auto(Schedule *s)
{
    if (s->simd_lanes <= 0)
        return 0;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if (t->kind != T_COMPUTE || st->attach == ATTACH_INLINE || t->body->kind != E_REDUCE ||
            t->body->u.reduce.op != RED_SUM || t->dtype != DT_F32)
            continue;
        for (int k = 0; k < st->leaf.n; k++) {
            IterVar *iv = st->leaf.items[k];
            if (iv->ann == ANN_VECTORIZE && tensorize_as(st, iv, "fma_bcast", NULL, s->simd_lanes, 1))
                return -1;
        }
    }
    return 0;
}

static int check_intermediate(Stage *st, const char *prim)
{
    if (ir_tensor_is_leaf(st->t))
        return ir_fail("%s: %s is an input", prim, st->t->name);
    if (st->t->is_output)
        return ir_fail("%s: %s is an output; it is stored in the caller's buffer", prim, st->t->name);
    if (st->t->kind == T_SCAN)
        return ir_fail("%s: %s is a scan; scans are computed at the root", prim, st->t->name);
    return 0;
}

int sch_compute_at(Schedule *s, Stage *st, Stage *parent, IterVar *iv)
{
    (void)s;
    if (check_intermediate(st, "compute_at") || need_loops(parent, "compute_at") ||
        need_leaf(parent, iv, "compute_at"))
        return -1;
    if (st == parent)
        return ir_fail("compute_at: %s cannot be computed inside itself", st->t->name);
    for (Stage *p = parent; p; p = p->attach == ATTACH_AT ? p->attach_stage : NULL)
        if (p == st)
            return ir_fail("compute_at: %s is already computed inside %s", parent->t->name, st->t->name);
    if (st->attach == ATTACH_INLINE)
        return ir_fail("compute_at: %s is already inlined", st->t->name);
    st->attach = ATTACH_AT;
    st->attach_stage = parent;
    st->attach_iv = iv;
    return 0;
}

int sch_compute_inline(Schedule *s, Stage *st)
{
    (void)s;
    if (check_intermediate(st, "compute_inline"))
        return -1;
    if (ir_expr_has_reduce(st->t->body))
        return ir_fail("compute_inline: %s contains a reduction; compute it at the root or with compute_at",
                       st->t->name);
    if (st->nrels)
        return ir_fail("compute_inline: %s has split or fused axes; an inlined tensor has no loops",
                       st->t->name);
    st->attach = ATTACH_INLINE;
    st->attach_stage = NULL;
    st->attach_iv = NULL;
    return 0;
}

int sch_compute_root(Stage *st)
{
    if (ir_tensor_is_leaf(st->t))
        return ir_fail("compute_root: %s is an input", st->t->name);
    st->attach = ATTACH_ROOT;
    st->attach_stage = NULL;
    st->attach_iv = NULL;
    return 0;
}

/* Replace reads of `from` by reads of `to` (same indices). */
static Expr *retarget(Expr *e, Tensor *from, Tensor *to)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return e;
    case E_BIN: return ir_bin(e->u.bin.op, retarget(e->u.bin.a, from, to), retarget(e->u.bin.b, from, to));
    case E_UN: return ir_un(e->u.un.op, retarget(e->u.un.a, from, to));
    case E_CAST:
    case E_BITCAST: return ir_cast_like(e, retarget(e->u.cast.a, from, to));
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            args[i] = retarget(e->u.call.args[i], from, to);
        return ir_call(e->u.call.fn, args);
    }
    case E_SELECT:
        return ir_select(retarget(e->u.sel.cond, from, to), retarget(e->u.sel.t, from, to),
                         retarget(e->u.sel.f, from, to));
    case E_REDUCE:
        return ir_reduce(e->u.reduce.op, retarget(e->u.reduce.body, from, to), e->u.reduce.axes,
                         e->u.reduce.naxes);
    case E_ACCESS: {
        Expr *idx[KG_MAX_DIMS];
        for (int i = 0; i < e->u.access.n; i++)
            idx[i] = retarget(e->u.access.idx[i], from, to);
        return ir_access(e->u.access.t == from ? to : e->u.access.t, idx, e->u.access.n);
    }
    }
    return e;
}

/* Insert a stage (and its tensor) at position `at` of the schedule and the program. */
static void insert_stage(Schedule *s, Stage *st, int at)
{
    ir_vec_push(&s->stages, NULL, MAX_STAGES, "stages");
    memmove(&s->stages.items[at + 1], &s->stages.items[at], sizeof(void *) * (size_t)(s->stages.n - at - 1));
    s->stages.items[at] = st;
    Program *p = s->prog;
    int pat = st->t->id;
    ir_vec_push(&p->tensors, NULL, MAX_STAGES, "tensors");
    memmove(&p->tensors.items[pat + 1], &p->tensors.items[pat], sizeof(void *) * (size_t)(p->tensors.n - pat - 1));
    p->tensors.items[pat] = st->t;
    for (int i = 0; i < p->tensors.n; i++)
        ((Tensor *)p->tensors.items[i])->id = i;
}

static int stage_index(Schedule *s, Stage *st)
{
    for (int i = 0; i < s->stages.n; i++)
        if (s->stages.items[i] == st)
            return i;
    return -1;
}

static const char *unique_name(Schedule *s, const char *base)
{
    const char *name = base;
    for (int k = 1; sch_find(s, name); k++)
        name = ir_fmt("%s_%d", base, k);
    return name;
}

Stage *sch_cache_read(Schedule *s, Tensor *t, Scope scope, Stage **readers, int nreaders)
{
    if (nreaders < 1) {
        ir_fail("cache_read: %s needs at least one reader", t->name);
        return NULL;
    }
    for (int i = 0; i < nreaders; i++) {
        if (ir_tensor_is_leaf(readers[i]->t) || !ir_tensor_reads(readers[i]->t, t)) {
            ir_fail("cache_read: %s does not read %s", readers[i]->t->name, t->name);
            return NULL;
        }
    }
    IterVar *axes[KG_MAX_DIMS];
    Expr *idx[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        axes[d] = ir_itervar_new(ir_tensor_is_leaf(t) ? ir_fmt("ax%d", d) : t->axes[d]->var->name, t->shape[d],
                                 IV_SPATIAL);
        axes[d]->dyn = t->dyn[d];   /* (a dim decided at run time stays so) */
        idx[d] = ir_varref(axes[d]->var);
    }
    Tensor *c = ir_compute(unique_name(s, ir_fmt("%s_%s", t->name, scope == SCOPE_SHARED ? "shared" : "local")),
                           t->ndim, axes, ir_access(t, idx, t->ndim));
    if (!c)
        return NULL;
    memcpy(c->dyn, t->dyn, sizeof c->dyn);
    /* the copy goes right before the first reader */
    int at = s->stages.n;
    for (int i = 0; i < nreaders; i++) {
        int k = stage_index(s, readers[i]);
        if (k < at)
            at = k;
    }
    c->id = ((Stage *)s->stages.items[at])->t->id;
    Stage *st = stage_new(c);
    st->scope = scope;
    st->origin = ir_fmt("cache_read(%s)", t->name);
    insert_stage(s, st, at);
    for (int i = 0; i < nreaders; i++) {
        Tensor *r = readers[i]->t;
        if (r->kind == T_COMPUTE) {
            Expr *nb = retarget(r->body, t, c);
            if (r->body->kind == E_REDUCE && nb->kind != E_REDUCE)
                ir_die("reduce lost");
            r->body = nb;
        } else {
            r->init = retarget(r->init, t, c);
            r->update = retarget(r->update, t, c);
        }
    }
    return st;
}

/* ---------------------------------------------------------------- constant panels */

typedef struct {
    const Tensor *t;
    const Var *v;
} PanelRead;

/* Is e a read of t other than t[..., k, j] with j exactly v and no other index using v? */
static int not_panel_read(const Expr *e, const void *ctx)
{
    const PanelRead *p = ctx;
    if (e->kind != E_ACCESS || e->u.access.t != p->t)
        return 0;
    int n = e->u.access.n;
    const Expr *j = e->u.access.idx[n - 1];
    if (j->kind != E_VAR || j->u.var != p->v)
        return 1;
    for (int i = 0; i < n - 1; i++)
        if (ir_expr_uses_var(e->u.access.idx[i], p->v))
            return 1;
    return 0;
}

typedef struct {
    Tensor *from, *to;
    int64_t V;
} PanelRw;

static Expr *panel_rw(Expr *e, void *ctx)
{
    PanelRw *c = ctx;
    e = ir_expr_map(e, panel_rw, c);
    if (e->kind != E_ACCESS || e->u.access.t != c->from)
        return e;
    int n = e->u.access.n;
    Expr *idx[KG_MAX_DIMS], *j = e->u.access.idx[n - 1];
    memcpy(idx, e->u.access.idx, sizeof *idx * (size_t)(n - 2));
    idx[n - 2] = ir_bin(OP_DIV, j, ir_idx(c->V));
    idx[n - 1] = e->u.access.idx[n - 2];
    idx[n] = ir_bin(OP_MOD, j, ir_idx(c->V));
    return ir_access(c->to, idx, n + 1);
}

Tensor *sch_const_panels(Schedule *s, Stage *st, Tensor *t, int64_t V)
{
    Tensor *r = st->t;
    int n = t->ndim;
    if (t->kind != T_CONSTANT || !t->data || t->sym || n < 2 || n >= KG_MAX_DIMS || V < 1 || r->kind != T_COMPUTE ||
        r->ndim < 1 || ir_dtype_is_packed(t->dtype) || !ir_tensor_reads(r, t))
        return NULL;
    PanelRead pr = {t, r->axes[r->ndim - 1]->var};
    if (ir_expr_find(r->body, not_panel_read, &pr))
        return NULL;
    const char *name = ir_fmt("%s_panels%lld", t->name, (long long)V);
    Stage *have = sch_find(s, name);
    Tensor *tp = have ? have->t : NULL;
    if (!tp) {
        int64_t N = t->shape[n - 1], K = t->shape[n - 2], outer = 1, NP = (N + V - 1) / V, shape[KG_MAX_DIMS];
        for (int d = 0; d < n - 2; d++) {
            outer *= t->shape[d];
            shape[d] = t->shape[d];
        }
        shape[n - 2] = NP, shape[n - 1] = K, shape[n] = V;
        size_t es = (size_t)ir_dtype_bytes(t->dtype);
        unsigned char *buf = calloc((size_t)(outer * NP * K * V) * es + 1, 1);
        if (!buf)
            ir_die("out of memory");
        const unsigned char *src = t->data;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t jo = 0; jo < NP; jo++)
                for (int64_t k = 0; k < K; k++)
                    for (int64_t ji = 0; ji < V && jo * V + ji < N; ji++)
                        memcpy(buf + es * (size_t)(((o * NP + jo) * K + k) * V + ji),
                               src + es * (size_t)((o * K + k) * N + jo * V + ji), es);
        tp = ir_constant(name, t->dtype, n + 1, shape, buf);
        free(buf);
        if (!tp)
            return NULL;
        tp->comment = ir_fmt("'%s' in panels of %lld columns", t->name, (long long)V);
        tp->id = t->id;
        Stage *ps = stage_new(tp);
        ps->origin = ir_fmt("panels(%s)", t->name);
        insert_stage(s, ps, stage_index(s, sch_stage(s, t)));
    }
    PanelRw c = {t, tp, V};
    r->body = panel_rw(r->body, &c);
    return tp;
}

Stage *sch_cache_write(Schedule *s, Stage *st, Scope scope)
{
    Tensor *t = st->t;
    if (t->kind != T_COMPUTE) {
        ir_fail("cache_write: %s is not a compute", t->name);
        return NULL;
    }
    if (st->nrels || st->attach != ATTACH_ROOT) {
        ir_fail("cache_write: apply it to %s before split, tile, fuse or compute_at", t->name);
        return NULL;
    }
    /* the cache gets fresh axes with the same names (and run-time extents); the reduction
     * moves into it */
    IterVar *axes[KG_MAX_DIMS];
    Var *vars[KG_MAX_DIMS + 16];
    Expr *vals[KG_MAX_DIMS + 16];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        axes[d] = ir_itervar_new(t->axes[d]->var->name, t->axes[d]->extent, IV_SPATIAL);
        axes[d]->dyn = t->dyn[d];
        vars[n] = t->axes[d]->var;
        vals[n++] = ir_varref(axes[d]->var);
    }
    Expr *body = t->body;
    if (body->kind == E_REDUCE) {
        IterVar *raxes[16];
        if (body->u.reduce.naxes > 16) {
            ir_fail("cache_write: too many reduce axes");
            return NULL;
        }
        for (int r = 0; r < body->u.reduce.naxes; r++) {
            IterVar *old = body->u.reduce.axes[r];
            raxes[r] = ir_itervar_new(old->var->name, old->extent, IV_REDUCE);
            raxes[r]->dyn = old->dyn;
            vars[n] = old->var;
            vals[n++] = ir_varref(raxes[r]->var);
        }
        body = ir_reduce(body->u.reduce.op, ir_subst(body->u.reduce.body, vars, vals, n), raxes,
                         body->u.reduce.naxes);
    } else {
        body = ir_subst(body, vars, vals, n);
    }
    Tensor *c = ir_compute(unique_name(s, ir_fmt("%s_%s", t->name, scope == SCOPE_SHARED ? "shared" : "local")),
                           t->ndim, axes, body);
    if (!c)
        return NULL;
    memcpy(c->dyn, t->dyn, sizeof c->dyn);
    c->id = t->id;
    Stage *cs = stage_new(c);
    cs->scope = scope;
    cs->origin = ir_fmt("cache_write(%s)", t->name);
    insert_stage(s, cs, stage_index(s, st));
    /* t becomes a copy of the cache */
    Expr *idx[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        idx[d] = ir_varref(t->axes[d]->var);
    t->body = ir_access(c, idx, t->ndim);
    st->root.n = 0;
    st->leaf.n = 0;
    for (int d = 0; d < t->ndim; d++) {
        ir_vec_push(&st->root, t->axes[d], MAX_LEAF, "axes");
        ir_vec_push(&st->leaf, t->axes[d], MAX_LEAF, "axes");
    }
    return cs;
}

int sch_storage_align(Stage *st, int axis, int64_t factor, int64_t offset)
{
    if (check_intermediate(st, "storage_align"))
        return -1;
    if (axis < 0 || axis >= st->t->ndim - 1)
        return ir_fail("storage_align: axis %d of %s must be within 0..%d (the last dimension has stride 1)", axis,
                       st->t->name, st->t->ndim - 2);
    if (factor < 1 || offset < 0 || offset >= factor)
        return ir_fail("storage_align: need factor >= 1 and 0 <= offset < factor, got %lld and %lld",
                       (long long)factor, (long long)offset);
    st->align_axis = axis;
    st->align_factor = factor;
    st->align_offset = offset;
    return 0;
}

int sch_prefetch(Stage *st, Tensor *t, IterVar *ahead, IterVar *rows, IterVar *blocks)
{
    if (need_loops(st, "prefetch") || need_leaf(st, ahead, "prefetch") || (rows && need_leaf(st, rows, "prefetch")) ||
        (blocks && need_leaf(st, blocks, "prefetch")))
        return -1;
    if (st->t->kind != T_COMPUTE || !ir_tensor_reads(st->t, t))
        return ir_fail("prefetch: stage %s does not read %s", st->t->name, t->name);
    if (ahead->kind != IV_REDUCE)
        return ir_fail("prefetch: %s is not a reduce axis of %s (the chunks fetched ahead are those of a reduce loop)",
                       ahead->var->name, st->t->name);
    if (blocks && !rows)
        return ir_fail("prefetch: blocks axis %s needs a rows axis to take turns with", blocks->var->name);
    st->pf_tensor = t;
    st->pf_ahead = ahead;
    st->pf_rows = rows;
    st->pf_blocks = blocks;
    return 0;
}

int sch_parse_scope(const char *name, Scope *out)
{
    if (!strcmp(name, "local"))
        *out = SCOPE_LOCAL;
    else if (!strcmp(name, "shared"))
        *out = SCOPE_SHARED;
    else if (!strcmp(name, "global"))
        *out = SCOPE_WORKSPACE;
    else
        return ir_fail("unknown memory scope '%s' (use local, shared or global)", name);
    return 0;
}

void sch_print(FILE *f, Schedule *s)
{
    static const char *attach[] = {"root", "inline", "at"};
    static const char *ann[] = {"", " unroll", " vectorize", " parallel", " bind", " tensorize"};
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (ir_tensor_is_leaf(st->t))
            continue;
        fprintf(f, "stage %s: %s", st->t->name, attach[st->attach]);
        if (st->attach == ATTACH_AT)
            fprintf(f, " %s.%s", st->attach_stage->t->name, st->attach_iv->var->name);
        if (st->origin)
            fprintf(f, " (%s)", st->origin);
        fputs("\n  loops:", f);
        for (int k = 0; k < st->leaf.n; k++) {
            IterVar *iv = st->leaf.items[k];
            fprintf(f, " %s%s[%lld%s%s]", iv->var->name, iv->kind == IV_REDUCE ? "(r)" : "", (long long)iv->extent,
                    ann[iv->ann], iv->bind_tag ? iv->bind_tag : "");
        }
        fputc('\n', f);
        for (int r = 0; r < st->nrels; r++) {
            Relation *rel = &st->rels[r];
            if (rel->kind == REL_SPLIT)
                fprintf(f, "  split %s by %lld -> %s, %s\n", rel->parent->var->name, (long long)rel->factor,
                        rel->outer->var->name, rel->inner->var->name);
            else
                fprintf(f, "  fuse %s, %s -> %s\n", rel->outer->var->name, rel->inner->var->name,
                        rel->fused->var->name);
        }
    }
}
