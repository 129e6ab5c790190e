/* onnx_import.c - an ONNX graph to a tensor program: graph inputs become placeholders,
 * initializers constants, each node its operator's computes (ir/ops/); nodes whose
 * inputs are all known are folded into constants by running them at compile time; graph
 * outputs get their own tensors; whatever the outputs do not need is dropped.
 * requires: a decoded model (gen/onnx.c); gives: a verified Program. */
#include "gen.h"
#include "../ir/ops/ops.h"
#include "../schedule/schedule.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;   /* ONNX value name */
    Tensor *t;
} Value;

typedef struct {
    Program *prog;
    Value *vals;
    int nvals, cap;
    int64_t max_elems;  /* elements of one tensor (--max-elements) */
    unsigned char *dep; /* by tensor id: 0 unknown, 1 constant, 2 depends on a graph input */
    int ndep;
} Import;

static void define(Import *I, const char *name, Tensor *t)
{
    for (int i = I->nvals - 1; i >= 0; i--)
        if (!strcmp(I->vals[i].name, name)) {
            I->vals[i].t = t;   /* SSA is not enforced by every exporter: the last one wins */
            return;
        }
    if (I->nvals == I->cap) {
        int cap = I->cap ? I->cap * 2 : 64;
        Value *v = ir_alloc(sizeof *v * (size_t)cap);
        if (I->nvals)
            memcpy(v, I->vals, sizeof *v * (size_t)I->nvals);
        I->vals = v;
        I->cap = cap;
    }
    I->vals[I->nvals++] = (Value){name, t};
}

static Tensor *lookup(Import *I, const char *name)
{
    for (int i = I->nvals - 1; i >= 0; i--)
        if (!strcmp(I->vals[i].name, name))
            return I->vals[i].t;
    return NULL;
}

/* Names a generated file declares itself, or that C and its libraries reserve: a tensor
 * named so gets a trailing underscore. */
static int reserved(const char *s)
{
    static const char *const words[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
        "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
        "true", "false", "arena", "workspace", "main", "exp", "log", "sqrt", "tanh", "erf", "pow", "floor", "ceil",
        "round", "trunc", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
        "fabs", "fmin", "fmax", "fma", "abs", "isnan", "isinf", "rint", "fmod", "exit", "free", "malloc", "printf",
        "memcpy", "memset", "NAN", "INFINITY", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
        "uint32_t", "uint64_t", "size_t", "NULL"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strcmp(words[i], s))
            return 1;
    return !strncmp(s, "kgen_", 5) || !strncmp(s, "KGEN_", 5) || s[0] == '_';
}

const char *gen_c_name(const char *onnx_name)
{
    size_t n = strlen(onnx_name);
    char *s = ir_alloc(n + 3);
    size_t k = 0;
    if (n == 0 || isdigit((unsigned char)onnx_name[0]))
        s[k++] = 't', s[k++] = '_';
    for (size_t i = 0; i < n && k < 200; i++)
        s[k++] = isalnum((unsigned char)onnx_name[i]) ? onnx_name[i] : '_';
    s[k] = 0;
    if (reserved(s))
        return ir_fmt("%s%s_", s[0] == '_' ? "t" : "", s);
    return s;
}

static const char *unique(Program *p, const char *base)
{
    const char *name = base;
    for (int k = 1; ir_program_find(p, name); k++)
        name = ir_fmt("%s_%d", base, k);
    return name;
}

/* "[2, 3, 4]" */
static const char *shape_str(int ndim, const int64_t *shape)
{
    const char *s = "[";
    for (int i = 0; i < ndim; i++)
        s = ir_fmt("%s%s%lld", s, i ? ", " : "", (long long)shape[i]);
    return ir_fmt("%s]", s);
}

/* Fails if a tensor `what` of this shape would hold more than --max-elements elements,
 * or has one dimension above it (even next to a 0: loops run to each extent).
 * Overflow-safe. */
