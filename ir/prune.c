/* prune.c - the graph pass "prune": drop the computes no graph output needs (graph inputs
 * stay: they are the signature), and the tensor closure it and the ONNX constant folding
 * share (what a tensor reads, and the count of each extent computed from values it has). requires: a program with its outputs marked; gives: the program with only what
 * they read, in the same order. */
#include "pass.h"

#include <string.h>

void ir_tensor_closure(const Program *p, Tensor *t, PtrVec *seen)
{
    /* iterative, with a mark per tensor of the program, so a graph thousands of nodes
     * deep costs linear time and no stack */
    unsigned char *mark = ir_alloc((size_t)p->tensors.n + 1);
    PtrVec todo = {0};
    ir_vec_push(&todo, t, 1 << 24, "tensors");
    while (todo.n) {
        Tensor *x = todo.items[--todo.n];
        int in_prog = x->id >= 0 && x->id < p->tensors.n && p->tensors.items[x->id] == x;
        if (in_prog ? mark[x->id] : 0)
            continue;
        if (!in_prog) {
            int dup = 0;
            for (int i = 0; i < seen->n && !dup; i++)
                dup = seen->items[i] == x;
            if (dup)
                continue;
        } else {
            mark[x->id] = 1;
        }
        ir_vec_push(seen, x, 1 << 24, "tensors");
        PtrVec reads = {0};
        if (x->loop_state) {
            /* a run-time loop's state depends on its whole loop */
            const IrLoop *L = x->loop_state;
            const Tensor *dep[3 * IR_LOOP_MAX_STATES + 1];
            int n = 0;
            dep[n++] = L->trip;
            for (int i = 0; i < L->nstate; i++) {
                dep[n++] = L->state[i];
                dep[n++] = L->init[i];
                dep[n++] = L->next[i];
            }
            for (int i = 0; i < n; i++)
                if (dep[i] && dep[i] != x)
                    ir_vec_push(&todo, (void *)dep[i], 1 << 24, "tensors");
        }
        /* a dim computed from values depends on the tensor that counts it */
        for (int d = 0; d < x->ndim; d++)
            for (int k = 0; k < p->dims.n && x->dyn[d]; k++) {
                const IrDim *dm = p->dims.items[k];
                if (!dm->count || !ir_expr_uses_var(x->dyn[d], dm->var))
                    continue;
                for (int j = 0; j < p->tensors.n; j++)
                    if (!strcmp(((const Tensor *)p->tensors.items[j])->name, dm->count->name))
                        ir_vec_push(&todo, p->tensors.items[j], 1 << 24, "tensors");
            }
        if (x->kind == T_COMPUTE)
            ir_expr_tensors(x->body, &reads);
        else if (x->kind == T_SCAN) {
            ir_expr_tensors(x->init, &reads);
            ir_expr_tensors(x->update, &reads);
        }
        for (int i = 0; i < reads.n; i++)
            if (reads.items[i] != x)
                ir_vec_push(&todo, reads.items[i], 1 << 24, "tensors");
    }
}

/* The pass: keeps the closure of the outputs and every graph input (not a run-time loop's
 * state placeholder: its loop goes with what it computes). Cannot fail. */
static int prune_run(Program *p, const PassCtx *ctx)
{
    (void)ctx;
    PtrVec live = {0};
    ir_program_renumber(p);
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        if (t->is_output)
            ir_tensor_closure(p, t, &live);
    }
    unsigned char *keep = ir_alloc((size_t)p->tensors.n + 1);
    for (int j = 0; j < live.n; j++) {
        Tensor *t = live.items[j];
        if (t->id >= 0 && t->id < p->tensors.n && p->tensors.items[t->id] == t)
            keep[t->id] = 1;
    }
    int n = 0;
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        if (keep[i] || (t->kind == T_PLACEHOLDER && !t->loop_state))
            p->tensors.items[n++] = t;
    }
    p->tensors.n = n;
    ir_program_renumber(p);
    return 0;
}

const GraphPass ir_pass_prune = {{"prune", "drop the computes no graph output needs (graph inputs stay)"}, prune_run};
