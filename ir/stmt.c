/* stmt.c - the loop IR: buffers, statements, kernels and their text dump. */
#include "ir.h"

#include <string.h>

Buffer *ir_buffer_new(const char *name, DType dtype, int ndim, const int64_t *shape, Scope scope)
{
    Buffer *b = ir_alloc(sizeof *b);
    b->name = ir_strdup(name);
    b->dtype = dtype;
    b->ndim = ndim;
    b->scope = scope;
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        b->shape[i] = shape[i];
        b->strides[i] = stride;
        stride *= shape[i];
    }
    b->size = stride;
    return b;
}

Expr *const *ir_buffer_run_ext(const Buffer *b)
{
    int dyn = 0, run = 0;
    for (int i = 0; i < b->ndim; i++) {
        dyn |= b->dyn[i] != NULL;
        run |= b->run_ext[i] != NULL;
    }
    return dyn ? b->dyn : run ? b->run_ext : NULL;
}

Expr *ir_buffer_stride(const Buffer *b, int d)
{
    Expr *const *ext = ir_buffer_run_ext(b);
    if (!ext)
        return ir_idx(b->strides[d]);
    Expr *s = ir_idx(1);
    for (int i = b->ndim - 1; i > d; i--)
        s = ir_mul(s, ext[i] ? ext[i] : ir_idx(b->shape[i]));
    return s;
}

static Stmt *mk(StmtKind kind)
{
    Stmt *s = ir_alloc(sizeof *s);
    s->kind = kind;
    return s;
}

Stmt *ir_for(Var *v, Expr *min, Expr *extent, ForKind kind, Stmt *body)
{
    Stmt *s = mk(S_FOR);
    s->u.loop.var = v;
    s->u.loop.min = min;
    s->u.loop.extent = extent;
    s->u.loop.kind = kind;
    s->u.loop.body = body;
    return s;
}

Stmt *ir_let(Var *v, Expr *value, Stmt *body)
{
    Stmt *s = mk(S_LET);
    s->u.let.var = v;
    s->u.let.value = value;
    s->u.let.body = body;
    return s;
}

Stmt *ir_if(Expr *cond, Stmt *then, Stmt *els)
{
    Stmt *s = mk(S_IF);
    s->u.cond.cond = cond;
    s->u.cond.then = then;
    s->u.cond.els = els;
    return s;
}

Stmt *ir_if_like(const Stmt *from, Expr *cond, Stmt *then, Stmt *els)
{
    Stmt *s = ir_if(cond, then, els);
    s->u.cond.likely = from->u.cond.likely;
    return s;
}

Stmt *ir_for_like(const Stmt *from, Expr *min, Expr *extent, Stmt *body)
{
    Stmt *r = ir_for(from->u.loop.var, min, extent, from->u.loop.kind, body);
    r->u.loop.bind_tag = from->u.loop.bind_tag;
    r->u.loop.tensorize = from->u.loop.tensorize;
    return r;
}

Stmt *ir_store(Buffer *b, Expr *index, Expr *value)
{
    Stmt *s = mk(S_STORE);
    s->u.store.buf = b;
    s->u.store.index = index;
    s->u.store.value = value;
    return s;
}

Stmt *ir_allocate(Buffer *b, Stmt *body)
{
    Stmt *s = mk(S_ALLOC);
    s->u.alloc.buf = b;
    s->u.alloc.body = body;
    return s;
}

Stmt *ir_barrier(void) { return mk(S_BARRIER); }

Stmt *ir_prefetch(Buffer *b, Expr *index)
{
    Stmt *s = mk(S_PREFETCH);
    s->u.store.buf = b;
    s->u.store.index = index;
    return s;
}

Stmt *ir_comment(const char *text)
{
    Stmt *s = mk(S_COMMENT);
    s->u.comment = ir_strdup(text);
    return s;
}

