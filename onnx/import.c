/* import.c - an ONNX graph to a tensor program: graph inputs become placeholders,
 * initializers constants, each node its operator's computes (ir/ops/); nodes whose
 * inputs are all known are folded into constants by running them at compile time, a
 * BatchNormalization into the Conv before it (fold.c, bnfold.c); graph outputs get their
 * own tensors. What the outputs do not need is dropped later, by the graph pass "prune"
 * (ir/prune.c). requires: a decoded model (reader.c); gives: a verified Program. */
#include "import.h"
#include "../gen/gen.h"
#include "../ir/ops/ops.h"
#include "fold.h"

#include <ctype.h>
#include <errno.h>
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
    int scope;          /* vals[scope..nvals) are the names of the innermost graph */
    int64_t max_elems;  /* elements of one tensor (--max-elements) */
    unsigned char *dep; /* by tensor id: 0 unknown, 1 constant, 2 depends on a graph input */
    int ndep;
    const IrGuard *guard; /* the run-time If branch being imported, or NULL */
    const IrLoop *loop;   /* the run-time loop whose body is being imported, or NULL */
    const char *suffix; /* added to the names made in an unrolled iteration ("_it3"): each
                           iteration's are new, so making them unique probes once */
    int64_t budget;     /* nodes that may still be imported (unrolled loops count each time) */
    const OnnxModel *model;
    int has_data;       /* some graph input has --bind-inputs data (op_is_const may freeze it) */
    OnnxImport *out;
} Import;

/* Most iterations a Loop or Scan is unrolled into, most nodes its unrolled body may make
 * (each iteration's become stages of their own, and the default schedule's fusion costs
 * about the square of the stages: 10000 nodes take 30 s), and most nodes one import makes. */
#define ONNX_MAX_UNROLL 4096
#define ONNX_MAX_UNROLLED_NODES 8192
#define ONNX_MAX_IMPORTED_NODES 1000000

static void define(Import *I, const char *name, Tensor *t)
{
    for (int i = I->nvals - 1; i >= I->scope; i--)
        if (!strcmp(I->vals[i].name, name)) {
            I->vals[i].t = t;   /* SSA is not enforced by every exporter: the last one wins */
            return;
        }
    if (I->nvals == I->cap)
        I->vals = ir_grow_arena(I->vals, I->nvals, &I->cap, sizeof *I->vals, 64);
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

const char *onnx_c_name(const char *onnx_name)
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

static const char *unique(Program *p, const char *base) { return onnx_unique_name(p, base); }

/* OnnxLookup, for onnx_fold_bn */
static Tensor *lookup_value(void *importer, const char *name) { return lookup(importer, name); }

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
    Tensor *x = ir_constant(unique(I->prog, onnx_c_name(ot->name[0] ? ot->name : "const")), t, ot->ndim, shape,
                            ot->data);
    if (!x || ir_program_add(I->prog, x))
        return NULL;
    return x;
}

/* ---------------------------------------------------------------- constant folding */

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
    /* (a compute of the run-time dims' values: extents cast to float) */
    int dep = t->kind == T_COMPUTE && ir_expr_uses_dims(t->body);
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

/* ---------------------------------------------------------------- graph inputs: shapes and bound values */

static int is_initializer(const OnnxGraph *g, const char *name) { return find_init(g, name) != NULL; }

/* "x, sr" (the graph inputs that are not initializers) */
static const char *input_names(const OnnxGraph *g)
{
    const char *s = "";
    for (int i = 0; i < g->ninputs; i++)
        if (!is_initializer(g, g->inputs[i].name))
            s = ir_fmt("%s%s'%s'", s, s[0] ? ", " : "", g->inputs[i].name);
    return s[0] ? s : "none";
}

/* Checks that an option names a graph input: 0, or -1 with a message. */
static int check_input_name(const OnnxGraph *g, const char *option, const char *name)
{
    if (is_initializer(g, name))
        return ir_fail("%s: '%s' is an initializer (a weight), not an input the caller gives", option, name);
    for (int i = 0; i < g->ninputs; i++)
        if (!strcmp(g->inputs[i].name, name))
            return 0;
    return ir_fail("%s: the model has no graph input '%s' (its inputs: %s)", option, name, input_names(g));
}

static const char *dim_str(int ndim, const int64_t *d)
{
    const char *s = "";
    for (int i = 0; i < ndim; i++)
        s = ir_fmt("%s%s%lld", s, i ? "," : "", (long long)d[i]);
    return s;
}

/* Checks the options against the model before any input is made: every name and symbol
 * exists, none is given twice, ranks agree with the model's. */
static int check_shape_options(const OnnxGraph *g, const OnnxImportOpts *o)
{
    for (int k = 0; k < o->nshapes; k++) {
        const OnnxInputShape *a = &o->shapes[k];
        const char *opt = ir_fmt("--input-shape %s=%s", a->name, dim_str(a->ndim, a->dims));
        if (check_input_name(g, opt, a->name))
            return -1;
        for (int j = 0; j < k; j++)
            if (!strcmp(o->shapes[j].name, a->name))
                return ir_fail("%s: input '%s' is given --input-shape twice", opt, a->name);
        for (int i = 0; i < g->ninputs; i++) {
            const OnnxValueInfo *vi = &g->inputs[i];
            if (strcmp(vi->name, a->name) || !vi->has_shape)
                continue;
            if (vi->ndim != a->ndim)
                return ir_fail("%s: input '%s' has rank %d, this shape %d dimensions", opt, a->name, vi->ndim,
                               a->ndim);
            for (int d = 0; d < vi->ndim; d++)
                if (vi->dims[d] >= 0 && !vi->dim_params[d] && vi->dims[d] != a->dims[d])
                    return ir_fail("%s: dimension %d of input '%s' is %lld in the model", opt, d, a->name,
                                   (long long)vi->dims[d]);
        }
    }
    for (int k = 0; k < o->ndims; k++) {
        const char *sym = o->dims[k].symbol;
        const char *opt = o->dims[k].lo < o->dims[k].value
                              ? ir_fmt("--dim %s=%lld..%lld", sym, (long long)o->dims[k].lo, (long long)o->dims[k].value)
                              : ir_fmt("--dim %s=%lld", sym, (long long)o->dims[k].value);
        for (int j = 0; j < k; j++)
            if (!strcmp(o->dims[j].symbol, sym))
                return ir_fail("%s: dimension '%s' is given twice", opt, sym);
        int found = 0;
        const char *all = "";
        for (int i = 0; i < g->ninputs; i++)
            for (int d = 0; d < g->inputs[i].ndim && !is_initializer(g, g->inputs[i].name); d++) {
                const char *p = g->inputs[i].dim_params[d];
                if (!p)
                    continue;
                found |= !strcmp(p, sym);
                if (!strstr(all, ir_fmt("'%s'", p)))
                    all = ir_fmt("%s%s'%s'", all, all[0] ? ", " : "", p);
            }
        if (!found)
            return ir_fail("%s: no graph input has a dimension named '%s' (named dimensions: %s)", opt, sym,
                           all[0] ? all : "none");
    }
    for (int k = 0; k < o->nbind; k++) {
        const OnnxBinding *b = &o->bind[k];
        if (check_input_name(g, b->option, b->name))
            return -1;
        for (int j = 0; j < k; j++)
            if (!strcmp(o->bind[j].name, b->name))
                return ir_fail("%s: input '%s' is bound twice", b->option, b->name);
    }
    return 0;
}

/* The value of --bind NAME=VALUE as one element of type t, into buf (8 bytes). */
static int parse_literal(const OnnxBinding *b, DType t, unsigned char *buf)
{
    const char *s = b->literal;
    char *end = NULL;
    if (t == DT_BOOL) {
        int v = !strcmp(s, "true") || !strcmp(s, "1") ? 1 : !strcmp(s, "false") || !strcmp(s, "0") ? 0 : -1;
        if (v < 0)
            return ir_fail("%s: input '%s' is bool; give true, false, 1 or 0", b->option, b->name);
        buf[0] = (unsigned char)v;
        return 0;
    }
    if (ir_dtype_is_float(t)) {
        double v = strtod(s, &end);
        if (end == s || *end)
            return ir_fail("%s: '%s' is not a number (input '%s' is %s; a file must end in .npy or .pb)",
                           b->option, s, b->name, ir_dtype_name(t));
        if (t == DT_F64)
            memcpy(buf, &v, 8);
        else if (t == DT_F32) {
            float f = (float)v;
            memcpy(buf, &f, 4);
        } else
            ir_f32_to_storage(t, (float)v, buf);
        return 0;
    }
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (end == s || *end || errno)
        return ir_fail("%s: '%s' is not a whole number (input '%s' is %s; a file must end in .npy or .pb)",
                       b->option, s, b->name, ir_dtype_name(t));
    if (ir_wrap_int(v, t) != v)
        return ir_fail("%s: %lld does not fit input '%s' of type %s", b->option, v, b->name, ir_dtype_name(t));
    int64_t w = v;
    memcpy(buf, &w, (size_t)ir_dtype_bytes(t));   /* little-endian: the low bytes */
    return 0;
}

