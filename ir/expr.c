/* expr.c - scalar types, operator tables and expression nodes of the tensor and loop IR. */
#include "ir.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- tables */

static const struct {
    const char *name, *ctype;
    int bytes, is_float, is_signed;
} dtypes[] = {
#define X(e, n, c, b, f, s) {n, c, b, f, s},
    IR_DTYPES(X)
#undef X
};

const char *ir_dtype_name(DType t) { return dtypes[t].name; }
const char *ir_dtype_ctype(DType t) { return dtypes[t].ctype; }
int ir_dtype_bytes(DType t) { return dtypes[t].bytes; }
int ir_dtype_is_float(DType t) { return dtypes[t].is_float; }
int ir_dtype_is_signed(DType t) { return dtypes[t].is_signed; }

int ir_dtype_is_float8(DType t)
{
    return t == DT_F8E4M3FN || t == DT_F8E4M3FNUZ || t == DT_F8E5M2 || t == DT_F8E5M2FNUZ;
}

int ir_dtype_is_storage(DType t)
{
    return t == DT_F16 || t == DT_BF16 || ir_dtype_is_float8(t) || t == DT_F4E2M1 || t == DT_F8E8M0;
}

int ir_dtype_is_packed(DType t) { return t == DT_I4 || t == DT_U4 || t == DT_I2 || t == DT_U2 || t == DT_F4E2M1; }

int ir_dtype_bits(DType t)
{
    switch (t) {
    case DT_I4:
    case DT_U4:
    case DT_F4E2M1: return 4;
    case DT_I2:
    case DT_U2: return 2;
    default: return 8 * dtypes[t].bytes;
    }
}

int64_t ir_dtype_size(DType t, int64_t n)
{
    int bits = ir_dtype_bits(t);
    return bits < 8 ? (n * bits + 7) / 8 : n * (bits / 8);
}

int64_t ir_packed_get(DType t, const void *base, int64_t i)
{
    int bits = ir_dtype_bits(t), per = 8 / bits;
    unsigned mask = (1u << bits) - 1u;
    unsigned v = ((const unsigned char *)base)[i / per] >> (i % per * bits) & mask;
    if (t == DT_I4 || t == DT_I2)
        return (int64_t)(v ^ (1u << (bits - 1))) - (1 << (bits - 1));
    return v;
}

void ir_packed_set(DType t, void *base, int64_t i, int64_t code)
{
    int bits = ir_dtype_bits(t), per = 8 / bits, sh = (int)(i % per) * bits;
    unsigned mask = (1u << bits) - 1u;
    unsigned char *p = (unsigned char *)base + i / per;
    *p = (unsigned char)((*p & ~(mask << sh)) | (((unsigned)code & mask) << sh));
}

double ir_dtype_float_max(DType t)
{
    switch (t) {
    case DT_F16: return 65504.0;
    case DT_BF16: return 3.3895313892515355e38;
    case DT_F8E4M3FN: return 448.0;
    case DT_F8E4M3FNUZ: return 240.0;
    case DT_F8E5M2:
    case DT_F8E5M2FNUZ: return 57344.0;
    case DT_F4E2M1: return 6.0;
    case DT_F8E8M0: return 1.7014118346046923e38;   /* 2^127 */
    case DT_F32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
    }
}

int ir_dtype_parse(const char *name, DType *out)
{
    for (int i = 0; i < DT_COUNT; i++)
        if (!strcmp(dtypes[i].name, name)) {
            *out = (DType)i;
            return 0;
        }
    return -1;
}

static const struct {
    const char *text;
    int kind;
} binops[] = {
#define X(e, t, k) {t, k},
    IR_BINOPS(X)
#undef X
};

const char *ir_binop_text(BinOp op) { return binops[op].text; }
int ir_binop_kind(BinOp op) { return binops[op].kind; }