static int check_elems(const Import *I, const char *what, int ndim, const int64_t *shape)
{
    int64_t n = 1, max = I->max_elems;
    int over = 0, empty = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] > max)
            over = 1;
        else if (shape[i] == 0)
            empty = 1;
        else if (shape[i] > 0)
            n = n > max / shape[i] ? max + 1 : n * shape[i];
    }
    if (!over && (empty || n <= max))
        return 0;
    return ir_fail("%s has shape %s, over the limit of %lld elements (--max-elements)", what, shape_str(ndim, shape),
                   (long long)max);
}

static Tensor *tensor_from_onnx(Import *I, const OnnxTensor *ot, const char *what)
{
    DType t;
    if (op_dtype_from_onnx(ot->dtype, &t)) {
        ir_fail("%s '%s': %s", what, ot->name, ir_errmsg());
        return NULL;
    }
    if (ot->ndim > KG_MAX_DIMS) {
        ir_fail("%s '%s' has rank %d (limit %d)", what, ot->name, ot->ndim, KG_MAX_DIMS);
        return NULL;
    }
    int64_t shape[KG_MAX_DIMS];
    for (int d = 0; d < ot->ndim; d++) {
        if (ot->dims[d] < 0) {
            ir_fail("%s '%s' has a negative dimension (%lld)", what, ot->name, (long long)ot->dims[d]);
            return NULL;
        }
        shape[d] = ot->dims[d];
    }
    if (check_elems(I, ir_fmt("%s '%s'", what, ot->name), ot->ndim, shape))
        return NULL;
    Tensor *x = ir_constant(unique(I->prog, gen_c_name(ot->name[0] ? ot->name : "const")), t, ot->ndim, shape,
                            ot->data);
    if (!x || ir_program_add(I->prog, x))
        return NULL;
    return x;
}

/* ---------------------------------------------------------------- constant folding */

/* Every tensor t depends on, t included, into seen (in no particular order). Iterative,
 * with a mark per tensor of the program, so a graph thousands of nodes deep costs linear
 * time and no stack. */
static void closure(const Program *p, Tensor *t, PtrVec *seen)
{
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

static int all_const(const PtrVec *ts)
{
    for (int i = 0; i < ts->n; i++)
        if (((Tensor *)ts->items[i])->kind == T_PLACEHOLDER)
            return 0;
    return 1;
}

/* Does t depend on a graph input? Memoized by tensor id, so that asking it for every node
 * of a long chain costs linear time (and each tensor's inputs are known by then). */
static int depends_on_input(Import *I, Tensor *t)
{
    if (t->kind == T_PLACEHOLDER || t->kind == T_CONSTANT)
        return t->kind == T_PLACEHOLDER;
    const Program *p = I->prog;
    int id = t->id >= 0 && t->id < p->tensors.n && p->tensors.items[t->id] == t ? t->id : -1;
    if (id >= 0 && id < I->ndep && I->dep[id])
        return I->dep[id] == 2;
    PtrVec reads = {0};
    if (t->kind == T_COMPUTE)
        ir_expr_tensors(t->body, &reads);
    else if (t->kind == T_SCAN) {
        ir_expr_tensors(t->init, &reads);
        ir_expr_tensors(t->update, &reads);
    }
    int dep = 0;
    for (int i = 0; i < reads.n && !dep; i++)
        dep = reads.items[i] != t && depends_on_input(I, reads.items[i]);
    if (id >= 0) {
        if (id >= I->ndep) {
            int n = p->tensors.n * 2 + 64;
            unsigned char *d = ir_alloc((size_t)n);
            if (I->ndep)
                memcpy(d, I->dep, (size_t)I->ndep);
            I->dep = d;
            I->ndep = n;
        }
        I->dep[id] = (unsigned char)(dep + 1);
    }
    return dep;
}

/* Run the computes behind t and return a constant with its value (NULL: could not). */
static Tensor *fold(Import *I, Tensor *t)
{
    if (ir_tensor_is_leaf(t) || ir_tensor_numel(t) > GEN_MAX_FOLD_ELEMS)
        return NULL;
    PtrVec deps = {0};
    ir_program_renumber(I->prog);
    closure(I->prog, t, &deps);
    if (!all_const(&deps))
        return NULL;
    Program *mini = ir_program_new("fold");
    for (int i = 0; i < I->prog->tensors.n; i++) {
        Tensor *x = I->prog->tensors.items[i];
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
    Tensor *r = NULL;
    if (k) {
        void **params = calloc((size_t)k->params.n + 1, sizeof *params);
        size_t bytes = (size_t)ir_tensor_numel(t) * (size_t)ir_dtype_bytes(t->dtype);
        void *out = calloc(bytes ? bytes : 1, 1), *ws = calloc((size_t)k->workspace_bytes + 1, 1);
        if (!params || !out || !ws)
            ir_die("out of memory");
        for (int i = 0; i < k->params.n; i++) {
            Buffer *b = k->params.items[i];
            params[i] = b->constant ? (void *)b->constant->data : out;
        }
        if (!ir_interp(k, params, ws)) {
            r = ir_constant(unique(I->prog, ir_fmt("%s_c", t->name)), t->dtype, t->ndim, t->shape, out);
            if (r)
                r->comment = t->comment;
        }
        free(params);
        free(out);
        free(ws);
    }
    ir_program_renumber(I->prog);
    ir_clear_error();
    if (r && ir_program_add(I->prog, r))
        return NULL;
    return r;
}

/* ---------------------------------------------------------------- batch-norm folding */

/* How many nodes read a value, plus one if it is a graph output. */
static int uses(const OnnxGraph *g, const char *name)
{
    int n = 0;
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i].ninputs; j++)
            n += !strcmp(g->nodes[i].inputs[j], name);
    for (int i = 0; i < g->noutputs; i++)
        n += !strcmp(g->outputs[i].name, name);
    return n;
}

