/* model.c - the C target for a whole model: the kernels (static functions), the model
 * function that runs them in order over the arena, the weights as static const arrays in
 * their own file, a DLPack-style entry with argument checks, the input/output tables,
 * and optionally a runner program with its Makefile.
 * requires: a lowered model (ir_lower_model); breaks: nothing (adds files to an OutSet). */
#include "cfamily.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the C symbol of a constant: NAME_w_<buffer> */
const char *em_c_weight_symbol(const EmModel *m, const Buffer *b) { return ir_fmt("%s_w_%s", m->name, b->name); }

int64_t em_blob_offset(const PtrVec *constants, const Buffer *b, int64_t *total)
{
    int64_t off = 0, at = -1;
    for (int i = 0; i < constants->n; i++) {
        const Buffer *c = constants->items[i];
        if (c == b)
            at = off;
        off += (ir_dtype_size(c->dtype, c->size) + 63) / 64 * 64;
    }
    if (total)
        *total = off;
    return at;
}

static int64_t weights_bytes(const Model *mod)
{
    int64_t total;
    em_blob_offset(&mod->constants, NULL, &total);
    return total;
}

/* How the constants of m are linked: --weights, and for auto their size. Only the C target
 * itself links a blob with .incbin: wasm (target NULL) builds NAME_weights.c with emcc,
 * the GPU hosts upload from NAME_weights.c. */
static int weights_mode(const EmModel *m)
{
    if (m->weights_in_file == EM_WEIGHTS_FILE)
        return EM_WEIGHTS_FILE;
    if (!m->target || m->target->kind != TARGET_C)
        return EM_WEIGHTS_EMBED;
    if (m->weights_in_file == EM_WEIGHTS_AUTO)
        return weights_bytes(m->model) > EM_WEIGHTS_INCBIN_BYTES ? EM_WEIGHTS_INCBIN : EM_WEIGHTS_EMBED;
    return m->weights_in_file;
}

/* Embedded weights reached through NAME_weight_table (m->weight_table) */
static int weight_table(const EmModel *m)
{
    return m->weight_table && m->model->constants.n && weights_mode(m) == EM_WEIGHTS_EMBED;
}

/* b's position among the model's constants: its entry in NAME_weight_table */
static int constant_index(const Model *mod, const Buffer *b)
{
    for (int i = 0; i < mod->constants.n; i++)
        if (mod->constants.items[i] == b)
            return i;
    return -1;
}

/* A float as an exact C99 hexadecimal constant, without printf: the weights of a big model
 * are millions of numbers, and this is several times faster than "%.9g". */
static void put_hexfloat(StrBuf *o, uint64_t mant, int mant_bits, int exp, int sign, const char *suffix)
{
    static const char hex[] = "0123456789abcdef";
    char buf[64];
    int k = 0;
    if (sign)
        buf[k++] = '-';
    buf[k++] = '0';
    buf[k++] = 'x';
    buf[k++] = exp == INT32_MIN ? '0' : '1';   /* INT32_MIN marks a subnormal (0.xxx) */
    int digits = (mant_bits + 3) / 4;
    mant <<= digits * 4 - mant_bits;
    while (digits > 0 && !(mant & 0xf)) {
        mant >>= 4;
        digits--;
    }
    if (digits) {
        buf[k++] = '.';
        for (int d = digits - 1; d >= 0; d--)
            buf[k++] = hex[(mant >> (4 * d)) & 0xf];
    }
    int e = exp == INT32_MIN ? (mant_bits == 23 ? -126 : -1022) : exp;
    buf[k++] = 'p';
    if (e < 0) {
        buf[k++] = '-';
        e = -e;
    } else
        buf[k++] = '+';
    char rev[8];
    int n = 0;
    do {
        rev[n++] = (char)('0' + e % 10);
        e /= 10;
    } while (e);
    while (n)
        buf[k++] = rev[--n];
    for (const char *c = suffix; *c; c++)
        buf[k++] = *c;
    buf[k] = 0;
    sb_puts(o, buf);
}

static void put_weight_f32(StrBuf *o, float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    int sign = b >> 31, e = (int)((b >> 23) & 0xff);
    uint32_t m = b & 0x7fffff;
    if (e == 0xff) {
        sb_puts(o, m ? "NAN" : sign ? "-INFINITY" : "INFINITY");
        return;
    }
    if (e == 0 && m == 0) {
        sb_puts(o, sign ? "-0.0f" : "0.0f");
        return;
    }
    put_hexfloat(o, m, 23, e == 0 ? INT32_MIN : e - 127, sign, "f");
}

static void put_weight_f64(StrBuf *o, double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    int sign = (int)(b >> 63), e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & 0xfffffffffffffull;
    if (e == 0x7ff) {
        sb_puts(o, m ? "NAN" : sign ? "-INFINITY" : "INFINITY");
        return;
    }
    if (e == 0 && m == 0) {
        sb_puts(o, sign ? "-0.0" : "0.0");
        return;
    }
    put_hexfloat(o, m, 52, e == 0 ? INT32_MIN : e - 1023, sign, "");
}

/* a constant's C array length: its elements, or bytes for a packed type */
static int64_t array_len(const Buffer *b)
{
    return ir_dtype_is_packed(b->dtype) ? ir_dtype_size(b->dtype, b->size) : b->size;
}

/* the elements of a constant, a line of `per` at a time */
static void put_elements(StrBuf *o, const Tensor *t)
{
    int64_t n = ir_tensor_numel(t);
    if (ir_dtype_is_packed(t->dtype))
        n = ir_dtype_size(t->dtype, n);   /* the bytes, each holding 2 or 4 elements */
    int bytes = ir_dtype_bytes(t->dtype), per = ir_dtype_is_float(t->dtype) && !ir_dtype_is_storage(t->dtype) ? 8 : 16;
    const unsigned char *p = t->data;
    for (int64_t i = 0; i < n; i++) {
        sb_puts(o, i % per == 0 ? (i ? ",\n    " : "    ") : ", ");
        const unsigned char *q = p + i * bytes;
        switch (t->dtype) {
        case DT_F32: { float v; memcpy(&v, q, 4); put_weight_f32(o, v); break; }
        case DT_F64: { double v; memcpy(&v, q, 8); put_weight_f64(o, v); break; }
        case DT_F16:
        case DT_BF16:
        case DT_U16: { uint16_t v; memcpy(&v, q, 2); sb_printf(o, "%u", (unsigned)v); break; }
        case DT_BOOL:
        case DT_F8E4M3FN:
        case DT_F8E4M3FNUZ:
        case DT_F8E5M2:
        case DT_F8E5M2FNUZ:
        case DT_F8E8M0:
        case DT_I4:
        case DT_U4:
        case DT_I2:
        case DT_U2:
        case DT_F4E2M1:
        case DT_U8: sb_printf(o, "%u", (unsigned)*q); break;
        case DT_I8: sb_printf(o, "%d", (int)(int8_t)*q); break;
        case DT_I16: { int16_t v; memcpy(&v, q, 2); sb_printf(o, "%d", (int)v); break; }
        case DT_I32: {
            int32_t v;
            memcpy(&v, q, 4);
            if (v == INT32_MIN)
                sb_puts(o, "(-2147483647 - 1)");
            else
                sb_printf(o, "%ld", (long)v);
            break;
        }
        case DT_U32: { uint32_t v; memcpy(&v, q, 4); sb_printf(o, "%luu", (unsigned long)v); break; }
        case DT_I64: {
            int64_t v;
            memcpy(&v, q, 8);
            if (v == INT64_MIN)
                sb_puts(o, "(-INT64_C(9223372036854775807) - 1)");
            else
                sb_printf(o, "INT64_C(%lld)", (long long)v);
            break;
        }
        case DT_U64: { uint64_t v; memcpy(&v, q, 8); sb_printf(o, "UINT64_C(%llu)", (unsigned long long)v); break; }
        default: break;
        }
    }
    sb_puts(o, "\n");
}