static const struct {
    const char *name;
    int arity, float_only;
} mathfns[] = {
#define X(e, n, a, f) {n, a, f},
    IR_MATHFNS(X)
#undef X
};

const char *ir_mathfn_name(MathFn fn) { return mathfns[fn].name; }
int ir_mathfn_arity(MathFn fn) { return mathfns[fn].arity; }

int ir_mathfn_parse(const char *name, MathFn *out)
{
    for (int i = 0; i < FN_COUNT; i++)
        if (!strcmp(mathfns[i].name, name)) {
            *out = (MathFn)i;
            return 0;
        }
    return -1;
}

static const char *reduceops[] = {
#define X(e, n) n,
    IR_REDUCEOPS(X)
#undef X
};

const char *ir_reduceop_name(ReduceOp op) { return reduceops[op]; }

/* ---------------------------------------------------------------- constructors */

static int next_var_id;

Var *ir_var_new(const char *name, DType dtype)
{
    Var *v = ir_alloc(sizeof *v);
    v->name = ir_strdup(name);
    v->dtype = dtype;
    v->id = ++next_var_id;
    return v;
}

static Expr *mk(ExprKind kind, DType t)
{
    Expr *e = ir_alloc(sizeof *e);
    e->kind = kind;
    e->dtype = t;
    return e;
}

int64_t ir_wrap_int(int64_t v, DType t)
{
    switch (t) {
    case DT_BOOL: return v != 0;
    case DT_I8: return (int8_t)v;
    case DT_U8: return (uint8_t)v;
    case DT_I16: return (int16_t)v;
    case DT_U16: return (uint16_t)v;
    case DT_I32: return (int32_t)v;
    case DT_U32: return (uint32_t)v;
    case DT_I4: return (int64_t)(((uint64_t)v & 15u) ^ 8u) - 8;
    case DT_U4: return (int64_t)((uint64_t)v & 15u);
    case DT_I2: return (int64_t)(((uint64_t)v & 3u) ^ 2u) - 2;
    case DT_U2: return (int64_t)((uint64_t)v & 3u);
    default: return v;
    }
}

Expr *ir_int(int64_t v, DType t)
{
    if (ir_dtype_is_float(t))
        return ir_float((double)v, t);
    Expr *e = mk(E_INT, t);
    e->u.ival = ir_wrap_int(v, t);
    return e;
}

Expr *ir_float(double v, DType t)
{
    Expr *e = mk(E_FLOAT, t);
    e->u.fval = t == DT_F32 || ir_dtype_is_storage(t) ? (double)(float)v : v;
    return e;
}

Expr *ir_bool(int v) { return ir_int(v != 0, DT_BOOL); }
Expr *ir_idx(int64_t v) { return ir_int(v, DT_INDEX); }

Expr *ir_varref(Var *v)
{
    Expr *e = mk(E_VAR, v->dtype);
    e->u.var = v;
    return e;
}

Expr *ir_bin(BinOp op, Expr *a, Expr *b)
{
    int k = binops[op].kind;
    Expr *e = mk(E_BIN, k == 'C' || k == 'L' ? DT_BOOL : a->dtype);
    e->u.bin.op = op;
    e->u.bin.a = a;
    e->u.bin.b = b;
    return e;
}

Expr *ir_un(UnOp op, Expr *a)
{
    Expr *e = mk(E_UN, op == UN_NOT ? DT_BOOL : a->dtype);
    e->u.un.op = op;
    e->u.un.a = a;
    return e;
}

Expr *ir_call(MathFn fn, Expr **args)
{
    Expr *e = mk(E_CALL, fn == FN_ISNAN || fn == FN_ISINF ? DT_BOOL : args[0]->dtype);
    e->u.call.fn = fn;
    for (int i = 0; i < mathfns[fn].arity; i++)
        e->u.call.args[i] = args[i];
    return e;
}

Expr *ir_cast(DType t, Expr *a)
{
    if (a->dtype == t)
        return a;
    Expr *e = mk(E_CAST, t);
    e->u.cast.a = a;
    return e;
}