/* The tensor of graph input vi: its shape from the model, --input-shape, --dim and bound
 * data; a constant when --bind gives its value. A dim nothing fixes is added to *missing
 * (the tensor is then NULL, and 0 returned). */
static int make_input(Import *I, const OnnxValueInfo *vi, const OnnxImportOpts *o,
                      const char **missing, Tensor **res, int *frozen)
{
    *res = NULL;
    *frozen = 0;
    if (vi->kind != ONNX_TYPE_NONE && vi->kind != ONNX_TYPE_TENSOR)
        return ir_fail("graph input '%s' is not a tensor (sequences, maps and optionals are not supported)",
                       vi->name);
    DType t;
    if (op_dtype_from_onnx(vi->dtype, &t))
        return ir_fail("graph input '%s': %s", vi->name, ir_errmsg());
    const OnnxInputShape *sa = NULL;
    const OnnxBinding *bind = NULL, *data = NULL;
    for (int k = 0; k < o->nshapes; k++)
        if (!strcmp(o->shapes[k].name, vi->name))
            sa = &o->shapes[k];
    for (int k = 0; k < o->nbind; k++)
        if (!strcmp(o->bind[k].name, vi->name))
            bind = &o->bind[k];
    for (int k = 0; k < o->ndata; k++)
        if (!strcmp(o->data[k].name, vi->name) && (!vi->has_shape || o->data[k].ndim == vi->ndim))
            data = &o->data[k];
    const OnnxBinding *file = bind && !bind->literal ? bind : NULL;
    int ndim = sa ? sa->ndim : vi->has_shape ? vi->ndim : file ? file->ndim : -1;
    if (ndim < 0) {
        *missing = ir_fmt("%s\n  input '%s' has no shape: pass --input-shape %s=D0,D1,...", *missing, vi->name,
                          vi->name);
        return 0;
    }
    if (ndim > KG_MAX_DIMS)
        return ir_fail("graph input '%s' has rank %d (limit %d)", vi->name, ndim, KG_MAX_DIMS);
    int64_t shape[KG_MAX_DIMS], lo[KG_MAX_DIMS];
    const char *dimname[KG_MAX_DIMS] = {0};
    int unresolved = 0;
    for (int d = 0; d < ndim; d++) {
        const char *sym = vi->has_shape ? vi->dim_params[d] : NULL;
        int64_t v = vi->has_shape ? vi->dims[d] : -1;
        if (v < -1)
            return ir_fail("graph input '%s': dimension %d is %lld; dimensions cannot be negative", vi->name, d,
                           (long long)v);
        if (sym)
            v = -1;
        lo[d] = -1;
        if (sa) {
            v = sa->dims[d];
            lo[d] = sa->lo[d];
        }
        for (int k = 0; k < o->ndims && v < 0 && sym; k++)
            if (!strcmp(o->dims[k].symbol, sym)) {
                v = o->dims[k].value;
                lo[d] = o->dims[k].lo;
                dimname[d] = o->dims[k].lo < v ? sym : NULL;
            }
        if (lo[d] >= 0 && lo[d] < v && !dimname[d])
            dimname[d] = ir_fmt("%s_dim%d", onnx_c_name(vi->name), d);
        if (v < 0 && file && file->ndim == ndim)
            v = file->dims[d];
        if (v < 0 && bind && bind->literal)
            v = 1;   /* a single value: every free dim is 1 */
        if (v < 0 && data)
            v = data->dims[d];   /* --bind-inputs: the data's size */
        if (v < 0) {
            *missing = ir_fmt("%s\n  input '%s' dim %d (%s%s%s): pass %s%s%s--input-shape %s=...", *missing,
                              vi->name, d, sym ? "'" : "", sym ? sym : "unnamed", sym ? "'" : "",
                              sym ? "--dim " : "", sym ? sym : "", sym ? "=N or " : "", vi->name);
            unresolved = 1;
        }
        shape[d] = v;
    }
    if (unresolved)
        return 0;
    const char *what = ir_fmt("graph input '%s'", vi->name);
    if (check_elems(I, what, ndim, shape))
        return -1;
    const char *cname = unique(I->prog, onnx_c_name(vi->name));
    Tensor *x;
    if (bind) {
        unsigned char lit[8] = {0};
        const void *bytes = bind->data;
        if (bind->literal) {
            int64_t n = 1;
            for (int d = 0; d < ndim; d++)
                n *= shape[d];
            if (n != 1)
                return ir_fail("%s: input '%s' has shape %s; a single value binds only an input of one element "
                               "(give a .npy or .pb file)", bind->option, vi->name, shape_str(ndim, shape));
            if (parse_literal(bind, t, lit))
                return -1;
            bytes = lit;
        } else {
            if (bind->dtype != vi->dtype)
                return ir_fail("%s: the file holds %s, input '%s' is %s", bind->option,
                               onnx_dtype_name(bind->dtype), vi->name, onnx_dtype_name(vi->dtype));
            if (bind->ndim != ndim || memcmp(bind->dims, shape, sizeof(int64_t) * (size_t)ndim))
                return ir_fail("%s: the file has shape %s, input '%s' %s", bind->option,
                               shape_str(bind->ndim, bind->dims), vi->name, shape_str(ndim, shape));
        }
        for (int d = 0; d < ndim; d++)
            if (dimname[d])
                return ir_fail("%s: input '%s' has a dimension decided at run time (dim %d), which a bound value "
                               "cannot have", bind->option, vi->name, d);
        x = ir_constant(cname, t, ndim, shape, bytes);
        *frozen = 1;
    } else {
        x = ir_placeholder(cname, t, ndim, shape);
        for (int d = 0; x && d < ndim; d++) {
            if (!dimname[d])
                continue;
            IrDim *dim = NULL;
            for (int k = 0; k < I->prog->dims.n && !dim; k++)
                if (!strcmp(((IrDim *)I->prog->dims.items[k])->name, onnx_c_name(dimname[d])))
                    dim = I->prog->dims.items[k];
            if (!dim)
                dim = ir_program_add_dim(I->prog, onnx_c_name(dimname[d]), lo[d], shape[d], I->out->ninputs, d);
            x->dyn[d] = ir_varref(dim->var);
        }
        if (x && data && data->dtype == vi->dtype && data->ndim == ndim &&
            !memcmp(data->dims, shape, sizeof(int64_t) * (size_t)ndim))
            x->data = data->data;
        I->has_data |= x->data != NULL;
    }
    if (!x || ir_program_add(I->prog, x))
        return -1;
    x->comment = ir_fmt("graph input '%s'%s", vi->name, bind ? ir_fmt(", bound by %s", bind->option) : "");
    *res = x;
    return 0;
}

/* A declared shape (graph output, value_info) must not contradict the computed one:
 * symbolic and unknown dims are inferred, static ones checked. */
static int check_declared(const OnnxValueInfo *vi, const Tensor *t, const char *what)
{
    if (!vi->has_shape || (vi->kind != ONNX_TYPE_NONE && vi->kind != ONNX_TYPE_TENSOR))
        return 0;
    int mismatch = vi->ndim != t->ndim;
    for (int d = 0; d < vi->ndim && !mismatch; d++)
        mismatch = vi->dims[d] >= 0 && !vi->dim_params[d] && vi->dims[d] != t->shape[d] && !t->dyn[d];
    if (!mismatch)
        return 0;
    const char *decl = "[";
    for (int d = 0; d < vi->ndim; d++)
        decl = ir_fmt("%s%s%s", decl, d ? ", " : "",
                      vi->dim_params[d] ? vi->dim_params[d] : vi->dims[d] < 0 ? "?" : ir_fmt("%lld", (long long)vi->dims[d]));
    return ir_fail("%s '%s' is declared with shape %s], but computes %s", what, vi->name, decl,
                   shape_str(t->ndim, t->shape));
}

/* ---------------------------------------------------------------- nodes */

static int import_nodes(Import *I, const OnnxGraph *g);

/* Freezes a graph input bound with --bind-inputs data into a constant. */
static void freeze(Import *I, Tensor *t)
{
    t->frozen = 1;
    t->kind = T_CONSTANT;
    if (I->ndep)
        memset(I->dep, 0, (size_t)I->ndep);   /* what depended on it may fold now */
}