/* Does e use a dim read from the inputs (not one computed from values)? */
static int uses_input_dim(const Program *p, const Expr *e)
{
    for (int j = 0; e && j < p->dims.n; j++) {
        const IrDim *d = p->dims.items[j];
        if (!d->count && ir_expr_uses_var(e, d->var))
            return 1;
    }
    return 0;
}

/* The info tables: -1 for a dim read from the inputs; a dim computed from values shows its
 * bound (the capacity the caller allocates; NAME_tensors writes the real extent back). */
static void info_table(StrBuf *o, const EmModel *m, const char *what, const EmValue *v, int n)
{
    sb_printf(o, "\nconst kgen_value_info %s_%s_info[%d] = {\n", m->name, what, n ? n : 1);
    for (int i = 0; i < n; i++) {
        const Buffer *b = v[i].buf;
        sb_puts(o, "    {\"");
        for (const char *c = v[i].name; *c; c++) {
            if (*c == '"' || *c == '\\')
                sb_printf(o, "\\%c", *c);
            else if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                sb_printf(o, "\\%03o", (unsigned char)*c);
            else
                sb_printf(o, "%c", *c);
        }
        sb_printf(o, "\", {%s, %d, 1}, %d, {", em_c_dlpack_code(b->dtype), ir_dtype_bits(b->dtype), b->ndim);
        for (int d = 0; d < b->ndim; d++) {
            sb_puts(o, d ? ", " : "");
            em_c_put_i64(o, uses_input_dim(m->model->prog, b->dyn[d]) ? -1 : b->shape[d]);
        }
        if (!b->ndim)
            sb_puts(o, "0");
        sb_printf(o, "}, %d},\n", v[i].graph_index);
    }
    if (!n)
        sb_puts(o, "    {\"\", {0, 0, 0}, 0, {0}, -1},\n");
    sb_puts(o, "};\n");
}

/* An expression of the dims and arena offsets in C (a max: kgen_max_i64, each operand once) */
static void put_at_expr(StrBuf *o, const Expr *e)
{
    if (e->kind == E_BIN && e->u.bin.op == OP_MAX) {
        sb_puts(o, "kgen_max_i64(");
        put_at_expr(o, e->u.bin.a);
        sb_puts(o, ", ");
        put_at_expr(o, e->u.bin.b);
        sb_puts(o, ")");
    } else {
        em_c_put_dim_expr(o, e);
    }
}

/* "kgen_arena + OFFSET" of intermediate b in the model function: a constant, or where the
 * run's extents put it (lower_arena_at) */
static const char *c_at(const Model *mod, const Buffer *b)
{
    const Expr *at = lower_arena_at(mod, b);
    int64_t c;
    if (ir_expr_is_const(at, &c))
        return ir_fmt("kgen_arena + %lld", (long long)c);
    StrBuf o = {0};
    sb_puts(&o, "kgen_arena + ");
    put_at_expr(&o, at);
    const char *r = ir_strdup(o.data);
    sb_free(&o);
    return r;
}

/* Element 0 of model buffer b (an intermediate or a parameter), for the model function. */
static const char *c_elem0(const Model *mod, const Buffer *b)
{
    return b->scope == SCOPE_WORKSPACE ? ir_fmt("((const %s *)(%s))[0]", ir_dtype_ctype(b->dtype), c_at(mod, b))
                                       : ir_fmt("%s[0]", b->name);
}

/* Mark in used[] the offsets (mod->at_vars) that e reads, and those they read. */
static void mark_at(const Model *mod, const Expr *e, unsigned char *used)
{
    for (int k = mod->nat - 1; k >= 0; k--)
        if (ir_expr_uses_var(e, mod->at_vars[k]) && !used[k]) {
            used[k] = 1;
            mark_at(mod, mod->at_values[k], used);
        }
}

/* The offsets of the intermediates a run places at its extents (those in used[], NULL: all),
 * each a local computed from the dims and those before it. */
static void put_at_locals(StrBuf *c, const Model *mod, const unsigned char *used)
{
    int any = 0;
    for (int k = 0; k < mod->nat; k++) {
        if (used && !used[k])
            continue;
        if (!any)
            sb_puts(c, "    /* where the intermediates of run-time size lie at these extents: each above those\n"
                       "     * it meets that the bound's plan puts below it (lower/arena.c) */\n");
        any = 1;
        sb_printf(c, "    const int64_t %s = ", mod->at_vars[k]->name);
        put_at_expr(c, mod->at_values[k]);
        sb_puts(c, ";\n");
    }
}

int em_c_dim_returned(const EmModel *m, const IrDim *d)
{
    for (int i = 0; i < m->noutputs && d->count; i++)
        for (int k = 0; k < m->outputs[i].buf->ndim; k++)
            if (m->outputs[i].buf->dyn[k] && ir_expr_uses_var(m->outputs[i].buf->dyn[k], d->var))
                return 1;
    return 0;
}

/* the signature of the model function: inputs, outputs, arena, then the run-time dims: an
 * extent for each dim read from the inputs, a pointer for each output dim computed from
 * values (out_NAME) */
void em_c_model_signature(StrBuf *o, const EmModel *m)
{
    sb_printf(o, "int %s(", m->name);
    for (int i = 0; i < m->ninputs; i++)
        sb_printf(o, "const %s *restrict %s, ", ir_dtype_ctype(m->inputs[i].buf->dtype), m->inputs[i].buf->name);
    for (int i = 0; i < m->noutputs; i++)
        sb_printf(o, "%s *restrict %s, ", ir_dtype_ctype(m->outputs[i].buf->dtype), m->outputs[i].buf->name);
    sb_puts(o, "void *restrict arena");
    const PtrVec *dims = &m->model->prog->dims;
    for (int i = 0; i < dims->n; i++) {
        const IrDim *d = dims->items[i];
        if (!d->count)
            sb_printf(o, ", int64_t %s", d->name);
        else if (em_c_dim_returned(m, d))
            sb_printf(o, ", int64_t *out_%s", d->name);
    }
    sb_puts(o, ")");
}

/* (declared in cfamily.h) */
int em_c_check_after(const Model *mod, const Expr *e)
{
    int after = -1;
    for (int i = 0; i < mod->prog->dims.n; i++)
        if (mod->dim_after[i] > after && ir_expr_uses_var(e, ((const IrDim *)mod->prog->dims.items[i])->var))
            after = mod->dim_after[i];
    return after;
}

/* The checks derived from the graph (extents that must agree) that can run after kernel
 * `after` (-1: first), else KGEN_ERR_SHAPE. */
static void put_checks(StrBuf *c, const Model *mod, int after)
{
    const Program *p = mod->prog;
    for (int i = 0; i < p->checks.n; i++) {
        if (em_c_check_after(mod, p->checks.items[i]) != after)
            continue;
        sb_puts(c, "    /* ");
        em_comment_text(c, p->check_msgs.items[i]);
        sb_puts(c, " */\n    if (!");
        em_c_put_dim_expr(c, p->checks.items[i]);
        sb_puts(c, ")\n        return KGEN_ERR_SHAPE;\n");
    }
}

static void range_check(StrBuf *c, const IrDim *d)
{
    sb_printf(c, "    if (%s < %lld || %s > %lld)\n        return KGEN_ERR_SHAPE;\n", d->name, (long long)d->lo, d->name,
              (long long)d->hi);
}

/* The model function's first statements with run-time dims: each dim given in its range,
 * a variable for each computed from values (its pointer not NULL where returned; with
 * at_bound set to its bound, as the GPU hosts' tables start), then the checks that need no
 * computed dim. */