Expr *ir_bitcast(DType t, Expr *a)
{
    if (!a)
        return NULL;
    if (t == DT_BOOL || a->dtype == DT_BOOL || ir_dtype_bits(t) != ir_dtype_bits(a->dtype)) {
        ir_fail("cannot reinterpret the bits of %s as %s (both must be non-bool types of the same width)",
                ir_dtype_name(a->dtype), ir_dtype_name(t));
        return NULL;
    }
    if (a->dtype == t)
        return a;
    Expr *e = mk(E_BITCAST, t);
    e->u.cast.a = a;
    return e;
}

Expr *ir_cast_like(const Expr *like, Expr *a)
{
    if (like->kind == E_BITCAST)
        return ir_bitcast(like->dtype, a);
    return ir_cast(like->dtype, a);
}

Expr *ir_select(Expr *cond, Expr *t, Expr *f)
{
    Expr *e = mk(E_SELECT, t->dtype);
    e->u.sel.cond = cond;
    e->u.sel.t = t;
    e->u.sel.f = f;
    return e;
}

Expr *ir_access(Tensor *t, Expr **idx, int n)
{
    Expr *e = mk(E_ACCESS, t->dtype);
    e->u.access.t = t;
    e->u.access.n = n;
    e->u.access.idx = ir_alloc(sizeof *idx * (size_t)(n ? n : 1));
    memcpy(e->u.access.idx, idx, sizeof *idx * (size_t)n);
    return e;
}

Expr *ir_load(Buffer *b, Expr *index)
{
    Expr *e = mk(E_LOAD, b->dtype);
    e->u.load.buf = b;
    e->u.load.index = index;
    return e;
}

Expr *ir_reduce(ReduceOp op, Expr *body, IterVar **axes, int naxes)
{
    Expr *e = mk(E_REDUCE, body->dtype);
    e->u.reduce.op = op;
    e->u.reduce.body = body;
    e->u.reduce.naxes = naxes;
    e->u.reduce.axes = ir_alloc(sizeof *axes * (size_t)(naxes ? naxes : 1));
    memcpy(e->u.reduce.axes, axes, sizeof *axes * (size_t)naxes);
    return e;
}

/* ---------------------------------------------------------------- checked constructors */

static int is_literal(const Expr *e)
{
    if (e->kind == E_UN && e->u.un.op == UN_NEG)
        return is_literal(e->u.un.a);
    return e->kind == E_INT || e->kind == E_FLOAT;
}

/* Give a literal the type of the other side. A float literal never turns into an integer. */
static Expr *retype_literal(Expr *e, DType t)
{
    if (e->kind == E_UN)
        return ir_un(UN_NEG, retype_literal(e->u.un.a, t));
    if (e->kind == E_FLOAT) {
        if (!ir_dtype_is_float(t))
            return NULL;
        return ir_float(e->u.fval, t);
    }
    return ir_int(e->u.ival, t);
}

static int unify(Expr **a, Expr **b, const char *what)
{
    if ((*a)->dtype == (*b)->dtype)
        return 0;
    Expr *na = NULL, *nb = NULL;
    if (is_literal(*b) && !is_literal(*a))
        nb = retype_literal(*b, (*a)->dtype);
    else if (is_literal(*a) && !is_literal(*b))
        na = retype_literal(*a, (*b)->dtype);
    else if (is_literal(*a) && is_literal(*b)) {
        /* two literals: the float one wins */
        if (ir_dtype_is_float((*a)->dtype))
            nb = retype_literal(*b, (*a)->dtype);
        else
            na = retype_literal(*a, (*b)->dtype);
    }
    if (na)
        *a = na;
    if (nb)
        *b = nb;
    if ((*a)->dtype == (*b)->dtype)
        return 0;
    return ir_fail("type mismatch in '%s': %s and %s (add a cast such as %s(...))", what,
                   ir_dtype_name((*a)->dtype), ir_dtype_name((*b)->dtype),
                   ir_dtype_name(ir_dtype_is_float((*a)->dtype) ? (*a)->dtype : (*b)->dtype));
}