/* t's value if it is known when compiling: a constant, or a compute over constants (run
 * now). With may_freeze, graph inputs bound with --bind-inputs data count as known and are
 * frozen. NULL: known only at run time. */
static Tensor *value_now(Import *I, Tensor *t, int may_freeze)
{
    if (t->kind == T_CONSTANT)
        return t;
    if (t->kind == T_PLACEHOLDER) {
        if (!may_freeze || !t->data)
            return NULL;
        freeze(I, t);
        return t;
    }
    PtrVec deps = {0};
    ir_program_renumber(I->prog);
    ir_tensor_closure(I->prog, t, &deps);
    for (int i = 0; i < deps.n; i++) {
        Tensor *x = deps.items[i];
        if (x->kind == T_PLACEHOLDER && (!may_freeze || !x->data))
            return NULL;
    }
    for (int i = 0; i < deps.n; i++)
        if (((Tensor *)deps.items[i])->kind == T_PLACEHOLDER)
            freeze(I, deps.items[i]);
    return onnx_fold(I->prog, t);
}

/* The one element of constant t as an integer (bool: 0 or 1). */
static int64_t scalar_of(Tensor *t)
{
    OpCtx c = {0};
    c.op = "value";
    c.nin = 1;
    c.in[0] = t;
    int64_t v = 0;
    op_const_ints(&c, 0, "value", &v, 1);
    return v;
}

static Tensor *scalar_const(Import *I, const char *what, DType t, int64_t v, const OnnxValueInfo *formal)
{
    int64_t one = 1, bytes = 0;
    memcpy(&bytes, &v, sizeof v);
    if (t == DT_BOOL)
        bytes = v != 0;
    int ndim = formal && formal->has_shape && formal->ndim == 1 ? 1 : 0;
    Tensor *x = ir_constant(unique(I->prog, onnx_c_name(what)), t, ndim, &one, &bytes);
    if (!x || ir_program_add(I->prog, x))
        return NULL;
    return x;
}

/* Imports subgraph g (an If branch, a Loop or Scan body) in a scope of its own: its formal
 * inputs are args[0..nargs), then its initializers and nodes; outs[i] gets output i. The
 * names it defines are gone afterwards; it reads the enclosing scopes' names. */
static int import_subgraph(Import *I, const OnnxGraph *g, const char *what, Tensor **args, int nargs,
                           Tensor **outs)
{
    if (g->ninputs != nargs)
        return ir_fail("%s has %d inputs, expected %d", what, g->ninputs, nargs);
    if (g->noutputs > OP_MAX_IO)
        return ir_fail("%s has %d outputs (limit %d)", what, g->noutputs, OP_MAX_IO);
    int save = I->nvals, scope = I->scope;
    I->scope = I->nvals;
    int rc = 0;
    for (int i = 0; i < nargs && !rc; i++)
        define(I, g->inputs[i].name, args[i]);
    for (int i = 0; i < g->ninit && !rc; i++) {
        Tensor *x = tensor_from_onnx(I, &g->initializers[i], "initializer");
        if (!x)
            rc = -1;
        else
            define(I, g->initializers[i].name, x);
    }
    if (!rc && import_nodes(I, g))
        rc = -1;
    for (int i = 0; i < g->noutputs && !rc; i++) {
        outs[i] = lookup(I, g->outputs[i].name);
        if (!outs[i])
            rc = ir_fail("output '%s' is not produced by any node", g->outputs[i].name);
    }
    I->nvals = save;
    I->scope = scope;
    return rc ? ir_fail("%s: %s", what, ir_errmsg()) : 0;
}

static const OnnxGraph *graph_attr(OpCtx *c, const char *name)
{
    const OpAttr *a = op_attr(c, name);
    if (!a || !a->graph) {
        ir_fail("%s: attribute '%s' (a graph) is required", c->op, name);
        return NULL;
    }
    return a->graph;   /* node_attrs() put an OnnxGraph there */
}

static const char *node_label(const OnnxNode *n)
{
    return ir_fmt("%s '%s'", n->op_type, n->name[0] ? n->name : n->noutputs ? n->outputs[0] : "");
}

/* If: a condition known when compiling inlines the branch it takes; one known only at
 * run time computes both branches and picks each output by the condition
 * (if-conversion), which needs the branches' outputs to agree in type and shape. */
static int import_if(Import *I, const OnnxNode *n, OpCtx *c)
{
    const OnnxGraph *gt = graph_attr(c, "then_branch"), *ge = gt ? graph_attr(c, "else_branch") : NULL;
    Tensor *cond = ge ? op_input(c, 0, "cond") : NULL;
    if (!cond)
        return -1;
    if (ir_tensor_numel(cond) != 1)
        return ir_fail("If: the condition has %lld elements, not one", (long long)ir_tensor_numel(cond));
    for (int k = 0; k < 2; k++) {
        const OnnxGraph *g = k ? ge : gt;
        if (g->noutputs != c->nout)
            return ir_fail("If: %s has %d outputs, the node %d", k ? "else_branch" : "then_branch", g->noutputs,
                           c->nout);
    }
    Tensor *known = value_now(I, cond, 0);
    if (known) {
        int taken = scalar_of(known) != 0;
        ir_vec_push(&I->out->notes, ir_fmt("%s: the condition is %s when compiling; only the %s branch is "
                                           "compiled", node_label(n), taken ? "true" : "false",
                                           taken ? "then" : "else"), 1 << 20, "notes");
        return import_subgraph(I, taken ? gt : ge, taken ? "then_branch" : "else_branch", NULL, 0, c->out);
    }
    /* each branch's tensors are needed only when it is taken: the model function may skip
     * the kernels that compute nothing else (ir_lower_model) */
    Tensor *a[OP_MAX_IO], *b[OP_MAX_IO];
    for (int k = 0; k < 2; k++) {
        IrGuard *gd = ir_alloc(sizeof *gd);
        *gd = (IrGuard){cond, !k, I->guard};
        int first = I->prog->tensors.n;
        I->guard = gd;
        int rc = import_subgraph(I, k ? ge : gt, k ? "else_branch" : "then_branch", NULL, 0, k ? b : a);
        I->guard = gd->up;
        if (rc)
            return -1;
        for (int i = first; i < I->prog->tensors.n; i++) {
            Tensor *t = I->prog->tensors.items[i];
            if (!t->guard && !ir_tensor_is_leaf(t))
                t->guard = gd;
        }
    }
    Expr *zero[KG_MAX_DIMS];
    for (int d = 0; d < cond->ndim; d++)
        zero[d] = ir_idx(0);
    for (int i = 0; i < c->nout; i++) {
        if (a[i]->dtype != b[i]->dtype || a[i]->ndim != b[i]->ndim ||
            memcmp(a[i]->shape, b[i]->shape, sizeof(int64_t) * (size_t)a[i]->ndim))
            return ir_fail("If: output %d is %s%s in then_branch and %s%s in else_branch, and the condition is known "
                           "only at run time; kgen needs both branches to agree (or the condition fixed: --bind "
                           "the inputs it depends on)", i, ir_dtype_name(a[i]->dtype), shape_str(a[i]->ndim, a[i]->shape),
                           ir_dtype_name(b[i]->dtype), shape_str(b[i]->ndim, b[i]->shape));
        if (a[i] == b[i]) {
            c->out[i] = a[i];
            continue;
        }
        Expr *cv = ir_access(cond, zero, cond->ndim);
        if (cond->dtype != DT_BOOL)
            cv = ir_bin(OP_NE, cv, op_lit(0, cond->dtype));
        IterVar **ax = op_axes(a[i]->ndim, a[i]->shape);
        Expr *idx[KG_MAX_DIMS];
        op_axis_exprs(ax, a[i]->ndim, idx);
        if (!op_emit_out(c, i, a[i]->ndim, ax, ir_select(cv, op_read(a[i], idx), op_read(b[i], idx))))
            return -1;
    }
    ir_vec_push(&I->out->notes, ir_fmt("%s: the condition is known only at run time; both branches are compiled, "
                                       "the model function runs the kernels of the branch taken (C, JS, WASM; the "
                                       "OpenCL and CUDA hosts read the condition back; Metal runs both), and each "
                                       "output is picked by the condition",
                                       node_label(n)), 1 << 20, "notes");
    return 0;
}

/* x with dimension `axis` fixed at `index` (one rank less) */
static Tensor *slice_at(OpCtx *c, Tensor *x, int axis, int64_t index)
{
    int64_t shape[KG_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < x->ndim; d++)
        if (d != axis)
            shape[n++] = x->shape[d];
    IterVar **ax = op_axes(n, shape);
    Expr *v[KG_MAX_DIMS], *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, n, v);
    for (int d = 0, k = 0; d < x->ndim; d++)
        idx[d] = d == axis ? ir_idx(index) : v[k++];
    return op_emit(c, op_name(c, ir_fmt("%s_slice%lld", x->name, (long long)index)), n, ax, ir_access(x, idx, x->ndim));
}