Stmt *ir_seq(Stmt **items, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        if (items[i])
            total += items[i]->kind == S_SEQ ? items[i]->u.seq.n : 1;
    if (total == 0)
        return NULL;
    if (total == 1)
        for (int i = 0; i < n; i++)
            if (items[i] && items[i]->kind != S_SEQ)
                return items[i];
    Stmt *s = mk(S_SEQ);
    s->u.seq.items = ir_alloc(sizeof(Stmt *) * (size_t)total);
    for (int i = 0; i < n; i++) {
        if (!items[i])
            continue;
        if (items[i]->kind == S_SEQ)
            for (int j = 0; j < items[i]->u.seq.n; j++)
                s->u.seq.items[s->u.seq.n++] = items[i]->u.seq.items[j];
        else
            s->u.seq.items[s->u.seq.n++] = items[i];
    }
    return s;
}

Stmt *ir_seq2(Stmt *a, Stmt *b)
{
    Stmt *items[2] = {a, b};
    return ir_seq(items, 2);
}

Stmt *ir_stmt_subst(Stmt *s, Var **vars, Expr **values, int n)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case S_FOR: {
        Stmt *r = ir_for(s->u.loop.var, ir_subst(s->u.loop.min, vars, values, n),
                         ir_subst(s->u.loop.extent, vars, values, n), s->u.loop.kind,
                         ir_stmt_subst(s->u.loop.body, vars, values, n));
        r->u.loop.bind_tag = s->u.loop.bind_tag;
        r->u.loop.tensorize = s->u.loop.tensorize;
        return r;
    }
    case S_LET:
        return ir_let(s->u.let.var, ir_subst(s->u.let.value, vars, values, n),
                      ir_stmt_subst(s->u.let.body, vars, values, n));
    case S_IF:
        return ir_if_like(s, ir_subst(s->u.cond.cond, vars, values, n), ir_stmt_subst(s->u.cond.then, vars, values, n),
                          ir_stmt_subst(s->u.cond.els, vars, values, n));
    case S_STORE:
        return ir_store(s->u.store.buf, ir_subst(s->u.store.index, vars, values, n),
                        ir_subst(s->u.store.value, vars, values, n));
    case S_PREFETCH: return ir_prefetch(s->u.store.buf, ir_subst(s->u.store.index, vars, values, n));
    case S_ALLOC: return ir_allocate(s->u.alloc.buf, ir_stmt_subst(s->u.alloc.body, vars, values, n));
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = ir_stmt_subst(s->u.seq.items[i], vars, values, n);
        return ir_seq(items, s->u.seq.n);
    }
    case S_COMMENT:
    case S_BARRIER: return s;
    }
    return s;
}

/* ---------------------------------------------------------------- dump */

static const char *forkind_name[] = {"for", "parallel for", "vectorized for", "unrolled for", "bound for",
                                     "tensorized for"};
static const char *scope_name[] = {"param", "workspace", "local", "shared"};

static void pad(FILE *f, int indent)
{
    for (int i = 0; i < indent; i++)
        fputs("  ", f);
}

void ir_print_stmt(FILE *f, const Stmt *s, int indent)
{
    if (!s)
        return;
    switch (s->kind) {
    case S_FOR:
        pad(f, indent);
        fprintf(f, "%s %s in [", forkind_name[s->u.loop.kind], s->u.loop.var->name);
        ir_print_expr(f, s->u.loop.min);
        fputs(", +", f);
        ir_print_expr(f, s->u.loop.extent);
        fputs(")", f);
        if (s->u.loop.bind_tag)
            fprintf(f, " bound to %s", s->u.loop.bind_tag);
        if (s->u.loop.tensorize)
            fprintf(f, " as %s", s->u.loop.tensorize->name);
        fputs(":\n", f);
        ir_print_stmt(f, s->u.loop.body, indent + 1);
        return;
    case S_LET:
        pad(f, indent);
        fprintf(f, "let %s = ", s->u.let.var->name);
        ir_print_expr(f, s->u.let.value);
        fputc('\n', f);
        ir_print_stmt(f, s->u.let.body, indent);
        return;
    case S_IF:
        pad(f, indent);
        fputs("if ", f);
        ir_print_expr(f, s->u.cond.cond);
        fputs(":\n", f);
        ir_print_stmt(f, s->u.cond.then, indent + 1);
        if (s->u.cond.els) {
            pad(f, indent);
            fputs("else:\n", f);
            ir_print_stmt(f, s->u.cond.els, indent + 1);
        }
        return;
    case S_STORE:
        pad(f, indent);
        fprintf(f, "%s[", s->u.store.buf->name);
        ir_print_expr(f, s->u.store.index);
        fputs("] = ", f);
        ir_print_expr(f, s->u.store.value);
        fputc('\n', f);
        return;
    case S_ALLOC: {
        const Buffer *b = s->u.alloc.buf;
        pad(f, indent);
        fprintf(f, "allocate %s: %s[%lld] in %s", b->name, ir_dtype_name(b->dtype), (long long)b->size,
                scope_name[b->scope]);
        if (b->scope == SCOPE_WORKSPACE)
            fprintf(f, " at byte %lld", (long long)b->ws_offset);
        fputc('\n', f);
        ir_print_stmt(f, s->u.alloc.body, indent);
        return;
    }
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            ir_print_stmt(f, s->u.seq.items[i], indent);
        return;
    case S_COMMENT:
        pad(f, indent);
        fprintf(f, "# %s\n", s->u.comment);
        return;
    case S_BARRIER:
        pad(f, indent);
        fprintf(f, "barrier\n");
        return;
    case S_PREFETCH:
        pad(f, indent);
        fprintf(f, "prefetch %s[", s->u.store.buf->name);
        ir_print_expr(f, s->u.store.index);
        fputs("]\n", f);
        return;
    }
}