static int packed_int(DType t) { return ir_dtype_is_packed(t) && !ir_dtype_is_float(t); }

Expr *ir_binary(BinOp op, Expr *a, Expr *b)
{
    if (!a || !b)
        return NULL;
    int k = binops[op].kind;
    if (k == 'L') {
        if (a->dtype != DT_BOOL || b->dtype != DT_BOOL) {
            ir_fail("'%s' needs bool operands, got %s and %s", binops[op].text,
                    ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
            return NULL;
        }
        return ir_bin(op, a, b);
    }
    if (unify(&a, &b, binops[op].text))
        return NULL;
    if (k == 'B' && ir_dtype_is_float(a->dtype)) {
        ir_fail("'%s' needs integer operands, got %s", binops[op].text, ir_dtype_name(a->dtype));
        return NULL;
    }
    if ((op == OP_MOD || op == OP_FLOORMOD || op == OP_FLOORDIV) && ir_dtype_is_float(a->dtype) &&
        op != OP_MOD) {
        ir_fail("'%s' needs integer operands, got %s", binops[op].text, ir_dtype_name(a->dtype));
        return NULL;
    }
    if (a->dtype == DT_BOOL && k == 'A') {
        ir_fail("arithmetic '%s' on bool operands; cast them first", binops[op].text);
        return NULL;
    }
    /* the 4- and 2-bit integers are for storage: a result out of their range would wrap
     * only where it is stored (min and max stay in it) */
    if (packed_int(a->dtype) && (k == 'A' || k == 'B') && op != OP_MIN && op != OP_MAX) {
        ir_fail("'%s' on %s operands: the 4- and 2-bit integers are storage types; cast them first, e.g. i32(x)",
                binops[op].text, ir_dtype_name(a->dtype));
        return NULL;
    }
    return ir_bin(op, a, b);
}

Expr *ir_unary(UnOp op, Expr *a)
{
    if (!a)
        return NULL;
    if (op == UN_NOT && a->dtype != DT_BOOL) {
        ir_fail("'!' needs a bool operand, got %s", ir_dtype_name(a->dtype));
        return NULL;
    }
    if (op == UN_NEG && a->dtype == DT_BOOL) {
        ir_fail("'-' on a bool operand");
        return NULL;
    }
    if (op == UN_BITNOT && ir_dtype_is_float(a->dtype)) {
        ir_fail("'~' needs an integer operand, got %s", ir_dtype_name(a->dtype));
        return NULL;
    }
    if (op != UN_NOT && packed_int(a->dtype)) {
        ir_fail("'%s' on an %s operand: the 4- and 2-bit integers are storage types; cast it first, e.g. i32(x)",
                op == UN_NEG ? "-" : "~", ir_dtype_name(a->dtype));
        return NULL;
    }
    return ir_un(op, a);
}

Expr *ir_mathcall(MathFn fn, Expr **args, int nargs)
{
    if (nargs != mathfns[fn].arity) {
        ir_fail("%s() takes %d argument%s, got %d", mathfns[fn].name, mathfns[fn].arity,
                mathfns[fn].arity == 1 ? "" : "s", nargs);
        return NULL;
    }
    for (int i = 0; i < nargs; i++)
        if (!args[i])
            return NULL;
    /* unify all arguments with the first non-literal one */
    for (int i = 1; i < nargs; i++)
        if (unify(&args[0], &args[i], mathfns[fn].name))
            return NULL;
    for (int i = 1; i < nargs; i++)
        if (unify(&args[0], &args[i], mathfns[fn].name))
            return NULL;
    if (packed_int(args[0]->dtype)) {
        ir_fail("%s() of %s: the 4- and 2-bit integers are storage types; cast it first, e.g. i32(x)",
                mathfns[fn].name, ir_dtype_name(args[0]->dtype));
        return NULL;
    }
    if (mathfns[fn].float_only && !ir_dtype_is_float(args[0]->dtype)) {
        ir_fail("%s() needs a float argument, got %s (cast it, e.g. f32(x))", mathfns[fn].name,
                ir_dtype_name(args[0]->dtype));
        return NULL;
    }
    return ir_call(fn, args);
}

Expr *ir_reduce_identity(ReduceOp op, DType t)
{
    int f = ir_dtype_is_float(t);
    switch (op) {
    case RED_SUM: return ir_int(0, t);
    case RED_PROD: return ir_int(1, t);
    case RED_MAX:
        if (f)
            return ir_float(-INFINITY, t);
        if (t == DT_BOOL)
            return ir_int(0, t);
        if (!ir_dtype_is_signed(t))
            return ir_int(0, t);
        if (t == DT_I4 || t == DT_I2)
            return ir_int(t == DT_I4 ? -8 : -2, t);
        return ir_int(t == DT_I8 ? INT8_MIN : t == DT_I16 ? INT16_MIN : t == DT_I32 ? INT32_MIN : INT64_MIN, t);
    case RED_MIN:
        if (f)
            return ir_float(INFINITY, t);
        switch (t) {
        case DT_BOOL: return ir_int(1, t);
        case DT_I8: return ir_int(INT8_MAX, t);
        case DT_U8: return ir_int(UINT8_MAX, t);
        case DT_I16: return ir_int(INT16_MAX, t);
        case DT_U16: return ir_int(UINT16_MAX, t);
        case DT_I32: return ir_int(INT32_MAX, t);
        case DT_U32: return ir_int(UINT32_MAX, t);
        case DT_U64: return ir_int(-1, t);   /* all bits set */
        case DT_I4: return ir_int(7, t);
        case DT_U4: return ir_int(15, t);
        case DT_I2: return ir_int(1, t);
        case DT_U2: return ir_int(3, t);
        default: return ir_int(INT64_MAX, t);
        }
    default: break;
    }
    ir_die("bad reduce op");
    return NULL;
}

/* ---------------------------------------------------------------- queries */

int ir_expr_is_const(const Expr *e, int64_t *v)
{
    if (e->kind != E_INT)
        return 0;
    if (v)
        *v = e->u.ival;
    return 1;
}

int ir_dim_expr_nonneg(const Expr *e)
{
    switch (e->kind) {
    case E_INT: return e->u.ival >= 0;
    case E_VAR: return 1;   /* (a dim: its range starts at 0 or above) */
    case E_CAST: return ir_dim_expr_nonneg(e->u.cast.a);
    case E_BIN:
        switch (e->u.bin.op) {
        case OP_FLOORMOD: {
            int64_t b;
            if (ir_expr_is_const(e->u.bin.b, &b) && b > 0)
                return 1;
        }
        /* fall through */
        case OP_ADD:
        case OP_MUL:
        case OP_FLOORDIV:
        case OP_DIV:
        case OP_MOD:
        case OP_MIN:
        case OP_MAX: return ir_dim_expr_nonneg(e->u.bin.a) && ir_dim_expr_nonneg(e->u.bin.b);
        default: return 0;
        }
    default: return 0;
    }
}

int ir_expr_equal(const Expr *a, const Expr *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind || a->dtype != b->dtype)
        return 0;
    switch (a->kind) {
    case E_INT: return a->u.ival == b->u.ival;
    case E_FLOAT: return memcmp(&a->u.fval, &b->u.fval, sizeof(double)) == 0;
    case E_VAR: return a->u.var == b->u.var;
    case E_BIN:
        return a->u.bin.op == b->u.bin.op && ir_expr_equal(a->u.bin.a, b->u.bin.a) &&
               ir_expr_equal(a->u.bin.b, b->u.bin.b);
    case E_UN: return a->u.un.op == b->u.un.op && ir_expr_equal(a->u.un.a, b->u.un.a);
    case E_CALL:
        if (a->u.call.fn != b->u.call.fn)
            return 0;
        for (int i = 0; i < mathfns[a->u.call.fn].arity; i++)
            if (!ir_expr_equal(a->u.call.args[i], b->u.call.args[i]))
                return 0;
        return 1;
    case E_CAST:
    case E_BITCAST: return ir_expr_equal(a->u.cast.a, b->u.cast.a);
    case E_SELECT:
        return ir_expr_equal(a->u.sel.cond, b->u.sel.cond) && ir_expr_equal(a->u.sel.t, b->u.sel.t) &&
               ir_expr_equal(a->u.sel.f, b->u.sel.f);
    case E_ACCESS:
        if (a->u.access.t != b->u.access.t || a->u.access.n != b->u.access.n)
            return 0;
        for (int i = 0; i < a->u.access.n; i++)
            if (!ir_expr_equal(a->u.access.idx[i], b->u.access.idx[i]))
                return 0;
        return 1;
    case E_LOAD: return a->u.load.buf == b->u.load.buf && ir_expr_equal(a->u.load.index, b->u.load.index);
    case E_REDUCE: return 0;   /* reductions are never merged */
    }
    return 0;
}