static Expr *stack_tree(Tensor **parts, int lo, int hi, Expr **idx, int ndim, int axis)
{
    if (hi - lo == 1) {
        Expr *ix[KG_MAX_DIMS];
        for (int d = 0, k = 0; d < ndim; d++)
            if (d != axis)
                ix[k++] = idx[d];
        return op_read(parts[lo], ix);
    }
    int mid = lo + (hi - lo) / 2;
    return ir_select(ir_bin(OP_LT, idx[axis], ir_idx(mid)), stack_tree(parts, lo, mid, idx, ndim, axis),
                     stack_tree(parts, mid, hi, idx, ndim, axis));
}

/* The n tensors of parts stacked along a new dimension `axis`: output `out` of the node. */
static int stack(OpCtx *c, int out, Tensor **parts, int n, int64_t axis_attr, const char *what)
{
    Tensor *p0 = parts[0];
    for (int i = 1; i < n; i++)
        if (parts[i]->dtype != p0->dtype || parts[i]->ndim != p0->ndim ||
            memcmp(parts[i]->shape, p0->shape, sizeof(int64_t) * (size_t)p0->ndim))
            return ir_fail("%s: iteration %d gives %s%s, iteration 0 %s%s; scan outputs must keep their type and "
                           "shape", what, i, ir_dtype_name(parts[i]->dtype), shape_str(parts[i]->ndim, parts[i]->shape),
                           ir_dtype_name(p0->dtype), shape_str(p0->ndim, p0->shape));
    int ndim = p0->ndim + 1, axis;
    if (ndim > KG_MAX_DIMS)
        return ir_fail("%s: a scan output of rank %d (limit %d)", what, ndim, KG_MAX_DIMS);
    if (op_axis(c, axis_attr, ndim, "scan_output_axes", &axis))
        return -1;
    int64_t shape[KG_MAX_DIMS];
    for (int d = 0, k = 0; d < ndim; d++)
        shape[d] = d == axis ? n : p0->shape[k++];
    IterVar **ax = op_axes(ndim, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, ndim, idx);
    return op_emit_out(c, out, ndim, ax, stack_tree(parts, 0, n, idx, ndim, axis)) ? 0 : -1;
}

/* A scan output of a loop that ran zero times: empty, its shape from the body's
 * declaration. */
static int empty_scan(OpCtx *c, int out, const OnnxValueInfo *vi, const char *what)
{
    DType t;
    if (!vi->has_shape || vi->ndim + 1 > KG_MAX_DIMS || op_dtype_from_onnx(vi->dtype, &t))
        return ir_fail("%s runs zero times, and the body does not declare the shape of scan output '%s'", what,
                       vi->name);
    int64_t shape[KG_MAX_DIMS] = {0};
    for (int d = 0; d < vi->ndim; d++) {
        if (vi->dims[d] < 0 || vi->dim_params[d])
            return ir_fail("%s runs zero times, and the body declares scan output '%s' with a symbolic shape", what,
                           vi->name);
        shape[d + 1] = vi->dims[d];
    }
    c->out[out] = op_const_tensor(c, "empty", t, vi->ndim + 1, shape, NULL);
    return c->out[out] ? 0 : -1;
}

/* The scalar state `what` of a run-time loop: a placeholder of its own, one element,
 * shaped as the body declares it ([] or [1]). */
static Tensor *loop_state(Import *I, IrLoop *L, const char *name, DType t, int ndim, const int64_t *shape)
{
    Tensor *x = ir_placeholder(unique(I->prog, name), t, ndim, shape);
    if (!x || ir_program_add(I->prog, x))
        return NULL;
    x->loop_state = L;
    return x;
}

/* Loop as a loop of the model function (ir_lower_model), for a trip count or condition
 * known only at run time, or a count too large to unroll (why says which). The body is
 * imported once; it reads the loop's states, which the model function sets before the
 * first iteration and into which it copies the body's next values after each one. So the
 * carried values must keep their type and shape. A scan output is one more state, its
 * bound the trip count (which must be known when compiling: trip_count, or, when the count
 * trip is trip_extent, an extent decided at run time, trip_count is its bound), a row
 * written per iteration; its extent, the iterations run, is a dim computed from values,
 * or trip_extent itself when no condition can end the loop early. */
static int runtime_loop(Import *I, const OnnxNode *n, OpCtx *c, const OnnxGraph *g, int ncar, Tensor *trip,
                        Expr *trip_extent, int64_t trip_count, Tensor *cond, const char *why)
{
    int nscan = 0;
    for (int i = ncar; i < c->nout; i++)
        if (c->out_names[i]) {
            if (trip && !trip_extent)
                return ir_fail("Loop: %s, and scan output %d is used: its length would be known only at run time, "
                               "and so would its bound, the trip count M, which comes from tensor values rather "
                               "than from run-time dims; kgen sizes a scan output for a bound known when compiling: "
                               "fix the inputs M depends on with --bind, compute M from the shape of an input whose "
                               "dim has a range (--dim SYM=LO..HI: the range's top is the bound), or give the Loop a "
                               "constant M as the bound and end it early with its condition", why, i - ncar);
            if (trip_count < 1 || trip_count > ONNX_MAX_UNROLL)
                return ir_fail("Loop: %s, and scan output %d is used: its length would be known only at run time, "
                               "%s (fix the inputs the count depends on with --bind)", why, i - ncar,
                               trip_count < 1 ? "with no bound (no trip count)"
                               : ir_fmt("and its bound, the trip count%s %lld, is more than kgen stacks at run time "
                                        "(%d)", trip ? "'s top over the run-time dims' ranges," : "",
                                        (long long)trip_count, ONNX_MAX_UNROLL));
            nscan = i - ncar + 1;
        }
    if (I->guard)
        return ir_fail("Loop: %s, inside the branch of an If decided at run time; kgen runs such a loop only "
                       "outside run-time branches (fix the condition's inputs with --bind)", why);
    if (I->loop)
        return ir_fail("Loop: %s, inside the body of %s, which runs at run time too; kgen does not nest such "
                       "loops", why, I->loop->name);
    if (trip && (trip->dtype != DT_I64 || ir_tensor_numel(trip) != 1))
        return ir_fail("Loop: the trip count M is %s%s, not one int64", ir_dtype_name(trip->dtype),
                       shape_str(trip->ndim, trip->shape));
    if (cond && ir_tensor_numel(cond) != 1)
        return ir_fail("Loop: the condition has %lld elements, not one", (long long)ir_tensor_numel(cond));
    if (ncar + nscan + 2 > IR_LOOP_MAX_STATES)
        return ir_fail("Loop: %d loop-carried values and scan outputs (limit %d)", ncar + nscan, IR_LOOP_MAX_STATES - 2);
    IrLoop *L = ir_alloc(sizeof *L);
    L->name = node_label(n);
    L->trip = trip;
    L->trip_count = trip ? -1 : trip_count;   /* (trip: trip_count is the scan outputs' bound) */
    L->nstate = ncar + 2;
    L->state = ir_alloc(sizeof *L->state * (size_t)(L->nstate + nscan));
    L->init = ir_alloc(sizeof *L->init * (size_t)(L->nstate + nscan));
    L->next = ir_alloc(sizeof *L->next * (size_t)(L->nstate + nscan));
    int64_t one = 1;
    L->state[0] = loop_state(I, L, ir_fmt("%s_iter", c->base), DT_I64, g->inputs[0].has_shape && g->inputs[0].ndim == 1,
                             &one);
    L->state[1] = loop_state(I, L, ir_fmt("%s_cond", c->base), DT_BOOL, g->inputs[1].has_shape && g->inputs[1].ndim == 1,
                             &one);
    L->init[1] = cond;
    for (int k = 0; k < ncar; k++) {
        Tensor *v = c->in[2 + k];
        L->state[2 + k] = loop_state(I, L, ir_fmt("%s_%s", c->base, onnx_c_name(g->inputs[2 + k].name)), v->dtype,
                                     v->ndim, v->shape);
        L->init[2 + k] = v;
    }
    for (int i = 0; i < L->nstate; i++)
        if (!L->state[i])
            return -1;
    Tensor *outs[OP_MAX_IO + 2];
    int first = I->prog->tensors.n;
    I->loop = L;
    int rc = import_subgraph(I, g, "body", L->state, L->nstate, outs);
    I->loop = NULL;
    if (rc)
        return -1;
    if (cond && (outs[0]->dtype != DT_BOOL || ir_tensor_numel(outs[0]) != 1))
        return ir_fail("Loop: the body's condition is %s%s, not one bool", ir_dtype_name(outs[0]->dtype),
                       shape_str(outs[0]->ndim, outs[0]->shape));
    for (int k = 0; k < ncar; k++) {
        const Tensor *a = L->state[2 + k], *b = outs[1 + k];
        if (a->dtype != b->dtype || a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim))
            return ir_fail("Loop: loop-carried value %d ('%s') is %s%s before the loop and %s%s after an iteration; "
                           "%s, so it runs as a loop, whose carried values must keep their type and shape", k,
                           g->inputs[2 + k].name, ir_dtype_name(a->dtype), shape_str(a->ndim, a->shape),
                           ir_dtype_name(b->dtype), shape_str(b->ndim, b->shape), why);
    }
    /* the next values: tensors of the body, each in a buffer of its own (a value from
     * outside the body, or another state, gets a copy: the states are overwritten one
     * after another) */
    for (int i = 1; i < L->nstate; i++) {
        Tensor *o = outs[i - 1];
        if (i == 1 && !cond)
            continue;   /* no condition: the body's is ignored */
        if (o == L->state[i])
            continue;   /* unchanged */
        int in_body = 0;
        for (int j = first; j < I->prog->tensors.n && !in_body; j++)
            in_body = I->prog->tensors.items[j] == o && !ir_tensor_is_leaf(o);
        if (!in_body) {
            IterVar **ax = op_axes(o->ndim, o->shape);
            Expr *idx[KG_MAX_DIMS];
            op_axis_exprs(ax, o->ndim, idx);
            o = op_emit(c, unique(I->prog, ir_fmt("%s_next", L->state[i]->name)), o->ndim, ax, op_read(o, idx));
            if (!o)
                return -1;
        }
        L->next[i] = o;
    }
    /* scan outputs: states [trip count, ...] (not set before the loop: only the rows the
     * iterations write are read) */
    for (int k = 0; k < nscan; k++) {
        Tensor *v = outs[1 + ncar + k], *acc;
        int64_t shape[KG_MAX_DIMS] = {trip_count};
        if (v->ndim + 1 > KG_MAX_DIMS || ir_tensor_is_dynamic(v))
            return ir_fail("Loop: scan output %d is %s%s, which kgen cannot stack at run time", k,
                           ir_dtype_name(v->dtype), shape_str(v->ndim, v->shape));
        memcpy(shape + 1, v->shape, sizeof(int64_t) * (size_t)v->ndim);
        int s = L->nstate++;
        L->state[s] = acc = loop_state(I, L, ir_fmt("%s_scan%d", c->base, k), v->dtype, v->ndim + 1, shape);
        L->next[s] = acc ? op_loop_scan_next(c, L->state[0], acc, v) : NULL;
        if (!L->next[s])
            return -1;
    }
    for (int j = first; j < I->prog->tensors.n; j++) {
        Tensor *t = I->prog->tensors.items[j];
        if (!ir_tensor_is_leaf(t))
            t->loop = L;
    }
    /* the loop's results: the carried values after the last iteration */
    for (int k = 0; k < ncar && k < c->nout; k++)
        if (!op_copy(c, k, L->state[2 + k]))
            return -1;
    const IrDim *iterations = NULL;
    for (int k = 0; k < nscan; k++) {
        if (!c->out_names[ncar + k])
            continue;
        if (trip_extent && !cond) {
            /* every iteration runs: the extent is the trip count's, an expression of dims */
            Tensor *t = op_copy(c, ncar + k, L->state[ncar + 2 + k]);
            if (!t)
                return -1;
            t->dyn[0] = t->axes[0]->dyn = trip_extent;
        } else if (op_loop_scan_out(c, ncar + k, L->state[0], L->state[ncar + 2 + k], &iterations)) {
            return -1;
        }
    }
    ir_vec_push(&I->out->notes, ir_fmt("%s: %s; it runs as a loop of the model function (C, JS, WASM; the OpenCL "
                                                   "and CUDA hosts read its condition back; not Metal)", L->name, why),
                1 << 20, "notes");
    return 0;
}