static int const_f32(const Tensor *t, int64_t n)
{
    return t && t->kind == T_CONSTANT && t->dtype == DT_F32 && ir_tensor_numel(t) == n;
}

/* A BatchNormalization (inference) right after a Conv or Gemm that only it reads, with
 * every parameter constant, is folded into the weights and bias:
 *   s = scale / sqrt(var + eps),  W'[f] = W[f] * s[f],  B' = (B - mean) * s + beta.
 * Returns the index of the folded BN node (its output then aliases the producer's) or -1;
 * c->in[1..2] are replaced. */
static int fold_bn(Import *I, const OnnxGraph *g, int ni, OpCtx *c)
{
    const OnnxNode *n = &g->nodes[ni];
    int conv = !strcmp(n->op_type, "Conv"), gemm = !strcmp(n->op_type, "Gemm");
    if ((!conv && !gemm) || n->noutputs != 1 || uses(g, n->outputs[0]) != 1)
        return -1;
    int bi = -1;
    for (int i = ni + 1; i < g->nnodes && bi < 0; i++)
        if (!strcmp(g->nodes[i].op_type, "BatchNormalization") && g->nodes[i].ninputs >= 5 &&
            !strcmp(g->nodes[i].inputs[0], n->outputs[0]))
            bi = i;
    if (bi < 0)
        return -1;
    const OnnxNode *bn = &g->nodes[bi];
    const OnnxAttr *tm = onnx_node_attr(bn, "training_mode");
    if ((tm && tm->i) || bn->noutputs != 1)
        return -1;
    Tensor *W = c->in[1];
    if (!W || W->kind != T_CONSTANT || W->dtype != DT_F32 || W->ndim < 2)
        return -1;
    int64_t F;
    int64_t tB = 0;
    if (conv)
        F = W->shape[0];
    else {
        const OnnxAttr *ta = onnx_node_attr(n, "transA"), *tb = onnx_node_attr(n, "transB"),
                       *al = onnx_node_attr(n, "alpha"), *be = onnx_node_attr(n, "beta");
        if ((ta && ta->i) || (al && al->f != 1.0f) || (be && be->f != 1.0f) || W->ndim != 2)
            return -1;
        tB = tb ? tb->i : 0;
        F = tB ? W->shape[0] : W->shape[1];
    }
    Tensor *p[4];
    for (int k = 0; k < 4; k++) {
        p[k] = lookup(I, bn->inputs[k + 1]);
        if (!const_f32(p[k], F))
            return -1;
    }
    Tensor *B = c->nin > 2 ? c->in[2] : NULL;
    if (B && !const_f32(B, F))
        return -1;
    const OnnxAttr *ea = onnx_node_attr(bn, "epsilon");
    double eps = ea ? ea->f : 1e-5;
    const float *scale = p[0]->data, *beta = p[1]->data, *mean = p[2]->data, *var = p[3]->data;
    int64_t nw = ir_tensor_numel(W), per = nw / F;
    float *w2 = malloc(sizeof *w2 * (size_t)nw), *b2 = malloc(sizeof *b2 * (size_t)F);
    if (!w2 || !b2)
        ir_die("out of memory");
    const float *w = W->data;
    for (int64_t k = 0; k < nw; k++) {
        int64_t f = conv || tB ? k / per : k % F;
        w2[k] = (float)(w[k] * (scale[f] / sqrt((double)var[f] + eps)));
    }
    for (int64_t f = 0; f < F; f++) {
        double s = scale[f] / sqrt((double)var[f] + eps);
        b2[f] = (float)(((B ? ((const float *)B->data)[f] : 0.0f) - mean[f]) * s + beta[f]);
    }
    Tensor *nw_t = ir_constant(unique(I->prog, ir_fmt("%s_bnfold", W->name)), DT_F32, W->ndim, W->shape, w2);
    int64_t bshape[1] = {F};
    Tensor *nb_t = ir_constant(unique(I->prog, ir_fmt("%s_bnfold_bias", c->base)), DT_F32, 1, bshape, b2);
    free(w2);
    free(b2);
    if (!nw_t || !nb_t || ir_program_add(I->prog, nw_t) || ir_program_add(I->prog, nb_t))
        return -1;
    nw_t->comment = ir_fmt("%s folded with BatchNormalization '%s'", W->name, bn->name);
    nb_t->comment = nw_t->comment;
    c->in[1] = nw_t;
    c->in[2] = nb_t;
    if (c->nin < 3)
        c->nin = 3;
    return bi;
}