Expr *ir_expr_find(Expr *e, int (*match)(const Expr *, const void *), const void *ctx)
{
    if (match(e, ctx))
        return e;
    Expr *r = NULL;
    switch (e->kind) {
    case E_BIN: return (r = ir_expr_find(e->u.bin.a, match, ctx)) ? r : ir_expr_find(e->u.bin.b, match, ctx);
    case E_UN: return ir_expr_find(e->u.un.a, match, ctx);
    case E_CAST:
    case E_BITCAST: return ir_expr_find(e->u.cast.a, match, ctx);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn) && !r; i++)
            r = ir_expr_find(e->u.call.args[i], match, ctx);
        return r;
    case E_SELECT:
        if ((r = ir_expr_find(e->u.sel.cond, match, ctx)) || (r = ir_expr_find(e->u.sel.t, match, ctx)))
            return r;
        return ir_expr_find(e->u.sel.f, match, ctx);
    case E_LOAD: return ir_expr_find(e->u.load.index, match, ctx);
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n && !r; i++)
            r = ir_expr_find(e->u.access.idx[i], match, ctx);
        return r;
    case E_REDUCE: return ir_expr_find(e->u.reduce.body, match, ctx);
    default: return NULL;
    }
}

static int is_reduce(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_REDUCE;
}