/* Loop: unrolled when the trip count and the condition are known when compiling (graph
 * inputs they depend on may be bound with --bind, or --bind-inputs data) and the unrolled
 * body stays small; otherwise a loop at run time (runtime_loop). */
static int import_loop(Import *I, const OnnxNode *n, OpCtx *c)
{
    const OnnxGraph *g = graph_attr(c, "body");
    if (!g)
        return -1;
    int ncar = c->nin - 2;
    if (ncar < 0)
        return ir_fail("Loop: inputs M and cond are required (either may be empty)");
    if (g->ninputs != ncar + 2)
        return ir_fail("Loop: the body has %d inputs; the node gives %d loop-carried values, so %d are expected",
                       g->ninputs, ncar, ncar + 2);
    int nscan = g->noutputs - 1 - ncar;
    if (nscan < 0 || c->nout > ncar + nscan)
        return ir_fail("Loop: the body has %d outputs; the node has %d loop-carried values and %d outputs",
                       g->noutputs, ncar, c->nout);
    for (int i = 0; i < ncar; i++)
        if (!op_input(c, 2 + i, "loop-carried value"))
            return -1;
    int64_t M = -1;
    int has_trip = op_has_input(c, 0), has_cond = op_has_input(c, 1), cond = 1;
    Tensor *trip_rt = NULL, *cond_rt = NULL;   /* known only at run time */
    Expr *trip_extent = NULL;   /* M, an extent decided at run time (Tensor.sym); M: its bound */
    if (has_trip && ir_tensor_has_sym(c->in[0])) {
        Tensor *m = c->in[0];
        if (m->dtype != DT_I64 || ir_tensor_numel(m) != 1)
            return ir_fail("Loop: the trip count M is %s%s, not one int64", ir_dtype_name(m->dtype),
                           shape_str(m->ndim, m->shape));
        trip_extent = m->sym[0];
        memcpy(&M, m->data, sizeof M);
        /* the count as a tensor the loop reads at run time */
        IterVar **ax = op_axes(m->ndim, m->shape);
        trip_rt = op_emit(c, unique(I->prog, ir_fmt("%s_trip", c->base)), m->ndim, ax,
                          ir_cast(DT_I64, trip_extent));
        if (!trip_rt)
            return -1;
    } else if (has_trip) {
        Tensor *k = value_now(I, c->in[0], 1);
        if (k)
            M = scalar_of(k);
        else
            trip_rt = c->in[0];
    }
    if (has_cond) {
        Tensor *k = value_now(I, c->in[1], 1);
        if (k)
            cond = scalar_of(k) != 0;
        else
            cond_rt = c->in[1];
    }
    if (!has_trip && !has_cond)
        return ir_fail("Loop: neither a trip count nor a condition: the loop never ends");
    if (trip_rt || cond_rt)
        return runtime_loop(I, n, c, g, ncar, trip_rt, trip_extent, M, has_cond ? c->in[1] : NULL,
                            trip_extent ? ir_fmt("the trip count is an extent decided at run time (at most %lld)",
                                                 (long long)M)
                            : trip_rt   ? "the trip count is known only at run time"
                                        : "the condition is known only at run time");
    int scans_used = 0;
    for (int i = ncar; i < c->nout; i++)
        scans_used |= c->out_names[i] != NULL;
    if (cond && M > 0 && (M > ONNX_MAX_UNROLL || M * g->nnodes > ONNX_MAX_UNROLLED_NODES) && !scans_used)
        return runtime_loop(I, n, c, g, ncar, NULL, NULL, M, has_cond ? c->in[1] : NULL,
                            M > ONNX_MAX_UNROLL
                                ? ir_fmt("its trip count, %lld, is more than kgen unrolls (%d)", (long long)M,
                                         ONNX_MAX_UNROLL)
                                : ir_fmt("%lld iterations of a body of %d nodes are more than kgen unrolls (%d nodes)",
                                         (long long)M, g->nnodes, ONNX_MAX_UNROLLED_NODES));
    Tensor *carried[OP_MAX_IO], *outs[OP_MAX_IO];
    for (int i = 0; i < ncar; i++)
        carried[i] = c->in[2 + i];
    Tensor **scans = ir_alloc(sizeof *scans * (size_t)(nscan ? nscan : 1) * ONNX_MAX_UNROLL);
    /* what to take back when an iteration's condition turns out to be known only at run time */
    int ntensors = I->prog->tensors.n, nnotes = I->out->notes.n;
    int64_t first = I->out->nnodes, budget = I->budget;
    int64_t it = 0;
    for (; cond && (M < 0 || it < M); it++) {
        if (it == ONNX_MAX_UNROLL)
            return ir_fail("Loop: runs more than %d times, too many to unroll%s", ONNX_MAX_UNROLL,
                           scans_used ? ", and its scan outputs are used" : "");
        if (I->out->nnodes - first > ONNX_MAX_UNROLLED_NODES || (M > 0 && M * g->nnodes > ONNX_MAX_UNROLLED_NODES))
            return ir_fail("Loop: %lld iterations of a body of %d nodes, more than kgen unrolls (%d nodes in all), "
                           "and its scan outputs are used", (long long)(M > 0 ? M : it), g->nnodes,
                           ONNX_MAX_UNROLLED_NODES);
        Tensor *args[OP_MAX_IO + 2];
        args[0] = scalar_const(I, ir_fmt("%s_iter%lld", c->base, (long long)it), DT_I64, it, &g->inputs[0]);
        args[1] = scalar_const(I, ir_fmt("%s_cond%lld", c->base, (long long)it), DT_BOOL, 1, &g->inputs[1]);
        if (!args[0] || !args[1])
            return -1;
        memcpy(args + 2, carried, sizeof *carried * (size_t)ncar);
        const char *suffix = I->suffix;
        I->suffix = ir_fmt("%s_it%lld", suffix, (long long)it);
        int rc = import_subgraph(I, g, ir_fmt("body (iteration %lld)", (long long)it), args, ncar + 2, outs);
        I->suffix = suffix;
        if (rc)
            return -1;
        if (has_cond) {
            Tensor *k = value_now(I, outs[0], 1);
            if (!k) {
                /* take the unrolled iterations back: the whole loop runs at run time */
                I->prog->tensors.n = ntensors;
                ir_program_renumber(I->prog);
                if (I->ndep)
                    memset(I->dep, 0, (size_t)I->ndep);
                I->out->notes.n = nnotes;
                I->out->nnodes = first;
                I->budget = budget;
                return runtime_loop(I, n, c, g, ncar, NULL, NULL, M, c->in[1],
                                    ir_fmt("the body's condition is known only at run time (in iteration %lld)",
                                           (long long)it));
            }
            cond = scalar_of(k) != 0;
        }
        memcpy(carried, outs + 1, sizeof *carried * (size_t)ncar);
        for (int k = 0; k < nscan; k++)
            scans[k * ONNX_MAX_UNROLL + it] = outs[1 + ncar + k];
    }
    for (int i = 0; i < c->nout; i++) {
        if (i < ncar) {
            c->out[i] = carried[i];
        } else if (!c->out_names[i]) {
            continue;
        } else if (it == 0) {
            if (empty_scan(c, i, &g->outputs[1 + i], "Loop"))
                return -1;
        } else if (stack(c, i, scans + (i - ncar) * ONNX_MAX_UNROLL, (int)it, 0, "Loop")) {
            return -1;
        }
    }
    ir_vec_push(&I->out->notes, ir_fmt("%s: unrolled, %lld iterations", node_label(n), (long long)it), 1 << 20,
                "notes");
    return 0;
}

