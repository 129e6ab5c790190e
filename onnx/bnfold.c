/* bnfold.c - BatchNormalization folding for the ONNX importer: an inference BN right
 * after a Conv, ConvTranspose or Gemm that only it reads, with every parameter constant,
 * goes into that node's weights and bias:
 *   s = scale / sqrt(var + eps),  W'[f] = W[f] * s[f],  B' = (B - mean) * s + beta
 * (ConvTranspose's W is [C, F/group, k...]: output channel f of group (c / (C/group)).
 * It works on the ONNX nodes before the producer is built, so it lives in the import,
 * not among the graph passes. requires: the producer's inputs looked up; gives: folded
 * constants in its OpCtx, and the BN node to alias. */
#include "fold.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How many nodes read a value, plus one if it is a graph output; nodes of subgraphs (If
 * branches, Loop and Scan bodies) count too, since they may read it from their scope. */
static int uses(const OnnxGraph *g, const char *name)
{
    int n = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const OnnxNode *nd = &g->nodes[i];
        for (int j = 0; j < nd->ninputs; j++)
            n += !strcmp(nd->inputs[j], name);
        for (int a = 0; a < nd->nattrs; a++) {
            if (nd->attrs[a].g)
                n += uses(nd->attrs[a].g, name);
            for (int k = 0; k < nd->attrs[a].ngraphs; k++)
                n += uses(&nd->attrs[a].graphs[k], name);
        }
    }
    for (int i = 0; i < g->noutputs; i++)
        n += !strcmp(g->outputs[i].name, name);
    return n;
}

static int const_f32(const Tensor *t, int64_t n)
{
    return t && t->kind == T_CONSTANT && t->dtype == DT_F32 && ir_tensor_numel(t) == n;
}

int onnx_fold_bn(Program *prog, const OnnxGraph *g, int ni, OpCtx *c, OnnxLookup lookup, void *importer)
{
    const OnnxNode *n = &g->nodes[ni];
    int conv = !strcmp(n->op_type, "Conv"), gemm = !strcmp(n->op_type, "Gemm");
    int convt = !strcmp(n->op_type, "ConvTranspose");
    if ((!conv && !gemm && !convt) || n->noutputs != 1 || uses(g, n->outputs[0]) != 1)
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
    int64_t tB = 0, cg = 1, mg = 1;
    if (conv)
        F = W->shape[0];
    else if (convt) {
        const OnnxAttr *ga = onnx_node_attr(n, "group");
        int64_t group = ga ? ga->i : 1;
        if (group < 1 || W->shape[0] % group || W->shape[1] < 1)
            return -1;   /* the operator reports it */
        cg = W->shape[0] / group;
        mg = W->shape[1];
        F = mg * group;
    } else {
        const OnnxAttr *ta = onnx_node_attr(n, "transA"), *tb = onnx_node_attr(n, "transB"),
                       *al = onnx_node_attr(n, "alpha"), *be = onnx_node_attr(n, "beta");
        if ((ta && ta->i) || (al && al->f != 1.0f) || (be && be->f != 1.0f) || W->ndim != 2)
            return -1;
        tB = tb ? tb->i : 0;
        F = tB ? W->shape[0] : W->shape[1];
    }
    Tensor *p[4];
    for (int k = 0; k < 4; k++) {
        p[k] = lookup(importer, bn->inputs[k + 1]);
        if (!const_f32(p[k], F))
            return -1;
    }
    Tensor *B = c->nin > 2 ? c->in[2] : NULL;
    if (B && !const_f32(B, F))
        return -1;
    const OnnxAttr *ea = onnx_node_attr(bn, "epsilon");
    double eps = ea ? ea->f : 1e-5;
    const float *scale = p[0]->data, *beta = p[1]->data, *mean = p[2]->data, *var = p[3]->data;
    int64_t nw = ir_tensor_numel(W), per = nw / (convt ? W->shape[0] * mg : F);
    float *w2 = malloc(sizeof *w2 * (size_t)nw), *b2 = malloc(sizeof *b2 * (size_t)F);
    if (!w2 || !b2)
        ir_die("out of memory");
    const float *w = W->data;
    for (int64_t k = 0; k < nw; k++) {
        int64_t f = convt ? k / per / mg / cg * mg + k / per % mg : conv || tB ? k / per : k % F;
        w2[k] = (float)(w[k] * (scale[f] / sqrt((double)var[f] + eps)));
    }
    for (int64_t f = 0; f < F; f++) {
        double s = scale[f] / sqrt((double)var[f] + eps);
        b2[f] = (float)(((B ? ((const float *)B->data)[f] : 0.0f) - mean[f]) * s + beta[f]);
    }
    Tensor *nw_t = ir_constant(onnx_unique_name(prog, ir_fmt("%s_bnfold", W->name)), DT_F32, W->ndim, W->shape, w2);
    int64_t bshape[1] = {F};
    Tensor *nb_t = ir_constant(onnx_unique_name(prog, ir_fmt("%s_bnfold_bias", c->base)), DT_F32, 1, bshape, b2);
    free(w2);
    free(b2);
    if (!nw_t || !nb_t || ir_program_add(prog, nw_t) || ir_program_add(prog, nb_t))
        return -1;
    nw_t->comment = ir_fmt("%s folded with BatchNormalization '%s'", W->name, bn->name);
    nb_t->comment = nw_t->comment;
    c->in[1] = nw_t;
    c->in[2] = nb_t;
    if (c->nin < 3)
        c->nin = 3;
    return bi;
}