static int is_memory_read(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_LOAD || e->kind == E_ACCESS || e->kind == E_REDUCE;
}

/* (ir_expr_find changes nothing: the casts only let these take a const expression) */
int ir_expr_has_reduce(const Expr *e) { return ir_expr_find((Expr *)e, is_reduce, NULL) != NULL; }

int ir_expr_reads_memory(const Expr *e) { return ir_expr_find((Expr *)e, is_memory_read, NULL) != NULL; }

static int is_dim_var(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_VAR && e->u.var->is_dim;
}

int ir_expr_uses_dims(const Expr *e) { return ir_expr_find((Expr *)e, is_dim_var, NULL) != NULL; }

static int max2(int a, int b) { return a > b ? a : b; }

int ir_expr_depth(const Expr *e)
{
    int d = 0;
    switch (e->kind) {
    case E_BIN: d = max2(ir_expr_depth(e->u.bin.a), ir_expr_depth(e->u.bin.b)); break;
    case E_UN: d = ir_expr_depth(e->u.un.a); break;
    case E_CAST:
    case E_BITCAST: d = ir_expr_depth(e->u.cast.a); break;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            d = max2(d, ir_expr_depth(e->u.call.args[i]));
        break;
    case E_SELECT:
        d = max2(ir_expr_depth(e->u.sel.cond), max2(ir_expr_depth(e->u.sel.t), ir_expr_depth(e->u.sel.f)));
        break;
    case E_REDUCE: d = ir_expr_depth(e->u.reduce.body); break;
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            d = max2(d, ir_expr_depth(e->u.access.idx[i]));
        break;
    default: break;
    }
    return d + 1;
}