/* One Scan over L steps: states[0..nstate) carried, xs[0..nx) read along axes[] (reversed
 * where dirs[]), each step's scan outputs into steps[k * L + t]. */
static int scan_steps(Import *I, OpCtx *c, const OnnxGraph *g, Tensor **states, int nstate, Tensor **xs, int nx,
                      const int *axes, const int64_t *dirs, int64_t L, Tensor **steps)
{
    int nout = g->noutputs - nstate;
    if (nout < 0)
        return ir_fail("Scan: the body has %d outputs, fewer than its %d states", g->noutputs, nstate);
    for (int64_t t = 0; t < L; t++) {
        Tensor *args[OP_MAX_IO], *outs[OP_MAX_IO];
        memcpy(args, states, sizeof *states * (size_t)nstate);
        for (int j = 0; j < nx; j++) {
            args[nstate + j] = slice_at(c, xs[j], axes[j], dirs[j] ? L - 1 - t : t);
            if (!args[nstate + j])
                return -1;
        }
        const char *suffix = I->suffix;
        I->suffix = ir_fmt("%s_it%lld", suffix, (long long)t);
        int rc = import_subgraph(I, g, ir_fmt("body (step %lld)", (long long)t), args, nstate + nx, outs);
        I->suffix = suffix;
        if (rc)
            return -1;
        memcpy(states, outs, sizeof *states * (size_t)nstate);
        for (int k = 0; k < nout; k++)
            steps[k * L + t] = outs[nstate + k];
    }
    return 0;
}

/* Scan (opset 9 and later; opset 8's batched form too): unrolled over its length, which
 * the shapes fix. */
static int import_scan(Import *I, const OnnxNode *n, OpCtx *c)
{
    const OnnxGraph *g = graph_attr(c, "body");
    if (!g)
        return -1;
    int v8 = c->opset < 9;
    int first = v8 ? 1 : 0;   /* opset 8: input 0 is sequence_lens */
    int64_t nx = op_attr_int(c, "num_scan_inputs", -1);
    int nin = c->nin - first;
    if (nx < 1 || nx > nin)
        return ir_fail("Scan: attribute num_scan_inputs is %lld; the node has %d inputs", (long long)nx, nin);
    int nstate = nin - (int)nx, nout = g->noutputs - nstate;
    if (g->ninputs != nin)
        return ir_fail("Scan: the body has %d inputs, the node %d", g->ninputs, nin);
    if (nout < 0 || c->nout != g->noutputs)
        return ir_fail("Scan: the body has %d outputs, the node %d", g->noutputs, c->nout);
    Tensor *in[OP_MAX_IO];
    for (int i = 0; i < nin; i++)
        if (!(in[i] = op_input(c, first + i, i < nstate ? "initial state" : "scan input")))
            return -1;
    int64_t dirs[OP_MAX_IO] = {0}, oaxes[OP_MAX_IO] = {0}, odirs[OP_MAX_IO] = {0}, iax[OP_MAX_IO] = {0};
    int axes[OP_MAX_IO];
    op_attr_ints(c, v8 ? "directions" : "scan_input_directions", dirs, OP_MAX_IO);
    if (!v8) {
        op_attr_ints(c, "scan_input_axes", iax, OP_MAX_IO);
        op_attr_ints(c, "scan_output_axes", oaxes, OP_MAX_IO);
        op_attr_ints(c, "scan_output_directions", odirs, OP_MAX_IO);
    }
    int64_t B = 1;
    if (v8) {
        if (op_has_input(c, 0)) {
            Tensor *k = value_now(I, c->in[0], 1);
            if (!k)
                return ir_fail("Scan: sequence_lens is known only at run time; kgen needs every sequence at its "
                               "full length");
            c->in[0] = k;
        }
        for (int i = 0; i < nin; i++)
            if (in[i]->ndim < (i < nstate ? 1 : 2))
                return ir_fail("Scan: input %d has rank %d; opset 8 puts the batch first", first + i, in[i]->ndim);
        B = in[0]->shape[0];
    }
    int64_t L = -1;
    for (int j = 0; j < nx; j++) {
        Tensor *x = in[nstate + j];
        if (v8)
            axes[j] = 0;   /* after the batch is sliced off: opset 8 scans dimension 1 */
        else if (op_axis(c, iax[j], x->ndim, "scan_input_axes", &axes[j]))
            return -1;
        int64_t len = x->shape[v8 ? 1 : axes[j]];
        if (L >= 0 && len != L)
            return ir_fail("Scan: scan input %d has length %lld, scan input 0 %lld", j, (long long)len, (long long)L);
        L = len;
    }
    if (v8 && op_has_input(c, 0)) {
        int64_t lens[ONNX_MAX_UNROLL];
        int64_t n = op_const_ints(c, 0, "sequence_lens", lens, ONNX_MAX_UNROLL);
        if (n < 0)
            return -1;
        for (int64_t i = 0; i < n; i++)
            if (lens[i] != L)
                return ir_fail("Scan: sequence_lens[%lld] is %lld, not the full length %lld", (long long)i,
                               (long long)lens[i], (long long)L);
    }
    if (L > ONNX_MAX_UNROLL || B * L > ONNX_MAX_UNROLL)
        return ir_fail("Scan: %lld steps, too many to unroll (limit %d)", (long long)(B * L), ONNX_MAX_UNROLL);
    if (B * L * g->nnodes > ONNX_MAX_UNROLLED_NODES)
        return ir_fail("Scan: %lld steps of a body of %d nodes, more than kgen unrolls (%d nodes in all)",
                       (long long)(B * L), g->nnodes, ONNX_MAX_UNROLLED_NODES);
    if (L == 0)
        for (int k = 0; k < nout; k++)
            if (empty_scan(c, nstate + k, &g->outputs[nstate + k], "Scan"))
                return -1;
    Tensor **steps = ir_alloc(sizeof *steps * (size_t)((nout ? nout : 1) * (L ? L : 1)));
    Tensor **final = ir_alloc(sizeof *final * (size_t)(nstate + nout + 1) * (size_t)B);
    for (int64_t b = 0; b < B; b++) {
        Tensor *states[OP_MAX_IO], *xs[OP_MAX_IO];
        for (int i = 0; i < nin; i++) {
            Tensor *t = v8 ? slice_at(c, in[i], 0, b) : in[i];
            if (!t)
                return -1;
            if (i < nstate)
                states[i] = t;
            else
                xs[i - nstate] = t;
        }
        if (L > 0 && scan_steps(I, c, g, states, nstate, xs, (int)nx, axes, dirs, L, steps))
            return -1;
        for (int i = 0; i < nstate; i++)
            final[i * B + b] = states[i];
        for (int k = 0; k < nout && L > 0; k++) {
            Tensor **p = steps + k * L;
            if (odirs[k])
                for (int64_t t = 0; t < L / 2; t++) {
                    Tensor *x = p[t];
                    p[t] = p[L - 1 - t];
                    p[L - 1 - t] = x;
                }
            if (!v8) {
                if (stack(c, nstate + k, p, (int)L, oaxes[k], "Scan"))
                    return -1;
            } else {
                /* opset 8: this batch's output [L, ...], stacked over the batch below */
                if (stack(c, nstate + k, p, (int)L, 0, "Scan"))
                    return -1;
                final[(nstate + k) * B + b] = c->out[nstate + k];
            }
        }
    }
    for (int i = 0; i < nstate; i++) {
        if (!v8)
            c->out[i] = final[i];
        else if (stack(c, i, final + i * B, (int)B, 0, "Scan"))
            return -1;
    }
    for (int k = 0; k < nout && v8 && L > 0; k++)
        if (stack(c, nstate + k, final + (nstate + k) * B, (int)B, 0, "Scan"))
            return -1;
    ir_vec_push(&I->out->notes, ir_fmt("%s: unrolled, %lld steps", node_label(n), (long long)(B * L)), 1 << 20,
                "notes");
    return 0;
}