static void dim_checks(StrBuf *c, const EmModel *m, const Model *mod, int at_bound)
{
    const Program *p = mod->prog;
    for (int i = 0; i < p->dims.n; i++) {
        const IrDim *d = p->dims.items[i];
        const char *init = at_bound ? ir_fmt(" = %lld", (long long)d->hi) : "";
        if (!d->count)
            range_check(c, d);
        else if (em_c_dim_returned(m, d))
            sb_printf(c, "    int64_t %s%s;\n    if (!out_%s)\n        return KGEN_ERR_NULL;\n", d->name, init, d->name);
        else
            sb_printf(c, "    int64_t %s%s;\n", d->name, init);
    }
    put_checks(c, mod, -1);
}

/* (declared in cfamily.h) */
void em_c_dim_checks(StrBuf *c, const EmModel *m) { dim_checks(c, m, m->model, 1); }

/* After kernel k: the dims it computes from values, read from their counts and checked
 * against their ranges, then the checks that needed them. */
static void value_dims_after(StrBuf *c, const Model *mod, int k)
{
    const Program *p = mod->prog;
    int any = 0;
    for (int i = 0; i < p->dims.n; i++) {
        const IrDim *d = p->dims.items[i];
        if (mod->dim_after[i] != k)
            continue;
        sb_printf(c, "    /* the extent %s, computed by %s */\n", d->name, mod->dim_count[i]->name);
        sb_printf(c, "    %s = %s;\n", d->name, c_elem0(mod, mod->dim_count[i]));
        range_check(c, d);
        any = 1;
    }
    if (any)
        put_checks(c, mod, k);
}