int ir_expr_uses_var(const Expr *e, const Var *v)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT: return 0;
    case E_VAR: return e->u.var == v;
    case E_BIN: return ir_expr_uses_var(e->u.bin.a, v) || ir_expr_uses_var(e->u.bin.b, v);
    case E_UN: return ir_expr_uses_var(e->u.un.a, v);
    case E_CALL:
        for (int i = 0; i < mathfns[e->u.call.fn].arity; i++)
            if (ir_expr_uses_var(e->u.call.args[i], v))
                return 1;
        return 0;
    case E_CAST:
    case E_BITCAST: return ir_expr_uses_var(e->u.cast.a, v);
    case E_SELECT:
        return ir_expr_uses_var(e->u.sel.cond, v) || ir_expr_uses_var(e->u.sel.t, v) ||
               ir_expr_uses_var(e->u.sel.f, v);
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            if (ir_expr_uses_var(e->u.access.idx[i], v))
                return 1;
        return 0;
    case E_LOAD: return ir_expr_uses_var(e->u.load.index, v);
    case E_REDUCE: return ir_expr_uses_var(e->u.reduce.body, v);
    }
    return 0;
}

/* ---------------------------------------------------------------- substitution */

Expr *ir_subst(Expr *e, Var **vars, Expr **values, int n)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT: return e;
    case E_VAR:
        for (int i = 0; i < n; i++)
            if (vars[i] == e->u.var)
                return values[i];
        return e;
    case E_BIN: {
        Expr *a = ir_subst(e->u.bin.a, vars, values, n), *b = ir_subst(e->u.bin.b, vars, values, n);
        return a == e->u.bin.a && b == e->u.bin.b ? e : ir_bin(e->u.bin.op, a, b);
    }
    case E_UN: {
        Expr *a = ir_subst(e->u.un.a, vars, values, n);
        return a == e->u.un.a ? e : ir_un(e->u.un.op, a);
    }
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        int changed = 0;
        for (int i = 0; i < mathfns[e->u.call.fn].arity; i++) {
            args[i] = ir_subst(e->u.call.args[i], vars, values, n);
            changed |= args[i] != e->u.call.args[i];
        }
        return changed ? ir_call(e->u.call.fn, args) : e;
    }
    case E_CAST:
    case E_BITCAST: {
        Expr *a = ir_subst(e->u.cast.a, vars, values, n);
        return a == e->u.cast.a ? e : ir_cast_like(e, a);
    }
    case E_SELECT: {
        Expr *c = ir_subst(e->u.sel.cond, vars, values, n);
        Expr *t = ir_subst(e->u.sel.t, vars, values, n);
        Expr *f = ir_subst(e->u.sel.f, vars, values, n);
        return c == e->u.sel.cond && t == e->u.sel.t && f == e->u.sel.f ? e : ir_select(c, t, f);
    }
    case E_ACCESS: {
        Expr *idx[KG_MAX_DIMS];
        int changed = 0;
        for (int i = 0; i < e->u.access.n; i++) {
            idx[i] = ir_subst(e->u.access.idx[i], vars, values, n);
            changed |= idx[i] != e->u.access.idx[i];
        }
        return changed ? ir_access(e->u.access.t, idx, e->u.access.n) : e;
    }
    case E_LOAD: {
        Expr *i = ir_subst(e->u.load.index, vars, values, n);
        return i == e->u.load.index ? e : ir_load(e->u.load.buf, i);
    }
    case E_REDUCE: {
        Expr *b = ir_subst(e->u.reduce.body, vars, values, n);
        return b == e->u.reduce.body ? e : ir_reduce(e->u.reduce.op, b, e->u.reduce.axes, e->u.reduce.naxes);
    }
    }
    return e;
}