/* The node's attributes as the operator builders take them: plain values (OpAttr), the
 * arrays the model's own; subgraphs go opaque in OpAttr.graph, read back by graph_attr()
 * and subgraph_now(). A malloc'ed array (free() it), NULL when there are none. */
static OpAttr *node_attrs(const OnnxNode *n)
{
    static const OpAttrKind kinds[] = {
        [ONNX_ATTR_UNDEFINED] = OP_ATTR_UNDEFINED, [ONNX_ATTR_FLOAT] = OP_ATTR_FLOAT,
        [ONNX_ATTR_INT] = OP_ATTR_INT,             [ONNX_ATTR_STRING] = OP_ATTR_STRING,
        [ONNX_ATTR_TENSOR] = OP_ATTR_TENSOR,       [ONNX_ATTR_GRAPH] = OP_ATTR_GRAPH,
        [ONNX_ATTR_FLOATS] = OP_ATTR_FLOATS,       [ONNX_ATTR_INTS] = OP_ATTR_INTS,
        [ONNX_ATTR_STRINGS] = OP_ATTR_STRINGS,
    };
    if (n->nattrs <= 0)
        return NULL;
    OpAttr *v = calloc((size_t)n->nattrs, sizeof *v);
    if (!v)
        ir_die("out of memory");
    for (int k = 0; k < n->nattrs; k++) {
        const OnnxAttr *a = &n->attrs[k];
        OpAttr *o = &v[k];
        o->name = a->name;
        o->kind = a->type >= 0 && a->type < (int)(sizeof kinds / sizeof *kinds) ? kinds[a->type] : OP_ATTR_OTHER;
        o->i = a->i;
        o->f = a->f;
        o->s = a->s;
        o->ints = a->ints;
        o->nints = a->nints;
        o->floats = a->floats;
        o->nfloats = a->nfloats;
        o->strings = (const char *const *)a->strings;
        o->nstrings = a->nstrings;
        if (a->t) {
            o->has_tensor = 1;
            o->t = (OpAttrTensor){a->t->dtype, a->t->ndim, a->t->dims, a->t->nelems, a->t->data};
        }
        if (a->g) {
            o->graph = a->g;
            o->graph_ninputs = a->g->ninputs;
            o->graph_noutputs = a->g->noutputs;
        }
    }
    return v;
}

/* OpCtx.known: a value computed from graph inputs bound with --bind-inputs data */
static Tensor *known_now(void *importer, Tensor *t) { return value_now(importer, t, 1); }

/* OpCtx.subgraph: an operator's graph attribute (FlexAttention's score_mod), inlined */
static int subgraph_now(void *importer, const void *graph, const char *what, Tensor **args, int nargs,
                        Tensor **outs)
{
    return import_subgraph(importer, graph, what, args, nargs, outs);
}