void em_c_model_header(StrBuf *h, const EmModel *m)
{
    const Model *mod = m->model;
    int gpu = m->target && target_is_gpu(m->target);
    char *up = em_c_macro_name(m->name);
    em_c_banner(h, m->source);
    sb_printf(h, "#ifndef KGEN_%s_H\n#define KGEN_%s_H\n\n#include \"kgen_runtime.h\"\n\n", up, up);
    sb_puts(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    if (gpu) {
        sb_printf(h, "/* The intermediates live in an arena of %lld bytes in device memory, placed by\n"
                     " * liveness (lower bound %lld bytes), allocated on the first run: the `arena`\n"
                     " * argument of the entry points is not used and may be NULL. */\n",
                  (long long)mod->arena_bytes, (long long)mod->arena_lower_bound);
        sb_printf(h, "#define %s_ARENA_BYTES 0\n#define %s_DEVICE_ARENA_BYTES %lld\n", up, up,
                  (long long)mod->arena_bytes);
    } else {
        sb_printf(h, "/* Scratch memory the caller passes as `arena`, 64-byte aligned: every intermediate\n"
                     " * tensor lives there, placed by liveness (lower bound %lld bytes). 0: it may be NULL. */\n",
                  (long long)mod->arena_lower_bound);
        sb_printf(h, "#define %s_ARENA_BYTES %lld\n", up, (long long)mod->arena_bytes);
    }
    sb_printf(h, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n\n", up, m->ninputs, up, m->noutputs);
    sb_printf(h, "/* Inputs and outputs: ONNX name, element type, shape, position in the graph. */\n");
    sb_printf(h, "extern const kgen_value_info %s_input_info[%d];\n", m->name, m->ninputs ? m->ninputs : 1);
    sb_printf(h, "extern const kgen_value_info %s_output_info[%d];\n\n", m->name, m->noutputs ? m->noutputs : 1);
    if (gpu)
        sb_printf(h, "/* %s: compact row-major arrays in host memory, copied to the %s device and back;\n"
                     " * the first call picks the device, builds the kernels and uploads the weights.\n",
                  m->name, m->target->name);
    else
        sb_printf(h, "/* %s: compact row-major arrays; outputs must not overlap inputs or the arena.\n", m->name);
    for (int i = 0; i < m->ninputs; i++) {
        sb_printf(h, " *   %s: input ", m->inputs[i].buf->name);
        em_c_put_shape(h, m->inputs[i].buf);
        sb_puts(h, " (");
        em_comment_text(h, m->inputs[i].name);
        sb_puts(h, ")\n");
    }
    for (int i = 0; i < m->noutputs; i++) {
        sb_printf(h, " *   %s: output ", m->outputs[i].buf->name);
        em_c_put_shape(h, m->outputs[i].buf);
        sb_puts(h, " (");
        em_comment_text(h, m->outputs[i].name);
        sb_puts(h, ")\n");
    }
    const PtrVec *dims = &mod->prog->dims;
    int nvalue = 0;
    for (int i = 0; i < dims->n; i++)
        nvalue += ((const IrDim *)dims->items[i])->count != NULL;
    if (dims->n) {
        sb_puts(h, " * Dims decided at run time, the last arguments, each in its range:\n");
        for (int i = 0; i < dims->n; i++) {
            const IrDim *d = dims->items[i];
            if (!d->count)
                sb_printf(h, " *   %s in [%lld, %lld]\n", d->name, (long long)d->lo, (long long)d->hi);
            else if (em_c_dim_returned(m, d))
                sb_printf(h, " *   out_%s: gets the extent %s, computed from values, in [%lld, %lld]\n", d->name,
                          d->name, (long long)d->lo, (long long)d->hi);
        }
        if (gpu || !mod->arena_at)
            sb_printf(h, " * Inputs and outputs are compact row-major at the actual extents; the arena is planned\n"
                         " * for the largest (%s_ARENA_BYTES holds every run). A dim out of its range, or\n"
                         " * extents that do not fit together, return KGEN_ERR_SHAPE with nothing written.\n", up);
        else
            sb_printf(h, " * Inputs and outputs are compact row-major at the actual extents, and the arena's\n"
                         " * intermediates compact too: %s_ARENA_BYTES (the largest extents) holds every\n"
                         " * run, and a run at given dims needs only the first %s_arena_bytes(dims) bytes.\n"
                         " * A dim out of its range, or extents that do not fit together, return\n"
                         " * KGEN_ERR_SHAPE with nothing written.\n",
                      up, m->name);
        if (nvalue)
            sb_puts(h, " * An extent computed from values (an output's count of selected elements) is known\n"
                       " * only while the model runs: an output with one is allocated for its bound (the\n"
                       " * shape above with each such dim at its most) and written compact for the real\n"
                       " * extents, returned through out_NAME (not NULL). Such an extent out of its range,\n"
                       " * or one that does not fit another, returns KGEN_ERR_SHAPE while the model runs,\n"
                       " * with outputs partly written.\n");
    }
    sb_puts(h, gpu ? " * Returns KGEN_OK, or KGEN_ERR_DEVICE (the reason printed on stderr). */\n"
                   : dims->n ? " * Returns KGEN_OK or KGEN_ERR_SHAPE. */\n" : " * Returns KGEN_OK. */\n");
    em_c_model_signature(h, m);
    sb_puts(h, ";\n\n");
    if (dims->n) {
        sb_printf(h, "/* The run-time dims, in argument order; %s_tensors() reads each from the shape of\n"
                     " * an input. %s_output_shape: output `output`'s shape for the dims given (in that\n"
                     " * order) into shape; KGEN_ERR_NARGS for no such output.%s */\n",
                  m->name, m->name,
                  nvalue ? "\n * A dim computed from values has input -1 in the table: give its bound (hi) for an\n"
                           " * output's capacity" : "");
        sb_printf(h, "#define %s_NUM_DIMS %d\n", up, dims->n);
        sb_printf(h, "extern const kgen_dim_info %s_dim_info[%d];\n", m->name, dims->n);
        sb_printf(h, "int %s_output_shape(int output, const int64_t *dims, int64_t *shape);\n", m->name);
        sb_printf(h, "/* The bytes of the arena a run at these dims touches (%s_ARENA_BYTES at the largest;\n"
                     " * the plan is the same for every run, so a smaller run needs only the first bytes). */\n"
                     "int64_t %s_arena_bytes(const int64_t *dims);\n\n",
                  up, m->name);
    }
    if (gpu) {
        sb_printf(h, "/* Device time of the last run in milliseconds (%s), and the release of every\n"
                     " * device resource (the next run starts afresh). */\n",
                  m->target->kind == TARGET_CUDA ? "CUDA events" : "profiling events");
        sb_printf(h, "double %s_device_ms(void);\nvoid %s_release(void);\n\n", m->name, m->name);
    }
    sb_printf(h, "/* %s on DLPack-compatible tensors: the inputs, then the outputs, in the order above;\n"
                 " * every tensor is checked first; returns KGEN_OK or the first KGEN_ERR_* found. */\n",
              m->name);
    if (nvalue)
        sb_puts(h, "/* An output with an extent computed from values is passed with its bound's shape (its\n"
                   " * capacity, compact); on KGEN_OK its shape holds the real extents (and its strides,\n"
                   " * when given, the compact strides for them): the data is compact for that shape. */\n");
    sb_printf(h, "int %s_tensors(kgen_tensor *const *args, int nargs, void *arena);\n\n", m->name);
    int mode = weights_mode(m);
    if (mode == EM_WEIGHTS_INCBIN)
        sb_printf(h, "/* The weights (%lld bytes; --weights=%s) are in\n"
                     " * %s_weights.bin, pulled into the program by %s_weights.S with .incbin: assemble it\n"
                     " * from this folder (the Makefile does) or with -Wa,-I naming it, so that the assembler\n"
                     " * finds the .bin. Nothing is loaded at run time; --weights=embed writes C arrays\n"
                     " * (%s_weights.c) instead. */\n\n",
                  (long long)weights_bytes(mod),
                  m->weights_in_file == EM_WEIGHTS_AUTO
                      ? ir_fmt("auto: more than %lld MiB", (long long)(EM_WEIGHTS_INCBIN_BYTES >> 20))
                      : "incbin",
                  m->name, m->name, m->name);
    else if (m->weights_in_file == EM_WEIGHTS_EMBED && m->target && m->target->kind == TARGET_C &&
             weights_bytes(mod) > EM_WEIGHTS_INCBIN_BYTES)
        sb_printf(h, "/* The weights (%lld bytes) are C arrays in %s_weights.c (--weights=embed): a long\n"
                     " * build that needs a lot of compiler memory; --weights=auto links them with .incbin. */\n\n",
                  (long long)weights_bytes(mod), m->name);
    if (mode == EM_WEIGHTS_FILE) {
        int64_t total = weights_bytes(mod);
        sb_printf(h, "/* The weights live in %s_weights.bin (%lld bytes): load them into memory (64-byte\n"
                     " * aligned) and pass them here once before running; the model keeps the pointer.\n"
                     " * Returns KGEN_ERR_SHAPE for a blob of the wrong size. */\n",
                  m->name, (long long)total);
        sb_printf(h, "#define %s_WEIGHTS_BYTES %lld\n", up, (long long)total);
        sb_printf(h, "int %s_set_weights(const void *blob, size_t bytes);\n\n", m->name);
    }
    sb_puts(h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    free(up);
}

void em_c_weights_file(StrBuf *w, const EmModel *m)
{
    const Model *mod = m->model;
    em_c_banner(w, m->source);
    sb_puts(w, "/* The model's constants: flash on a microcontroller, .rodata elsewhere. Floats are\n"
               " * written as exact hexadecimal constants (C99). */\n");
    sb_puts(w, "#include <math.h>\n#include <stdint.h>\n\n");
    for (int i = 0; i < mod->constants.n; i++) {
        const Buffer *b = mod->constants.items[i];
        const Tensor *t = b->constant;
        sb_printf(w, "%sconst %s %s[%lld] = {\n", i ? "\n" : "", ir_dtype_ctype(b->dtype), em_c_weight_symbol(m, b),
                  (long long)(b->size ? array_len(b) : 1));
        if (b->size)
            put_elements(w, t);
        else
            sb_puts(w, "    0\n");
        sb_puts(w, "};\n");
    }
    if (weight_table(m)) {
        sb_printf(w, "\n/* Their addresses, where %s.c takes them from */\n", m->name);
        sb_printf(w, "const void *const %s_weight_table[%d] = {\n", m->name, mod->constants.n);
        for (int i = 0; i < mod->constants.n; i++)
            sb_printf(w, "    %s,\n", em_c_weight_symbol(m, mod->constants.items[i]));
        sb_puts(w, "};\n");
    }
    if (!mod->constants.n)
        sb_printf(w, "typedef int %s_no_weights; /* ISO C wants something in every file */\n", m->name);
}

/* NAME_weights.bin: each constant at its blob_offset, zeros between */
static void weights_blob(StrBuf *w, const Model *mod)
{
    static const char pad[] = "                                                                ";   /* 64 */
    for (int i = 0; i < mod->constants.n; i++) {
        const Buffer *b = mod->constants.items[i];
        size_t n = (size_t)ir_dtype_size(b->dtype, b->size), padded = (n + 63) / 64 * 64;
        size_t at = w->len;
        for (size_t k = 0; k < padded; k += 64)
            sb_puts(w, pad);   /* grow; bytes are written below */
        memset(w->data + at, 0, padded);
        if (n)
            memcpy(w->data + at, b->constant->data, n);
    }
}

/* NAME_weights.S: the symbols NAME_weights.c would define, each a slice of
 * NAME_weights.bin that the assembler copies in with .incbin (the file name is relative:
 * GNU as and clang look in the current directory and the -I paths given to the assembler).
 * The C preprocessor runs first (.S), so one file serves ELF, Mach-O and COFF. */
static void weights_asm(StrBuf *s, const EmModel *m)
{
    const Model *mod = m->model;
    em_c_banner(s, m->source);
    sb_printf(s, "/* The model's constants as in %s_weights.c, but their bytes are those of\n"
                 " * %s_weights.bin, which the assembler reads (.incbin) from its current directory\n"
                 " * or an -I path: `cc -c %s_weights.S` in this folder, or\n"
                 " * `cc -Wa,-I,DIR -c DIR/%s_weights.S`. Each one is 64-byte aligned, at its offset\n"
                 " * in the .bin (the layout of --weights=file). */\n",
              m->name, m->name, m->name, m->name);
    sb_puts(s, "#if defined(__APPLE__) || (defined(_WIN32) && !defined(_WIN64))\n"
               "#define KGEN_SYM(x) _##x   /* C names get a leading underscore there */\n"
               "#else\n"
               "#define KGEN_SYM(x) x\n"
               "#endif\n\n"
               "#if defined(__APPLE__)\n"
               "    .const\n"
               "#elif defined(_WIN32)\n"
               "    .section .rdata,\"dr\"\n"
               "#else\n"
               "    .section .rodata\n"
               "#endif\n");
    for (int i = 0; i < mod->constants.n; i++) {
        const Buffer *b = mod->constants.items[i];
        const char *sym = em_c_weight_symbol(m, b);
        int64_t n = ir_dtype_size(b->dtype, b->size);
        sb_printf(s, "\n    .globl KGEN_SYM(%s)\n    .balign 64\nKGEN_SYM(%s):\n", sym, sym);
        if (n)
            sb_printf(s, "    .incbin \"%s_weights.bin\", %lld, %lld\n", m->name, (long long)em_blob_offset(&mod->constants, b, NULL),
                      (long long)n);
        else
            sb_printf(s, "    .zero %d\n", ir_dtype_bytes(b->dtype));   /* as the C array's one element */
    }
    /* ELF: no executable stack (without it, ld assumes one and warns) */
    sb_puts(s, "\n#if defined(__ELF__)\n    .section .note.GNU-stack,\"\",%progbits\n#endif\n");
}

/* Do the kernels call micro-kernels (tensorized loops, -mattr)? */
static int uses_ukernels(const Model *mod)
{
    for (int i = 0; i < mod->kernels.n; i++)
        if (em_c_uses_ukernels(((const Kernel *)mod->kernels.items[i])->body))
            return 1;
    return 0;
}


/* A step's part in the model function's team of threads (kgen_runtime.h's KGEN_TEAM):
 * every thread (one parallel loop, whose iterations they share), thread 0 alone (no
 * parallel loop), or neither (a parallel loop inside other code: no team then). */
enum { TEAM_NEITHER, TEAM_ALL, TEAM_ONE };

static int team_part(const Kernel *k)
{
    if (em_c_is_parallel_loop_kernel(k))
        return TEAM_ALL;
    return lower_has_parallel_loop(k->body) ? TEAM_NEITHER : TEAM_ONE;
}

/* Does the model function run its steps on one team of threads? Where it is a straight
 * sequence of steps (no run-time loop, If branch, or extent computed by a step, which the
 * function checks and returns on), each step or version of one either a parallel loop or
 * none, and at least one a parallel loop. Marks the steps (Kernel.team) that the team's
 * threads share. Two steps side by side (lower/model.c's "beside") run one on thread 0,
 * one on thread 1. */
static int use_team(const Model *mod)
{
    int any = 0;
    if (mod->nloops)
        return 0;
    for (int i = 0; i < mod->prog->dims.n; i++)
        if (mod->dim_after[i] >= 0)
            return 0;
    for (int k = 0; k < mod->kernels.n; k++) {
        const Kernel *kk = mod->kernels.items[k];
        if (kk->nguards)
            return 0;
        for (int v = -1; v < kk->variants.n; v++) {
            int part = team_part(v < 0 ? kk : kk->variants.items[v]);
            if (part == TEAM_NEITHER)
                return 0;
            any |= part == TEAM_ALL;
        }
    }
    for (int k = 0; k < mod->kernels.n && any; k++) {
        Kernel *kk = mod->kernels.items[k];
        for (int v = -1; v < kk->variants.n; v++) {
            Kernel *x = v < 0 ? kk : kk->variants.items[v];
            x->team = team_part(x) == TEAM_ALL;
        }
    }
    return any;
}

/* Does thread 0 alone run step k, every version of it? Two such steps in a row need no
 * meeting between them. */
static int team_one(const Kernel *k)
{
    if (k->team)
        return 0;
    for (int v = 0; v < k->variants.n; v++)
        if (((const Kernel *)k->variants.items[v])->team)
            return 0;
    return 1;
}

/* Which of a side-by-side pair step k is: 1 the first, 2 the second, 0 neither */
static int side_of(const Model *mod, int k)
{
    if (!mod->beside)
        return 0;
    return mod->beside[k] ? 1 : k && mod->beside[k - 1] ? 2 : 0;
}

/* The call of step k's function fn (or one of its versions') in the model function, at
 * indent ind: in a team, a step without a parallel loop runs on thread 0 alone, and the
 * second of a side-by-side pair on thread 1 */
static void put_step_call(StrBuf *c, const char *ind, int team, int side, const Kernel *k, const char *fn,
                          const char *args)
{
    if (team && side)
        sb_printf(c, "%sKGEN_TEAM_SIDE(%d)\n", ind, side - 1);
    else if (team && !k->team)
        sb_printf(c, "%sKGEN_TEAM_ONE\n", ind);
    sb_printf(c, "%s%s(%s);\n", ind, fn, args);
}

static void source_file(StrBuf *c, const EmModel *m, const Model *mod)
{
    int in_file = weights_mode(m) == EM_WEIGHTS_FILE;
    em_c_banner(c, m->source);
    sb_printf(c, "#include \"%s.h\"\n", m->name);
    if (uses_ukernels(mod))
        sb_puts(c, "#include \"kgen_ukernels.h\"\n");
    em_c_vectorize_pragma(c);
    if (in_file) {
        int64_t total = weights_bytes(mod);
        sb_printf(c, "\n/* weights: %s_weights.bin, set by %s_set_weights() */\n", m->name, m->name);
        sb_printf(c, "static const unsigned char *%s_blob;\n\n", m->name);
        sb_printf(c, "int %s_set_weights(const void *blob, size_t bytes)\n{\n", m->name);
        sb_printf(c, "    if (!blob)\n        return KGEN_ERR_NULL;\n    if (bytes != %lld)\n        return KGEN_ERR_SHAPE;\n",
                  (long long)total);
        sb_printf(c, "    %s_blob = (const unsigned char *)blob;\n    return KGEN_OK;\n}\n", m->name);
    }
    if (mod->constants.n && weights_mode(m) == EM_WEIGHTS_INCBIN)
        sb_printf(c, "\n/* weights: %s_weights.S (.incbin \"%s_weights.bin\") */\n", m->name, m->name);
    else if (weight_table(m))
        sb_printf(c, "\n/* weights: the addresses of %s_weights.c's arrays */\nextern const void *const %s_weight_table[%d];\n",
                  m->name, m->name, mod->constants.n);
    else if (mod->constants.n && !in_file)
        sb_printf(c, "\n/* weights: %s_weights.c */\n", m->name);
    for (int i = 0; i < mod->constants.n && !in_file && !weight_table(m); i++) {
        const Buffer *b = mod->constants.items[i];
        sb_printf(c, "extern const %s %s[%lld];\n", ir_dtype_ctype(b->dtype), em_c_weight_symbol(m, b),
                  (long long)(b->size ? array_len(b) : 1));
    }
    int team = use_team(mod);
    for (int i = 0; i < mod->kernels.n; i++) {
        const Kernel *kk = mod->kernels.items[i];
        for (int v = 0; v < kk->variants.n; v++) {
            sb_puts(c, "\n");
            em_print_kernel(c, kk->variants.items[v], &em_dialect_c);
        }
        sb_puts(c, "\n");
        em_print_kernel(c, kk, &em_dialect_c);
    }

    /* the model function */
    sb_puts(c, "\n/* ");
    em_comment_text(c, m->name);
    for (int i = 0; i < m->notes.n; i++) {
        sb_puts(c, "\n * ");
        em_comment_text(c, m->notes.items[i]);
    }
    sb_puts(c, " */\n");
    em_c_model_signature(c, m);
    sb_puts(c, "\n{\n");
    if (mod->arena.n)
        sb_puts(c, "    unsigned char *kgen_arena = (unsigned char *)arena;\n");
    else
        sb_puts(c, "    (void)arena;\n");
    if (in_file && mod->constants.n)
        sb_printf(c, "    if (!%s_blob)\n        return KGEN_ERR_NULL;\n", m->name);
    dim_checks(c, m, mod, 0);
    for (int i = 0; i < m->ninputs; i++) {
        int used = 0;
        for (int k = 0; k < mod->kernels.n && !used; k++) {
            const Kernel *kk = mod->kernels.items[k];
            for (int q = 0; q < kk->params.n && !used; q++)
                used = kk->params.items[q] == m->inputs[i].buf;
        }
        if (!used)
            sb_printf(c, "    (void)%s;\n", m->inputs[i].buf->name);
    }
    if (mod->nat) {
        /* the offsets the model function reads: of its kernels' intermediates, its loops'
         * states and counts, its branches' conditions and its counted extents */
        unsigned char *used = ir_alloc((size_t)mod->nat);
        for (int k = 0; k < mod->kernels.n; k++) {
            const Kernel *kk = mod->kernels.items[k];
            for (int q = 0; q < kk->params.n; q++)
                if (((const Buffer *)kk->params.items[q])->scope == SCOPE_WORKSPACE)
                    mark_at(mod, lower_arena_at(mod, kk->params.items[q]), used);
            for (int g = 0; g < kk->nguards; g++)
                mark_at(mod, lower_arena_at(mod, kk->guard_buf[g]), used);
        }
        for (int j = 0; j < mod->nloops; j++) {
            mark_at(mod, lower_arena_at(mod, mod->loops[j].iter), used);
            mark_at(mod, lower_arena_at(mod, mod->loops[j].cond), used);
            if (mod->loops[j].trip && mod->loops[j].trip->scope == SCOPE_WORKSPACE)
                mark_at(mod, lower_arena_at(mod, mod->loops[j].trip), used);
        }
        for (int i = 0; i < mod->prog->dims.n; i++)
            if (mod->dim_count[i] && mod->dim_count[i]->scope == SCOPE_WORKSPACE)
                mark_at(mod, lower_arena_at(mod, mod->dim_count[i]), used);
        put_at_locals(c, mod, used);
    }
    const char *ind = "    ";
    if (team) {
        sb_puts(c, "    /* under OpenMP, one team of threads runs the steps: each parallel loop shares its\n"
                   "     * iterations, thread 0 alone runs a step without one, and the team meets after\n"
                   "     * each step (kgen_runtime.h) */\n"
                   "    KGEN_TEAM(kgen_team)\n    {\n        KGEN_TEAM_MEMBER(kgen_team);\n");
        ind = "        ";
    }
    for (int k = 0; k < mod->kernels.n; k++) {
        const Kernel *kk = mod->kernels.items[k];
        char *fn = em_c_func_name(kk);
        /* a run-time loop: its start kernel, then the iterations */
        for (int j = 0; j < mod->nloops; j++) {
            const ModelLoop *ml = &mod->loops[j];
            if (k == ml->begin + 1) {
                sb_printf(c, "    /* %s: while %s", ml->name, ml->iter->name);
                if (ml->trip || ml->trip_count >= 0)
                    sb_printf(c, " < %s", ml->trip ? ml->trip->name : ir_fmt("%lld", (long long)ml->trip_count));
                sb_printf(c, " and %s */\n    while (", ml->cond->name);
                sb_puts(c, c_elem0(mod, ml->iter));
                if (ml->trip)
                    sb_printf(c, " < %s", c_elem0(mod, ml->trip));
                else if (ml->trip_count >= 0)
                    sb_printf(c, " < INT64_C(%lld)", (long long)ml->trip_count);
                sb_printf(c, " && %s != 0) {\n", c_elem0(mod, ml->cond));
                ind = "        ";
            }
        }
        /* two steps side by side: under OpenMP each on a thread of its own (kgen_runtime.h),
         * in a team its threads 0 and 1, else in sections of their own */
        int side = side_of(mod, k), first_side = side == 1 && !team, second_side = side == 2 && !team;
        if (first_side) {
            sb_puts(c, "    /* the next two steps are independent: under OpenMP, each runs on a thread of its own */\n"
                       "    KGEN_SIDE_BY_SIDE\n    {\n        KGEN_SIDE\n        {\n");
            ind = "            ";
        } else if (second_side) {
            sb_puts(c, "        KGEN_SIDE\n        {\n");
        }
        /* profiling hooks, empty unless built with -DKGEN_PROFILE (kgen_runtime.h) */
        sb_printf(c, "%sKGEN_PROFILE_BEGIN(%d);\n", ind, k);
        /* a run-time If's branch: only when taken */
        for (int g = 0; g < kk->nguards; g++)
            sb_printf(c, "%s%s %s 0", g ? " && " : ir_fmt("%sif (", ind), c_elem0(mod, kk->guard_buf[g]),
                      kk->guard_value[g] ? "!=" : "==");
        StrBuf args = {0};
        for (int q = 0; q < kk->params.n; q++) {
            const Buffer *b = kk->params.items[q];
            sb_puts(&args, q ? ", " : "");
            if (b->constant && in_file)
                sb_printf(&args, "(const %s *)(%s_blob + %lld)", ir_dtype_ctype(b->dtype), m->name,
                          (long long)em_blob_offset(&mod->constants, b, NULL));
            else if (b->constant && weight_table(m))
                sb_printf(&args, "(const %s *)%s_weight_table[%d]", ir_dtype_ctype(b->dtype), m->name,
                          constant_index(mod, b));
            else if (b->constant)
                sb_puts(&args, em_c_weight_symbol(m, b));
            else if (b->scope == SCOPE_WORKSPACE)
                sb_printf(&args, "(%s *)(%s)", ir_dtype_ctype(b->dtype), c_at(mod, b));
            else
                sb_puts(&args, b->name);
        }
        for (int q = 0; q < kk->dims.n; q++)
            sb_printf(&args, ", (int32_t)%s", ((const Var *)kk->dims.items[q])->name);
        if (!args.data)
            sb_puts(&args, "");
        if (kk->variants.n) {
            /* the version whose register tiles were chosen for extents like these */
            sb_puts(c, kk->nguards ? ") {\n" : "");
            const char *vind = kk->nguards ? ir_fmt("%s    ", ind) : ind;
            const char *open = team ? " {" : "", *close = team ? ir_fmt("%s}", vind) : "";
            const char *in = ir_fmt("%s    ", vind);
            for (int v = 0; v < kk->variants.n; v++) {
                char *vfn = em_c_func_name(kk->variants.items[v]);
                sb_printf(c, v ? " if (" : "%sif (", vind);
                em_c_put_dim_expr(c, kk->when.items[v]);
                sb_printf(c, ")%s\n", open);
                put_step_call(c, in, team, side, kk->variants.items[v], vfn, args.data);
                sb_printf(c, "%s%selse", team ? close : vind, team ? " " : "");
                free(vfn);
            }
            sb_printf(c, "%s\n", open);
            put_step_call(c, in, team, side, kk, fn, args.data);
            sb_printf(c, "%s%s%s", close, team ? "\n" : "", kk->nguards ? ir_fmt("%s}\n", ind) : "");
        } else if (kk->nguards) {
            sb_printf(c, ")\n    %s%s(%s);\n", ind, fn, args.data);
        } else {
            put_step_call(c, ind, team, side, kk, fn, args.data);
        }
        sb_free(&args);
        sb_printf(c, "%sKGEN_PROFILE_END(%d, \"%s\");\n", ind, k, fn);
        /* (the region's end is the last meeting; none between the two of a side-by-side
         * pair, and one before and after it, whose second step runs on thread 1) */
        if (team && k + 1 < mod->kernels.n && side != 1 &&
            !(team_one(kk) && team_one(mod->kernels.items[k + 1]) && !side && !side_of(mod, k + 1)))
            sb_printf(c, "%sKGEN_TEAM_SYNC(kgen_team);\n", ind);
        free(fn);
        value_dims_after(c, mod, k);
        if (first_side)
            sb_puts(c, "        }\n");
        if (second_side) {
            sb_puts(c, "        }\n    }\n");
            ind = "    ";
        }
        for (int j = 0; j < mod->nloops; j++)
            if (k == mod->loops[j].end - 1) {
                sb_puts(c, "    }\n");
                ind = "    ";
            }
    }
    if (team)
        sb_puts(c, "    }\n");
    for (int i = 0; i < mod->prog->dims.n; i++)
        if (em_c_dim_returned(m, mod->prog->dims.items[i]))
            sb_printf(c, "    *out_%s = %s;\n", ((const IrDim *)mod->prog->dims.items[i])->name,
                      ((const IrDim *)mod->prog->dims.items[i])->name);
    sb_puts(c, "    return KGEN_OK;\n}\n");

    em_c_model_tables(c, m);
}

/* A generated function's first lines: each run-time dim a local from its argument `dims`
 * (voided: an expression may leave some out) */
static void dims_from_array(StrBuf *c, const PtrVec *dims)
{
    for (int i = 0; i < dims->n; i++)
        sb_printf(c, "    const int64_t %s = dims[%d];\n", ((const IrDim *)dims->items[i])->name, i);
    for (int i = 0; i < dims->n; i++)
        sb_printf(c, "    (void)%s;\n", ((const IrDim *)dims->items[i])->name);
}

void em_c_model_tables(StrBuf *c, const EmModel *m)
{
    const Model *mod = m->model;
    /* the checked entry over tensors: reuse the single-kernel one on a stand-in */
    Kernel k = {0};
    k.name = m->name;
    k.workspace_bytes = mod->arena_bytes;
    for (int i = 0; i < m->ninputs; i++)
        ir_vec_push(&k.params, (void *)m->inputs[i].buf, 1 << 20, "parameters");
    for (int i = 0; i < m->noutputs; i++)
        ir_vec_push(&k.params, (void *)m->outputs[i].buf, 1 << 20, "parameters");
    em_c_tensors_entry(c, &k, m->name, "arena", &mod->prog->dims);
    info_table(c, m, "input", m->inputs, m->ninputs);
    info_table(c, m, "output", m->outputs, m->noutputs);
    const PtrVec *dims = &mod->prog->dims;
    if (!dims->n)
        return;
    sb_printf(c, "\nconst kgen_dim_info %s_dim_info[%d] = {\n", m->name, dims->n);
    for (int i = 0; i < dims->n; i++) {
        const IrDim *d = dims->items[i];
        sb_printf(c, "    {\"%s\", %lld, %lld, %d, %d},\n", d->name, (long long)d->lo, (long long)d->hi, d->input, d->dim);
    }
    sb_puts(c, "};\n");
    sb_printf(c, "\nint %s_output_shape(int output, const int64_t *dims, int64_t *shape)\n{\n", m->name);
    dims_from_array(c, dims);
    sb_puts(c, "    switch (output) {\n");
    for (int i = 0; i < m->noutputs; i++) {
        const Buffer *b = m->outputs[i].buf;
        sb_printf(c, "    case %d:\n", i);
        for (int d = 0; d < b->ndim; d++) {
            sb_printf(c, "        shape[%d] = ", d);
            if (b->dyn[d])
                em_c_put_dim_expr(c, b->dyn[d]);
            else
                em_c_put_i64(c, b->shape[d]);
            sb_puts(c, ";\n");
        }
        sb_puts(c, "        return KGEN_OK;\n");
    }
    sb_puts(c, "    default:\n        return KGEN_ERR_NARGS;\n    }\n}\n");
    sb_printf(c, "\nint64_t %s_arena_bytes(const int64_t *dims)\n{\n", m->name);
    dims_from_array(c, dims);
    if (mod->nat) {
        unsigned char *used = ir_alloc((size_t)mod->nat);
        mark_at(mod, lower_arena_need(mod), used);
        put_at_locals(c, mod, used);
    }
    sb_puts(c, "    return ");
    put_at_expr(c, lower_arena_need(mod));
    sb_puts(c, ";\n}\n");
}

/* The runner's wrapper of a model with dims computed from values (returns their count;
 * writes nothing without): kgen_main.h allocates each output at the info table's shape,
 * where such a dim is its bound, or with input dims through output_shape() (the dims the
 * inputs give, input_dims[], and the bound of each computed one), and writes the shape
 * NAME_tensors() returns; run_values() gives each run the allocated capacity back. */
static int runner_value_dims(StrBuf *r, const EmModel *m, const char *inner)
{
    const PtrVec *dims = &m->model->prog->dims;
    int nvalue = 0;
    for (int i = 0; i < dims->n; i++)
        nvalue += ((const IrDim *)dims->items[i])->count != NULL;
    if (!nvalue)
        return 0;
    sb_puts(r, "/* Outputs with extents computed from values: allocated at their bounds (the capacity),\n"
               " * their real shapes written back by the model; each run gets the capacity back first. */\n");
    if (nvalue < dims->n) {
        sb_printf(r, "static const kgen_dim_info input_dims[%d] = {\n", dims->n - nvalue);
        for (int i = 0; i < dims->n; i++) {
            const IrDim *d = dims->items[i];
            if (!d->count)
                sb_printf(r, "    {\"%s\", %lld, %lld, %d, %d},\n", d->name, (long long)d->lo, (long long)d->hi, d->input,
                          d->dim);
        }
        sb_puts(r, "};\n\n");
        sb_printf(r, "static int output_shape(int output, const int64_t *dims, int64_t *shape)\n{\n"
                     "    int64_t all[%d];\n", dims->n);
        for (int i = 0, k = 0; i < dims->n; i++) {
            const IrDim *d = dims->items[i];
            if (d->count)
                sb_printf(r, "    all[%d] = %lld;   /* %s: its bound */\n", i, (long long)d->hi, d->name);
            else
                sb_printf(r, "    all[%d] = dims[%d];\n", i, k++);
        }
        sb_printf(r, "    return %s_output_shape(output, all, shape);\n}\n\n", m->name);
    }
    sb_printf(r, "static int run_values(kgen_tensor *const *args, int nargs, void *arena)\n{\n"
                 "    static int64_t caps[%d][KGEN_MAX_DIMS];\n"
                 "    static int saved;\n"
                 "    int i, d;\n"
                 "    for (i = %d; i < nargs && i < %d; i++)\n"
                 "        for (d = 0; d < args[i]->ndim && d < KGEN_MAX_DIMS; d++) {\n"
                 "            if (saved)\n"
                 "                args[i]->shape[d] = caps[i - %d][d];\n"
                 "            else\n"
                 "                caps[i - %d][d] = args[i]->shape[d];\n"
                 "        }\n"
                 "    saved = 1;\n"
                 "    return %s(args, nargs, arena);\n}\n\n",
              m->noutputs, m->ninputs, m->ninputs + m->noutputs, m->ninputs, m->ninputs, inner);
    return nvalue;
}

void em_c_runner_files(OutSet *o, const EmModel *m)
{
    int gpu = m->target && target_is_gpu(m->target);
    char *up = em_c_macro_name(m->name);
    StrBuf *r = em_outset_add(o, ir_fmt("%s_main.c", m->name));
    em_c_banner(r, m->source);
    sb_puts(r, "/* The runner: NAME input0.npy ... -o DIR, --bench N, --profile N, --info (see kgen_main.h). */\n");
    sb_puts(r, "#define _POSIX_C_SOURCE 199309L\n");
    sb_printf(r, "#include \"%s.h\"\n\n", m->name);
    sb_printf(r, "#define KGEN_MAIN_NAME \"%s\"\n", m->name);
    if (weights_mode(m) == EM_WEIGHTS_FILE) {
        sb_puts(r, "#include <stdio.h>\n#include <stdlib.h>\n\n");
        sb_printf(r, "#ifndef KGEN_WEIGHTS_PATH\n#define KGEN_WEIGHTS_PATH \"%s_weights.bin\"\n#endif\n\n", m->name);
        sb_puts(r, "/* Loads the weights file once (path: $KGEN_WEIGHTS, else KGEN_WEIGHTS_PATH), then runs. */\n");
        sb_printf(r, "static int run(kgen_tensor *const *args, int nargs, void *arena)\n{\n"
                     "    static void *blob;\n"
                     "    if (!blob) {\n"
                     "        const char *path = getenv(\"KGEN_WEIGHTS\") ? getenv(\"KGEN_WEIGHTS\") : KGEN_WEIGHTS_PATH;\n"
                     "        FILE *f = fopen(path, \"rb\");\n"
                     "        size_t n = %s_WEIGHTS_BYTES, got;\n"
                     "        int status;\n"
                     "        blob = malloc(n + 64);\n"
                     "        if (!f || !blob) {\n"
                     "            fprintf(stderr, \"%s: cannot read the weights file %%s\\n\", path);\n"
                     "            exit(1);\n"
                     "        }\n"
                     "        got = fread(blob, 1, n, f);\n"
                     "        fclose(f);\n"
                     "        status = %s_set_weights(blob, got);\n"
                     "        if (status != KGEN_OK) {\n"
                     "            fprintf(stderr, \"%s: %%s: %%lu bytes, expected %%lu\\n\", path, (unsigned long)got, (unsigned long)n);\n"
                     "            exit(1);\n"
                     "        }\n"
                     "    }\n"
                     "    return %s_tensors(args, nargs, arena);\n}\n\n",
                  up, m->name, m->name, m->name, m->name);
    }
    const char *inner = weights_mode(m) == EM_WEIGHTS_FILE ? "run" : ir_fmt("%s_tensors", m->name);
    int nvalue = runner_value_dims(r, m, inner);
    sb_printf(r, "#define KGEN_MAIN_RUN %s\n", nvalue ? "run_values" : inner);
    sb_printf(r, "#define KGEN_MAIN_INPUTS %s_input_info\n", m->name);
    sb_printf(r, "#define KGEN_MAIN_OUTPUTS %s_output_info\n", m->name);
    sb_printf(r, "#define KGEN_MAIN_NUM_INPUTS %s_NUM_INPUTS\n", up);
    sb_printf(r, "#define KGEN_MAIN_NUM_OUTPUTS %s_NUM_OUTPUTS\n", up);
    sb_printf(r, "#define KGEN_MAIN_ARENA_BYTES %s_ARENA_BYTES\n", up);
    int ninput_dims = m->model->prog->dims.n - nvalue;
    if (ninput_dims && nvalue) {
        sb_puts(r, "#define KGEN_MAIN_DIMS input_dims\n");
        sb_printf(r, "#define KGEN_MAIN_NUM_DIMS %d\n", ninput_dims);
        sb_puts(r, "#define KGEN_MAIN_OUTPUT_SHAPE output_shape\n");
    } else if (ninput_dims) {
        sb_printf(r, "#define KGEN_MAIN_DIMS %s_dim_info\n", m->name);
        sb_printf(r, "#define KGEN_MAIN_NUM_DIMS %s_NUM_DIMS\n", up);
        sb_printf(r, "#define KGEN_MAIN_OUTPUT_SHAPE %s_output_shape\n", m->name);
    }
    if (gpu)
        sb_printf(r, "#define KGEN_MAIN_DEVICE_MS %s_device_ms\n", m->name);
    sb_puts(r, "#include \"kgen_main.h\"\n");
    const char *io = em_template("kgen_io.h"), *mn = em_template("kgen_main.h");
    if (io)
        sb_puts(em_outset_add(o, "kgen_io.h"), io);
    if (mn)
        sb_puts(em_outset_add(o, "kgen_main.h"), mn);
    if (gpu) {
        free(up);
        return;    /* gpu.c writes the Makefile */
    }
    StrBuf *mk = em_outset_add(o, "Makefile");
    sb_printf(mk, "# Generated by kgen from %s. Builds the runner `%s`.\n", m->source, m->name);
    if (m->cflags) {
        /* the fast build by default: the flags kgen's speed is measured with */
        sb_puts(mk, "# CFLAGS: the flags the generated code is fast with, for the machine that builds it\n"
                    "# (-march=native where $(CC) takes it). Cross-compiling, name your compiler and CPU:\n"
                    "#   make CC=aarch64-linux-gnu-gcc CFLAGS=\"-O3 -mcpu=cortex-a72\"\n"
                    "# Threads: add -fopenmp to CFLAGS (the kernels' loops are marked parallel).\n");
        sb_puts(mk, "CC ?= cc\n");
        if (strstr(m->cflags, "$(NATIVE)"))
            sb_puts(mk, "NATIVE := $(shell $(CC) -march=native -E -x c /dev/null >/dev/null 2>&1 && echo -march=native)\n");
        sb_printf(mk, "CFLAGS ?= %s\n\n", m->cflags);
    } else {
        sb_puts(mk, "CC ?= cc\nCFLAGS ?= -O2\n\n");
    }
    /* NAME, and NAME_profile: the same runner built with -DKGEN_PROFILE (--profile N) */
    for (int prof = 0; prof < 2; prof++) {
        const char *suffix = prof ? "_profile" : "", *def = prof ? " -DKGEN_PROFILE" : "";
        if (prof)
            sb_puts(mk, "# the runner with a timer around each kernel call: --profile N INPUTS\n");
        if (weights_mode(m) == EM_WEIGHTS_FILE) {
            sb_printf(mk, "%s%s: %s_main.c %s.c %s.h kgen_runtime.h kgen_io.h kgen_main.h\n", m->name, suffix, m->name,
                      m->name, m->name);
            sb_printf(mk,
                      "\t$(CC) $(CFLAGS)%s -DKGEN_WEIGHTS_PATH='\"$(CURDIR)/%s_weights.bin\"' -o $@ %s_main.c %s.c -lm\n\n",
                      def, m->name, m->name, m->name);
        } else if (weights_mode(m) == EM_WEIGHTS_INCBIN) {
            /* cc assembles NAME_weights.S here, where the assembler finds NAME_weights.bin */
            sb_printf(mk, "%s%s: %s_main.c %s.c %s_weights.S %s_weights.bin %s.h kgen_runtime.h kgen_io.h kgen_main.h\n",
                      m->name, suffix, m->name, m->name, m->name, m->name, m->name);
            sb_printf(mk, "\t$(CC) $(CFLAGS)%s -o $@ %s_main.c %s.c %s_weights.S -lm\n\n", def, m->name, m->name,
                      m->name);
        } else {
            sb_printf(mk, "%s%s: %s_main.c %s.c %s_weights.c %s.h kgen_runtime.h kgen_io.h kgen_main.h\n", m->name,
                      suffix, m->name, m->name, m->name, m->name);
            sb_printf(mk, "\t$(CC) $(CFLAGS)%s -o $@ %s_main.c %s.c %s_weights.c -lm\n\n", def, m->name, m->name,
                      m->name);
        }
    }
    sb_printf(mk, "clean:\n\trm -f %s %s_profile\n\n.PHONY: clean\n", m->name, m->name);
    free(up);
}

int em_c_model_files(OutSet *o, const EmModel *m)
{
    const Model *mod = m->model;
    em_c_model_header(em_outset_add(o, ir_fmt("%s.h", m->name)), m);
    source_file(em_outset_add(o, ir_fmt("%s.c", m->name)), m, mod);
    int mode = weights_mode(m);
    if (mode == EM_WEIGHTS_FILE || mode == EM_WEIGHTS_INCBIN)
        weights_blob(em_outset_add(o, ir_fmt("%s_weights.bin", m->name)), mod);
    if (mode == EM_WEIGHTS_INCBIN)
        weights_asm(em_outset_add(o, ir_fmt("%s_weights.S", m->name)), m);
    if (mode == EM_WEIGHTS_EMBED)
        em_c_weights_file(em_outset_add(o, ir_fmt("%s_weights.c", m->name)), m);
    StrBuf *rt = em_outset_add(o, "kgen_runtime.h");
    em_c_banner(rt, m->source);
    sb_puts(rt, em_template("kgen_runtime.h"));
    if (uses_ukernels(mod) && em_c_ukernels_file(o, m->source))
        return -1;
    if (m->with_main)
        em_c_runner_files(o, m);
    return 0;
}