/* ---------------------------------------------------------------- printing (dumps) */

void ir_print_expr(FILE *f, const Expr *e)
{
    switch (e->kind) {
    case E_INT:
        if (e->dtype == DT_BOOL)
            fputs(e->u.ival ? "true" : "false", f);
        else if (e->dtype == DT_INDEX)
            fprintf(f, "%lld", (long long)e->u.ival);
        else
            fprintf(f, "%s(%lld)", ir_dtype_name(e->dtype), (long long)e->u.ival);
        return;
    case E_FLOAT:
        if (e->dtype == DT_F32)
            fprintf(f, "%.9g", e->u.fval);
        else
            fprintf(f, "%s(%.17g)", ir_dtype_name(e->dtype), e->u.fval);
        if (isfinite(e->u.fval) && e->u.fval == floor(e->u.fval) && fabs(e->u.fval) < 1e15 && e->dtype == DT_F32)
            fputs(".0", f);
        return;
    case E_VAR: fputs(e->u.var->name, f); return;
    case E_BIN:
        if (e->u.bin.op == OP_MIN || e->u.bin.op == OP_MAX) {
            fprintf(f, "%s(", binops[e->u.bin.op].text);
            ir_print_expr(f, e->u.bin.a);
            fputs(", ", f);
            ir_print_expr(f, e->u.bin.b);
            fputc(')', f);
            return;
        }
        fputc('(', f);
        ir_print_expr(f, e->u.bin.a);
        fprintf(f, " %s ", binops[e->u.bin.op].text);
        ir_print_expr(f, e->u.bin.b);
        fputc(')', f);
        return;
    case E_UN:
        fputs(e->u.un.op == UN_NEG ? "-" : e->u.un.op == UN_NOT ? "!" : "~", f);
        ir_print_expr(f, e->u.un.a);
        return;
    case E_CALL:
        fprintf(f, "%s(", mathfns[e->u.call.fn].name);
        for (int i = 0; i < mathfns[e->u.call.fn].arity; i++) {
            if (i)
                fputs(", ", f);
            ir_print_expr(f, e->u.call.args[i]);
        }
        fputc(')', f);
        return;
    case E_CAST:
    case E_BITCAST:
        fprintf(f, e->kind == E_BITCAST ? "bits_%s(" : "%s(", ir_dtype_name(e->dtype));
        ir_print_expr(f, e->u.cast.a);
        fputc(')', f);
        return;
    case E_SELECT:
        fputs("select(", f);
        ir_print_expr(f, e->u.sel.cond);
        fputs(", ", f);
        ir_print_expr(f, e->u.sel.t);
        fputs(", ", f);
        ir_print_expr(f, e->u.sel.f);
        fputc(')', f);
        return;
    case E_ACCESS:
        fprintf(f, "%s[", e->u.access.t->name);
        for (int i = 0; i < e->u.access.n; i++) {
            if (i)
                fputs(", ", f);
            ir_print_expr(f, e->u.access.idx[i]);
        }
        fputc(']', f);
        return;
    case E_LOAD:
        fprintf(f, "%s[", e->u.load.buf->name);
        ir_print_expr(f, e->u.load.index);
        fputc(']', f);
        return;
    case E_REDUCE:
        fprintf(f, "%s(", reduceops[e->u.reduce.op]);
        for (int i = 0; i < e->u.reduce.naxes; i++)
            fprintf(f, "%s%s < %lld", i ? ", " : "", e->u.reduce.axes[i]->var->name,
                    (long long)e->u.reduce.axes[i]->extent);
        fputs(": ", f);
        ir_print_expr(f, e->u.reduce.body);
        fputc(')', f);
        return;
    }
}