/* Imports node ni of g (folded_into: BatchNormalization nodes folded into an earlier node). */
static int import_node(Import *I, const OnnxGraph *g, int ni, int *folded_into)
{
    const OnnxNode *n = &g->nodes[ni];
    OnnxImport *out = I->out;
    if (--I->budget < 0) {
        ir_fail("more than %d nodes to import (unrolled loops count each time)", ONNX_MAX_IMPORTED_NODES);
        return node_fail(n, ni);
    }
    if (folded_into[ni]) {
        /* a BatchNormalization folded into the Conv/Gemm before it */
        define(I, n->outputs[0], lookup(I, g->nodes[folded_into[ni] - 1].outputs[0]));
        out->nnodes++;
        out->nfolded++;
        return 0;
    }
    /* another domain's operators are registered as "DOMAIN:OP" (ir/ops/ops.h) */
    int other = n->domain[0] && strcmp(n->domain, "ai.onnx");
    const OpDef *def = other ? op_find(ir_fmt("%s:%s", n->domain, n->op_type)) : NULL;
    if (other && !def)
        return ir_fail("node %d '%s' (%s): unsupported operator domain '%s'", ni, n->name, n->op_type, n->domain);
    int control = !other && (!strcmp(n->op_type, "If") || !strcmp(n->op_type, "Loop") || !strcmp(n->op_type, "Scan"));
    if (!other && !control)
        def = op_find(n->op_type);
    if (!def && !control) {
        ir_fail("unsupported operator");
        return node_fail(n, ni);
    }
    if (n->ninputs > OP_MAX_IO || n->noutputs > OP_MAX_IO) {
        ir_fail("more than %d inputs or outputs", OP_MAX_IO);
        return node_fail(n, ni);
    }
    OpCtx c = {0};
    c.op = n->op_type;
    c.opset = out->opset;
    c.importer = I;
    c.subgraph = subgraph_now;
    if (I->has_data)
        c.known = known_now;
    c.domain_opset = other ? onnx_opset(I->model, n->domain) : out->opset;
    c.prog = I->prog;
    c.nin = n->ninputs;
    for (int i = 0; i < n->ninputs; i++) {
        if (!n->inputs[i][0])
            continue;
        c.in[i] = lookup(I, n->inputs[i]);
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
        c.out_names[i] =
            n->outputs[i][0] ? unique(I->prog, ir_fmt("%s%s", onnx_c_name(n->outputs[i]), I->suffix)) : NULL;
    c.base = ir_fmt("%s%s", onnx_c_name(n->noutputs && n->outputs[0][0] ? n->outputs[0] : n->op_type), I->suffix);
    c.first_output = n->noutputs > 0 ? n->outputs[0] : "";
    int bn = control ? -1 : onnx_fold_bn(I->prog, g, ni, &c, lookup_value, I);
    if (bn >= 0)
        folded_into[bn] = ni + 1;
    OpAttr *attrs = node_attrs(n);
    c.attrs = attrs;
    c.nattrs = n->nattrs;
    int dyn = control || other ? 0 : op_dyn_kind(n->op_type);
    if (dyn && (op_attr_int(&c, "training_mode", 0) || (!strcmp(n->op_type, "Dropout") && n->ninputs > 2)))
        dyn = 0;   /* training: counts and random masks over the whole shape */
    int sym = 0;   /* an input holds extents decided at run time (Tensor.sym) */
    int arith = 0; /* and the node is arithmetic on them (onnx_sym_arith builds it) */
    for (int i = 0; i < n->ninputs; i++)
        if (c.in[i] && ir_tensor_has_sym(c.in[i])) {
            if (control && i == 0 && !strcmp(n->op_type, "Loop"))
                continue;   /* a trip count from run-time dims: import_loop bounds it */
            if (control || other || !onnx_sym_op(n->op_type) ||
                (onnx_sym_op(n->op_type) == 2 && !onnx_sym_input_ok(n->op_type, i))) {
                free(attrs);
                ir_fail("input %d ('%s') holds extents decided at run time (a shape of a tensor with run-time "
                        "dims), and kgen cannot run %s on them yet (fix the dims with --input-shape or --dim N)",
                        i, n->inputs[i], n->op_type);
                return node_fail(n, ni);
            }
            sym = sym || onnx_sym_op(n->op_type) == 1 || (i == 0 && !strcmp(n->op_type, "Reshape"));
            arith = onnx_sym_op(n->op_type) == 3;
        }
    for (int i = 0; i < n->ninputs; i++)
        if (c.in[i] && ir_tensor_is_dynamic(c.in[i]) && !dyn) {
            int d = 0;
            while (!c.in[i]->dyn[d])
                d++;
            free(attrs);
            ir_fail("input %d ('%s') has a dim decided at run time (dim %d: %s), and kgen runs %s only on fixed "
                    "dims yet (fix the dim with --input-shape or --dim N)",
                    i, n->inputs[i], d,
                    c.in[i]->dyn[d]->kind == E_VAR ? c.in[i]->dyn[d]->u.var->name : "derived", n->op_type);
            return node_fail(n, ni);
        }
    int first = I->prog->tensors.n;
    int rc = arith                          ? onnx_sym_arith(&c)
             : !control                     ? def->build(&c)
             : !strcmp(n->op_type, "If")   ? import_if(I, n, &c)
             : !strcmp(n->op_type, "Loop") ? import_loop(I, n, &c)
                                           : import_scan(I, n, &c);
    free(attrs);
    if (rc)
        return node_fail(n, ni);
    for (int i = first; i < I->prog->tensors.n && I->prog->dims.n; i++)
        if (ir_dyn_infer(I->prog, I->prog->tensors.items[i], dyn == 1 && !c.dyn_own))
            return node_fail(n, ni);
    for (int i = first; i < I->prog->tensors.n; i++) {
        Tensor *t = I->prog->tensors.items[i];
        if (check_elems(I, ir_fmt("'%s'", t->name), t->ndim, t->shape))
            return node_fail(n, ni);
    }
    const char *origin = node_label(n);
    for (int i = first; i < I->prog->tensors.n; i++) {
        Tensor *t = I->prog->tensors.items[i];
        if (!t->comment)
            t->comment = origin;
    }
    /* the NCHW images of convs, pools and Resize: axis 2 is the rows (other 4-D tensors
     * are left to the default: a Transpose's may be NHWC) */
    for (int i = first; !other && !control && op_makes_images(n->op_type) && i < I->prog->tensors.n; i++) {
        Tensor *t = I->prog->tensors.items[i];
        if (t->kind == T_COMPUTE && t->ndim == 4 && !t->rows_axis)
            t->rows_axis = 2;
    }
    for (int i = 0; i < n->noutputs; i++) {
        if (!n->outputs[i][0])
            continue;
        Tensor *t = c.out[i];
        if (!t) {
            ir_fail("output %d ('%s') was not produced", i, n->outputs[i]);
            return node_fail(n, ni);
        }
        /* (a compute with a run-time extent, Range over one, is not folded at its bound) */
        if (!ir_tensor_is_leaf(t) && !ir_tensor_is_dynamic(t) && !depends_on_input(I, t)) {
            Tensor *f = onnx_fold(I->prog, t);
            if (f) {
                t = f;
                out->nfolded++;
            }
        }
        if (sym && onnx_sym_values(&c, &t))
            return node_fail(n, ni);
        define(I, n->outputs[i], t);
    }
    out->nnodes++;
    return 0;
}

/* The nodes of g, in the graph's (topological) order. */
static int import_nodes(Import *I, const OnnxGraph *g)
{
    int *folded_into = ir_alloc(sizeof *folded_into * (size_t)(g->nnodes + 1));   /* BN node -> producer + 1 */
    for (int ni = 0; ni < g->nnodes; ni++)
        if (import_node(I, g, ni, folded_into))
            return -1;
    return 0;
}

int onnx_import(const OnnxModel *m, const OnnxImportOpts *opts, OnnxImport *out)
{
    const OnnxGraph *g = &m->graph;
    static const OnnxImportOpts none;
    const OnnxImportOpts *o = opts ? opts : &none;
    Import I = {0};
    I.max_elems = m->limits.elements > 0 && m->limits.elements < GEN_MAX_ELEMS ? m->limits.elements : GEN_MAX_ELEMS;
    I.budget = ONNX_MAX_IMPORTED_NODES;
    I.suffix = "";
    I.out = out;
    I.model = m;
    memset(out, 0, sizeof *out);
    I.prog = ir_program_new(g->name[0] ? onnx_c_name(g->name) : "model");
    out->prog = I.prog;
    out->opset = onnx_opset(m, "");
    if (out->opset < 1)
        out->opset = 1;
    if (out->opset > ONNX_MAX_OPSET)
        return ir_fail("opset %lld of the default domain is newer than kgen knows (%d)", (long long)out->opset,
                       ONNX_MAX_OPSET);

    /* graph inputs that are not initializers */
    if (check_shape_options(g, o))
        return -1;
    out->inputs = ir_alloc(sizeof *out->inputs * (size_t)(g->ninputs + 1));
    const char *missing = "";
    for (int i = 0; i < g->ninputs; i++) {
        const OnnxValueInfo *vi = &g->inputs[i];
        if (find_init(g, vi->name))
            continue;
        Tensor *x;
        int frozen;
        if (make_input(&I, vi, o, &missing, &x, &frozen))
            return -1;
        if (!x)
            continue;
        define(&I, vi->name, x);
        out->inputs[out->ninputs++] = (OnnxValue){vi->name, x, frozen};
    }
    if (missing[0])
        return ir_fail("graph inputs have dimensions that nothing fixes; kgen compiles for static shapes:%s",
                       missing);
    /* initializers: constants, converted when first used */
    for (int i = 0; i < g->ninit; i++) {
        Tensor *x = tensor_from_onnx(&I, &g->initializers[i], "initializer");
        if (!x)
            return -1;
        define(&I, g->initializers[i].name, x);
    }
    if (import_nodes(&I, g))
        return -1;
    /* inputs an operator needed the values of are constants now */
    for (int i = 0; i < out->ninputs; i++)
        if (out->inputs[i].t->frozen) {
            out->inputs[i].t->kind = T_CONSTANT;
            out->inputs[i].frozen = 1;
        }
    /* declared shapes are checked, never trusted */
    for (int i = 0; i < g->nvalue_info; i++) {
        Tensor *t = lookup(&I, g->value_info[i].name);
        if (t && check_declared(&g->value_info[i], t, "value_info"))
            return -1;
    }

    /* outputs: each its own compute */
    out->outputs = ir_alloc(sizeof *out->outputs * (size_t)(g->noutputs + 1));
    for (int i = 0; i < g->noutputs; i++) {
        const char *name = g->outputs[i].name;
        Tensor *t = lookup(&I, name);
        if (!t)
            return ir_fail("graph output '%s' is not produced by any node", name);
        if (check_declared(&g->outputs[i], t, "graph output"))
            return -1;
        int taken = (ir_tensor_is_leaf(t) && ir_tensor_numel(t) > 0) || t->kind == T_SCAN;
        for (int j = 0; j < out->noutputs && !taken; j++)
            taken = out->outputs[j].t == t;
        if ((taken || t->kind == T_PLACEHOLDER) && ir_tensor_numel(t) == 0) {
            /* an empty output needs no kernel, only a name of its own */
            t = ir_constant(unique(I.prog, ir_fmt("%s_out", onnx_c_name(name))), t->dtype, t->ndim, t->shape, NULL);
            if (!t || ir_program_add(I.prog, t))
                return -1;
            taken = 0;
        }
        if (taken) {
            OpCtx c = {0};
            c.op = "output";
            c.prog = I.prog;
            c.base = onnx_c_name(name);
            c.out_names[0] = unique(I.prog, ir_fmt("%s_out", onnx_c_name(name)));
            t = op_copy(&c, 0, t);
            if (!t || (I.prog->dims.n && ir_dyn_infer(I.prog, t, 1)))
                return -1;   /* (the copy runs to the input's run-time extents) */
            t->comment = ir_fmt("copy to graph output '%s'", name);
        }
        t->is_output = 1;
        out->outputs[out->noutputs++] = (OnnxValue){name, t, 0};
    }
    if (ir_program_verify(I.prog))
        return ir_fail("the imported program is inconsistent: %s", ir_errmsg());
    return 0;
}