void ir_print_kernel(FILE *f, const Kernel *k)
{
    fprintf(f, "kernel %s(", k->name);
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        fprintf(f, "%s%s%s: %s[", i ? ", " : "", b->is_input ? "" : "out ", b->name, ir_dtype_name(b->dtype));
        for (int d = 0; d < b->ndim; d++)
            fprintf(f, "%s%lld", d ? ", " : "", (long long)b->shape[d]);
        fputc(']', f);
    }
    fprintf(f, ") workspace %lld bytes\n", (long long)k->workspace_bytes);
    ir_print_stmt(f, k->body, 1);
}

int ir_stmt_stores(const Stmt *s, const Buffer *b)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return ir_stmt_stores(s->u.loop.body, b);
    case S_LET: return ir_stmt_stores(s->u.let.body, b);
    case S_IF: return ir_stmt_stores(s->u.cond.then, b) || ir_stmt_stores(s->u.cond.els, b);
    case S_STORE: return s->u.store.buf == b;
    case S_ALLOC: return ir_stmt_stores(s->u.alloc.body, b);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (ir_stmt_stores(s->u.seq.items[i], b))
                return 1;
        return 0;
    default: return 0;
    }
}

int ir_stmt_has_barrier(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_BARRIER: return 1;
    case S_FOR: return ir_stmt_has_barrier(s->u.loop.body);
    case S_LET: return ir_stmt_has_barrier(s->u.let.body);
    case S_IF: return ir_stmt_has_barrier(s->u.cond.then) || ir_stmt_has_barrier(s->u.cond.els);
    case S_ALLOC: return ir_stmt_has_barrier(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (ir_stmt_has_barrier(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

int ir_stmt_uses_var(const Stmt *s, const Var *v)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR:
        return ir_expr_uses_var(s->u.loop.min, v) || ir_expr_uses_var(s->u.loop.extent, v) ||
               ir_stmt_uses_var(s->u.loop.body, v);
    case S_LET: return ir_expr_uses_var(s->u.let.value, v) || ir_stmt_uses_var(s->u.let.body, v);
    case S_IF:
        return ir_expr_uses_var(s->u.cond.cond, v) || ir_stmt_uses_var(s->u.cond.then, v) ||
               ir_stmt_uses_var(s->u.cond.els, v);
    case S_STORE:
        return ir_expr_uses_var(s->u.store.index, v) || (s->u.store.value && ir_expr_uses_var(s->u.store.value, v));
    case S_PREFETCH: return ir_expr_uses_var(s->u.store.index, v);
    case S_ALLOC: return ir_stmt_uses_var(s->u.alloc.body, v);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (ir_stmt_uses_var(s->u.seq.items[i], v))
                return 1;
        return 0;
    default: return 0;
    }
}
