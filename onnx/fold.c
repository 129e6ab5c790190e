/* fold.c - constant folding for the ONNX importer: the computes behind a value whose
 * inputs are all constants run at compile time (lowered alone, through the loop-IR
 * interpreter) and a constant takes its place. requires: a program under import; gives: a
 * new constant of it, or nothing. */
#include "fold.h"
#include "../schedule/schedule.h"

#include <stdlib.h>

const char *onnx_unique_name(Program *p, const char *base)
{
    const char *name = base;
    for (int k = 1; ir_program_find(p, name); k++)
        name = ir_fmt("%s_%d", base, k);
    return name;
}

/* Every tensor a constant or a compute, none with a dim decided at run time (a dim
 * computed from values, over constants: the values are the bound's, not the extent's)? */
static int all_const(const PtrVec *ts)
{
    for (int i = 0; i < ts->n; i++)
        if (((Tensor *)ts->items[i])->kind == T_PLACEHOLDER || ir_tensor_is_dynamic(ts->items[i]))
            return 0;
    return 1;
}

/* The value of t's one kernel k (every parameter a constant but t's), run by the
 * interpreter: a new constant of p, or NULL. */
static Tensor *run_kernel(Program *p, Tensor *t, Kernel *k)
{
    Tensor *r = NULL;
    void **params = calloc((size_t)k->params.n + 1, sizeof *params);
    size_t bytes = (size_t)ir_dtype_size(t->dtype, ir_tensor_numel(t));
    void *out = calloc(bytes ? bytes : 1, 1), *ws = calloc((size_t)k->workspace_bytes + 1, 1);
    if (!params || !out || !ws)
        ir_die("out of memory");
    for (int i = 0; i < k->params.n; i++) {
        Buffer *b = k->params.items[i];
        params[i] = b->constant ? (void *)b->constant->data : out;
    }
    if (!ir_interp(k, params, ws)) {
        r = ir_constant(onnx_unique_name(p, ir_fmt("%s_c", t->name)), t->dtype, t->ndim, t->shape, out);
        if (r)
            r->comment = t->comment;
    }
    free(params);
    free(out);
    free(ws);
    return r;
}

Tensor *onnx_fold(Program *p, Tensor *t)
{
    if (ir_tensor_is_leaf(t) || ir_tensor_numel(t) > GEN_MAX_FOLD_ELEMS)
        return NULL;
    PtrVec deps = {0};
    ir_program_renumber(p);
    ir_tensor_closure(p, t, &deps);
    if (!all_const(&deps))
        return NULL;
    /* a program of t's closure, in p's order, t its only output */
    Program *mini = ir_program_new("fold");
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *x = p->tensors.items[i];
        for (int j = 0; j < deps.n; j++)
            if (deps.items[j] == x) {
                ir_vec_push(&mini->tensors, x, 1 << 24, "tensors");
                break;
            }
    }
    ir_program_renumber(mini);
    int was_output = t->is_output;
    t->is_output = 1;
    for (int i = 0; i < mini->tensors.n; i++)
        if (mini->tensors.items[i] != t)
            ((Tensor *)mini->tensors.items[i])->is_output = 0;
    Schedule *s = sch_create(mini);
    Kernel *k = ir_lower(s, "fold");
    t->is_output = was_output;
    Tensor *r = k ? run_kernel(p, t, k) : NULL;
    ir_program_renumber(p);
    ir_clear_error();
    if (r && ir_program_add(p, r))
        return NULL;
    return r;
}