/* ---------------------------------------------------------------- the graph */

static const OnnxTensor *find_init(const OnnxGraph *g, const char *name)
{
    for (int i = 0; i < g->ninit; i++)
        if (!strcmp(g->initializers[i].name, name))
            return &g->initializers[i];
    return NULL;
}

static int node_fail(const OnnxNode *n, int index)
{
    const char *name = n->name[0] ? n->name : n->noutputs ? n->outputs[0] : "";
    return ir_fail("node %d '%s' (%s): %s", index, name, n->op_type, ir_errmsg());
}

/* Drop computes the outputs do not need (graph inputs stay: they are the signature). */
static void prune(Program *p)
{
    PtrVec live = {0};
    ir_program_renumber(p);
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        if (t->is_output)
            closure(p, t, &live);
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
        if (keep[i] || t->kind == T_PLACEHOLDER)
            p->tensors.items[n++] = t;
    }
    p->tensors.n = n;
    ir_program_renumber(p);
}

int gen_onnx_import(const void *model, const GenBinding *binds, int nbinds, GenImport *out)
{
    const OnnxModel *m = model;
    const OnnxGraph *g = &m->graph;
    Import I = {0};
    I.max_elems = m->limits.elements > 0 && m->limits.elements < GEN_MAX_ELEMS ? m->limits.elements : GEN_MAX_ELEMS;
    memset(out, 0, sizeof *out);
    I.prog = ir_program_new(g->name[0] ? gen_c_name(g->name) : "model");
    out->prog = I.prog;
    out->opset = onnx_opset(m, "");
    if (out->opset < 1)
        out->opset = 1;
    if (out->opset > 27)
        return ir_fail("opset %lld of the default domain is newer than kgen knows (27)", (long long)out->opset);

    /* graph inputs that are not initializers */
    out->inputs = ir_alloc(sizeof *out->inputs * (size_t)(g->ninputs + 1));
    for (int i = 0; i < g->ninputs; i++) {
        const OnnxValueInfo *vi = &g->inputs[i];
        if (find_init(g, vi->name))
            continue;
        if (vi->kind != 0 && vi->kind != 1)
            return ir_fail("graph input '%s' is not a tensor (sequences, maps and optionals are not supported)",
                           vi->name);
        DType t;
        if (op_dtype_from_onnx(vi->dtype, &t))
            return ir_fail("graph input '%s': %s", vi->name, ir_errmsg());
        if (!vi->has_shape)
            return ir_fail("graph input '%s' has no shape; kgen needs static shapes", vi->name);
        if (vi->ndim > KG_MAX_DIMS)
            return ir_fail("graph input '%s' has rank %d (limit %d)", vi->name, vi->ndim, KG_MAX_DIMS);
        int64_t shape[KG_MAX_DIMS];
        const GenBinding *bind = NULL;
        for (int b = 0; b < nbinds; b++)
            if (!strcmp(binds[b].name, vi->name) && binds[b].ndim == vi->ndim)
                bind = &binds[b];
        for (int d = 0; d < vi->ndim; d++) {
            if (vi->dims[d] < 0 && bind) {
                shape[d] = bind->dims[d];   /* a dynamic dimension: the bound data's size */
                continue;
            }
            if (vi->dims[d] < -1)
                return ir_fail("graph input '%s': dimension %d is %lld; dimensions cannot be negative", vi->name, d,
                               (long long)vi->dims[d]);
            if (vi->dims[d] < 0 || (vi->dims[d] == 0 && vi->dim_params[d]))
                return ir_fail("graph input '%s': dimension %d is %s%s%s; kgen needs static shapes", vi->name, d,
                               vi->dim_params[d] ? "'" : "", vi->dim_params[d] ? vi->dim_params[d] : "unknown",
                               vi->dim_params[d] ? "'" : "");
            shape[d] = vi->dims[d];
        }
        if (check_elems(&I, ir_fmt("graph input '%s'", vi->name), vi->ndim, shape))
            return -1;
        Tensor *x = ir_placeholder(unique(I.prog, gen_c_name(vi->name)), t, vi->ndim, shape);
        if (!x || ir_program_add(I.prog, x))
            return -1;
        if (bind && bind->dtype == vi->dtype && !memcmp(bind->dims, shape, sizeof(int64_t) * (size_t)vi->ndim))
            x->data = bind->data;
        x->comment = ir_fmt("graph input '%s'", vi->name);
        define(&I, vi->name, x);
        out->inputs[out->ninputs++] = (GenValue){vi->name, x, 0};
    }
    /* initializers: constants, converted when first used */
    for (int i = 0; i < g->ninit; i++) {
        Tensor *x = tensor_from_onnx(&I, &g->initializers[i], "initializer");
        if (!x)
            return -1;
        define(&I, g->initializers[i].name, x);
    }

    /* nodes, in the graph's (topological) order */
    int *folded_into = ir_alloc(sizeof *folded_into * (size_t)(g->nnodes + 1));   /* BN node -> producer + 1 */
    for (int ni = 0; ni < g->nnodes; ni++) {
        const OnnxNode *n = &g->nodes[ni];
        if (folded_into[ni]) {
            /* a BatchNormalization folded into the Conv/Gemm before it */
            define(&I, n->outputs[0], lookup(&I, g->nodes[folded_into[ni] - 1].outputs[0]));
            out->nnodes++;
            out->nfolded++;
            continue;
        }
        if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
            return ir_fail("node %d '%s' (%s): unsupported operator domain '%s'", ni, n->name, n->op_type, n->domain);
        const OpDef *def = op_find(n->op_type);
        if (!def) {
            ir_fail("unsupported operator");
            return node_fail(n, ni);
        }
        if (n->ninputs > OP_MAX_IO || n->noutputs > OP_MAX_IO) {
            ir_fail("more than %d inputs or outputs", OP_MAX_IO);
            return node_fail(n, ni);
        }
        OpCtx c = {0};
        c.node = n;
        c.op = n->op_type;
        c.opset = out->opset;
        c.prog = I.prog;
        c.nin = n->ninputs;
        for (int i = 0; i < n->ninputs; i++) {
            if (!n->inputs[i][0])
                continue;
            c.in[i] = lookup(&I, n->inputs[i]);
            if (!c.in[i]) {
                int later = -1;   /* a node after this one that makes it: a cycle, or not sorted */
                for (int k = ni; k < g->nnodes && later < 0; k++)
                    for (int o = 0; o < g->nodes[k].noutputs; o++)
                        if (!strcmp(g->nodes[k].outputs[o], n->inputs[i]))
                            later = k;
                if (later >= 0)
                    ir_fail("input '%s' is produced only by node %d '%s' (%s), at or after this one: the graph "
                            "has a cycle or is not in topological order", n->inputs[i], later,
                            g->nodes[later].name, g->nodes[later].op_type);
                else
                    ir_fail("input '%s' is not produced by any earlier node, initializer or graph input",
                            n->inputs[i]);
                return node_fail(n, ni);
            }
        }
        c.nout = n->noutputs;
        for (int i = 0; i < n->noutputs; i++)
            c.out_names[i] = n->outputs[i][0] ? unique(I.prog, gen_c_name(n->outputs[i])) : NULL;
        c.base = gen_c_name(n->noutputs && n->outputs[0][0] ? n->outputs[0] : n->op_type);
        int bn = fold_bn(&I, g, ni, &c);
        if (bn >= 0)
            folded_into[bn] = ni + 1;
        int first = I.prog->tensors.n;
        if (def->build(&c))
            return node_fail(n, ni);
        for (int i = first; i < I.prog->tensors.n; i++) {
            Tensor *t = I.prog->tensors.items[i];
            if (check_elems(&I, ir_fmt("'%s'", t->name), t->ndim, t->shape))
                return node_fail(n, ni);
        }
        const char *origin = ir_fmt("%s '%s'", n->op_type, n->name[0] ? n->name : n->noutputs ? n->outputs[0] : "");
        for (int i = first; i < I.prog->tensors.n; i++) {
            Tensor *t = I.prog->tensors.items[i];
            if (!t->comment)
                t->comment = origin;
        }
        for (int i = 0; i < n->noutputs; i++) {
            if (!n->outputs[i][0])
                continue;
            Tensor *t = c.out[i];
            if (!t) {
                ir_fail("output %d ('%s') was not produced", i, n->outputs[i]);
                return node_fail(n, ni);
            }
            if (!ir_tensor_is_leaf(t) && !depends_on_input(&I, t)) {
                Tensor *f = fold(&I, t);
                if (f) {
                    t = f;
                    out->nfolded++;
                }
            }
            define(&I, n->outputs[i], t);
        }
        out->nnodes++;
    }
    /* inputs an operator needed the values of are constants now */
    for (int i = 0; i < out->ninputs; i++)
        if (out->inputs[i].t->frozen) {
            out->inputs[i].t->kind = T_CONSTANT;
            out->inputs[i].frozen = 1;
        }

    /* outputs: each its own compute */
    out->outputs = ir_alloc(sizeof *out->outputs * (size_t)(g->noutputs + 1));
    for (int i = 0; i < g->noutputs; i++) {
        const char *name = g->outputs[i].name;
        Tensor *t = lookup(&I, name);
        if (!t)
            return ir_fail("graph output '%s' is not produced by any node", name);
        int taken = (ir_tensor_is_leaf(t) && ir_tensor_numel(t) > 0) || t->kind == T_SCAN;
        for (int j = 0; j < out->noutputs && !taken; j++)
            taken = out->outputs[j].t == t;
        if ((taken || t->kind == T_PLACEHOLDER) && ir_tensor_numel(t) == 0) {
            /* an empty output needs no kernel, only a name of its own */
            t = ir_constant(unique(I.prog, ir_fmt("%s_out", gen_c_name(name))), t->dtype, t->ndim, t->shape, NULL);
            if (!t || ir_program_add(I.prog, t))
                return -1;
            taken = 0;
        }
        if (taken) {
            OpCtx c = {0};
            c.op = "output";
            c.prog = I.prog;
            c.base = gen_c_name(name);
            c.out_names[0] = unique(I.prog, ir_fmt("%s_out", gen_c_name(name)));
            t = op_copy(&c, 0, t);
            if (!t)
                return -1;
            t->comment = ir_fmt("copy to graph output '%s'", name);
        }
        t->is_output = 1;
        out->outputs[out->noutputs++] = (GenValue){name, t, 0};
    }
    prune(I.prog);
    if (ir_program_verify(I.prog))
        return ir_fail("the imported program is inconsistent: %s", ir_errmsg());
    return 0;
}
