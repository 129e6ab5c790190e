/* ir.h - kgen's tensor IR and loop (statement) IR.
 *
 * Two levels live here:
 *   - the tensor IR: placeholders, computes (index formulas with reductions) and scans,
 *     built by the .kg frontend, the ONNX frontend or the C API;
 *   - the loop IR: statements (for/let/if/store/allocate/seq) over flat buffers, produced
 *     by lowering (lower/) and printed by emit/.
 * Nodes are allocated from the current arena and never freed one by one; they are
 * immutable once built (passes build new nodes).
 */
#ifndef KGEN_IR_H
#define KGEN_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KG_MAX_DIMS 8       /* rank limit for every tensor and buffer */
#define KG_MAX_ARGS 3       /* most arguments of a math call (fma) */

/* ---------------------------------------------------------------- util.c */

typedef struct Arena Arena;

Arena *ir_arena_new(void);
void ir_arena_free(Arena *a);
void ir_arena_set(Arena *a);          /* the arena that ir_alloc uses from now on */
void *ir_alloc(size_t size);           /* zeroed; never fails (dies on OOM) */
char *ir_strdup(const char *s);
char *ir_fmt(const char *fmt, ...);    /* printf into an arena string */

/* A user error: set the message, return -1 (or NULL through the caller). The frontend
 * prepends the source position. Internal faults use ir_die(), which aborts. */
int ir_fail(const char *fmt, ...);
const char *ir_errmsg(void);
void ir_clear_error(void);
#define ir_die(...) ir_die_at(__FILE__, __LINE__, __VA_ARGS__)
void ir_die_at(const char *file, int line, const char *fmt, ...);

/* A growable string on the heap (the emitters build whole files in memory, so nothing
 * is written when a later step fails). */
typedef struct {
    char *data;
    size_t len, cap;
} StrBuf;
void sb_printf(StrBuf *b, const char *fmt, ...);
void sb_puts(StrBuf *b, const char *s);
void sb_indent(StrBuf *b, int levels);     /* four spaces a level */
void sb_free(StrBuf *b);

/* growable vector of pointers: a limit and a name for its error message */
typedef struct {
    void **items;
    int n, cap;
} PtrVec;
void ir_vec_push(PtrVec *v, void *item, int limit, const char *what);
/* Room for more elements of elem bytes in a growing array: *cap doubles (from first) and
 * the array moves. ir_grow: a heap array (realloc); ir_grow_arena: one in the IR arena,
 * its n elements in use copied over. Both return the new array (out of memory: ir_die). */
void *ir_grow(void *items, int *cap, size_t elem, int first);
void *ir_grow_arena(const void *items, int n, int *cap, size_t elem, int first);

/* ---------------------------------------------------------------- dtypes */

/* X(enum, name, C type, bytes, is_float, is_signed) */
#define IR_DTYPES(X)                                 \
    X(DT_BOOL, "bool", "uint8_t", 1, 0, 0)          \
    X(DT_I8, "i8", "int8_t", 1, 0, 1)               \
    X(DT_U8, "u8", "uint8_t", 1, 0, 0)              \
    X(DT_I16, "i16", "int16_t", 2, 0, 1)            \
    X(DT_U16, "u16", "uint16_t", 2, 0, 0)           \
    X(DT_I32, "i32", "int32_t", 4, 0, 1)            \
    X(DT_U32, "u32", "uint32_t", 4, 0, 0)           \
    X(DT_I64, "i64", "int64_t", 8, 0, 1)            \
    X(DT_U64, "u64", "uint64_t", 8, 0, 0)           \
    X(DT_F16, "f16", "uint16_t", 2, 1, 1)           \
    X(DT_F32, "f32", "float", 4, 1, 1)              \
    X(DT_F64, "f64", "double", 8, 1, 1)             \
    X(DT_BF16, "bf16", "uint16_t", 2, 1, 1)         \
    X(DT_F8E4M3FN, "f8e4m3fn", "uint8_t", 1, 1, 1)  \
    X(DT_F8E4M3FNUZ, "f8e4m3fnuz", "uint8_t", 1, 1, 1) \
    X(DT_F8E5M2, "f8e5m2", "uint8_t", 1, 1, 1)      \
    X(DT_F8E5M2FNUZ, "f8e5m2fnuz", "uint8_t", 1, 1, 1) \
    X(DT_I4, "i4", "uint8_t", 1, 0, 1)              \
    X(DT_U4, "u4", "uint8_t", 1, 0, 0)              \
    X(DT_I2, "i2", "uint8_t", 1, 0, 1)              \
    X(DT_U2, "u2", "uint8_t", 1, 0, 0)              \
    X(DT_F4E2M1, "f4e2m1", "uint8_t", 1, 1, 1)      \
    X(DT_F8E8M0, "f8e8m0", "uint8_t", 1, 1, 0)

typedef enum {
#define X(e, n, c, b, f, s) e,
    IR_DTYPES(X)
#undef X
    DT_COUNT
} DType;

const char *ir_dtype_name(DType t);      /* "f32" */
const char *ir_dtype_ctype(DType t);     /* storage type in C: "float", "uint16_t" for f16 */
int ir_dtype_bytes(DType t);
int ir_dtype_is_float(DType t);
int ir_dtype_is_signed(DType t);
int ir_dtype_parse(const char *name, DType *out);   /* 0 on success */
/* The storage float types (f16, bf16, the float8 types): stored as bit patterns
 * (ir_dtype_ctype), computed in float; a load converts with kgen_<name>_to_f32 and a
 * store with kgen_f32_to_<name> (round to nearest even; float8 overflow gives NaN, or
 * inf for f8e5m2: ONNX's saturate=0; the default saturate=1 is a clamp that Cast and
 * QuantizeLinear compute before the store). f4e2m1 (packed) and f8e8m0 (an exponent
 * only: 2^(e-127), 255 is NaN) are storage types too: f4e2m1's conversion rounds to
 * nearest even and saturates to +-6 (NaN gives 7, its largest code, with the sign);
 * f8e8m0's rounds up to the next power of two and saturates (Cast's defaults; Cast
 * computes its other modes before the store). */
int ir_dtype_is_storage(DType t);
int ir_dtype_is_float8(DType t);
/* The packed types (i4, u4, i2, u2, f4e2m1) keep 8 / ir_dtype_bits elements in a byte, as
 * ONNX stores them: element i is bits (i % per) * bits.. of byte i / per, the first
 * element in the low bits; i4 and i2 are sign-extended when loaded. Their C type
 * (ir_dtype_ctype) is the byte, uint8_t, and ir_dtype_bytes says 1: the size of a buffer
 * of n elements is ir_dtype_size(t, n) bytes (an odd number of i4 elements takes a whole
 * last byte). Integer ones compute as small integers of their range, f4e2m1 in float as
 * the other storage floats (E2M1: no inf or NaN, largest 6). A store into a packed
 * buffer changes its bits of the byte only (a read-modify-write), so the lowering keeps
 * every loop nest that stores one serial: no thread or vector lane shares its byte. */
int ir_dtype_is_packed(DType t);
int ir_dtype_bits(DType t);                    /* 4 for i4, 8 for u8, 32 for f32 */
int64_t ir_dtype_size(DType t, int64_t n);     /* bytes of n elements */
/* element i of a packed array as its bit code (i4, i2: sign-extended), and its store */
int64_t ir_packed_get(DType t, const void *base, int64_t i);
void ir_packed_set(DType t, void *base, int64_t i, int64_t code);
double ir_dtype_float_max(DType t);  /* the largest finite value of a float type */
/* interp.c: the conversions of the storage types, as the runtime does them */
float ir_storage_to_f32(DType t, const void *p);
void ir_f32_to_storage(DType t, float v, void *p);

/* ---------------------------------------------------------------- expressions */

/* Binary operators. X(enum, text, kind) with kind: A arithmetic, C comparison (result
 * bool), L logical (bool operands), B bitwise (integer operands). DIV and MOD on integers
 * truncate like C; FLOORDIV/FLOORMOD round towards minus infinity (index arithmetic). */
#define IR_BINOPS(X)             \
    X(OP_ADD, "+", 'A')          \
    X(OP_SUB, "-", 'A')          \
    X(OP_MUL, "*", 'A')          \
    X(OP_DIV, "/", 'A')          \
    X(OP_MOD, "%", 'A')          \
    X(OP_FLOORDIV, "//", 'A')    \
    X(OP_FLOORMOD, "%%", 'A')    \
    X(OP_MIN, "min", 'A')        \
    X(OP_MAX, "max", 'A')        \
    X(OP_EQ, "==", 'C')          \
    X(OP_NE, "!=", 'C')          \
    X(OP_LT, "<", 'C')           \
    X(OP_LE, "<=", 'C')          \
    X(OP_GT, ">", 'C')           \
    X(OP_GE, ">=", 'C')          \
    X(OP_AND, "&&", 'L')         \
    X(OP_OR, "||", 'L')          \
    X(OP_BITAND, "&", 'B')       \
    X(OP_BITOR, "|", 'B')        \
    X(OP_BITXOR, "^", 'B')       \
    X(OP_SHL, "<<", 'B')         \
    X(OP_SHR, ">>", 'B')

typedef enum {
#define X(e, t, k) e,
    IR_BINOPS(X)
#undef X
    OP_COUNT
} BinOp;

const char *ir_binop_text(BinOp op);
int ir_binop_kind(BinOp op);

typedef enum { UN_NEG, UN_NOT, UN_BITNOT } UnOp;

/* Math functions. X(enum, name, arity, float_only). float_only: only for float operands;
 * otherwise integer operands are allowed (abs, min-like helpers). The printer's dialect
 * table maps each to the target's spelling. */
#define IR_MATHFNS(X)              \
    X(FN_EXP, "exp", 1, 1)         \
    X(FN_LOG, "log", 1, 1)         \
    X(FN_SQRT, "sqrt", 1, 1)       \
    X(FN_RSQRT, "rsqrt", 1, 1)     \
    X(FN_TANH, "tanh", 1, 1)       \
    X(FN_SIGMOID, "sigmoid", 1, 1) \
    X(FN_ERF, "erf", 1, 1)         \
    X(FN_POW, "pow", 2, 1)         \
    X(FN_ABS, "abs", 1, 0)         \
    X(FN_FLOOR, "floor", 1, 1)     \
    X(FN_CEIL, "ceil", 1, 1)       \
    X(FN_ROUND, "round", 1, 1)     \
    X(FN_TRUNC, "trunc", 1, 1)     \
    X(FN_SIN, "sin", 1, 1)         \
    X(FN_COS, "cos", 1, 1)         \
    X(FN_TAN, "tan", 1, 1)         \
    X(FN_ASIN, "asin", 1, 1)       \
    X(FN_ACOS, "acos", 1, 1)       \
    X(FN_ATAN, "atan", 1, 1)       \
    X(FN_SINH, "sinh", 1, 1)       \
    X(FN_COSH, "cosh", 1, 1)       \
    X(FN_ASINH, "asinh", 1, 1)     \
    X(FN_ACOSH, "acosh", 1, 1)     \
    X(FN_ATANH, "atanh", 1, 1)     \
    X(FN_ISNAN, "isnan", 1, 1)     \
    X(FN_ISINF, "isinf", 1, 1)     \
    X(FN_FMA, "fma", 3, 1)

typedef enum {
#define X(e, n, a, f) e,
    IR_MATHFNS(X)
#undef X
    FN_COUNT
} MathFn;

const char *ir_mathfn_name(MathFn fn);
int ir_mathfn_arity(MathFn fn);
int ir_mathfn_parse(const char *name, MathFn *out);   /* 0 on success */

/* Reductions: X(enum, name). The identity depends on the dtype (see ir_reduce_identity). */
#define IR_REDUCEOPS(X) \
    X(RED_SUM, "sum")   \
    X(RED_PROD, "prod") \
    X(RED_MAX, "max")   \
    X(RED_MIN, "min")

typedef enum {
#define X(e, n) e,
    IR_REDUCEOPS(X)
#undef X
    RED_COUNT
} ReduceOp;

const char *ir_reduceop_name(ReduceOp op);

typedef struct Var Var;
typedef struct IterVar IterVar;
typedef struct Expr Expr;
typedef struct Tensor Tensor;
typedef struct Buffer Buffer;

/* A scalar variable: a loop variable or an axis. Identity is the pointer; id orders
 * variables deterministically. */
struct Var {
    const char *name;
    DType dtype;
    int id;
    int is_dim;        /* a run-time dim's variable (IrDim): a kernel parameter, not a loop */
    int64_t lo, hi;    /* is_dim: its range, which the simplifier knows */
};

Var *ir_var_new(const char *name, DType dtype);

typedef enum {
    E_INT,      /* ival: integer or bool constant of dtype */
    E_FLOAT,    /* fval: float constant of dtype */
    E_VAR,      /* var */
    E_BIN,      /* bin.op, bin.a, bin.b */
    E_UN,       /* un.op, un.a */
    E_CALL,     /* call.fn, call.args[0..arity) */
    E_CAST,     /* cast.a converted to dtype */
    E_BITCAST,  /* cast.a's bits read as dtype, a type of the same width (ir_bitcast) */
    E_SELECT,   /* sel.cond ? sel.t : sel.f; only the chosen side is evaluated */
    E_ACCESS,   /* access.t[access.idx...]: a tensor element (tensor IR only) */
    E_LOAD,     /* load.buf[load.index]: a flat buffer element (loop IR only) */
    E_REDUCE    /* reduce.op over reduce.axes of reduce.body (tensor IR only) */
} ExprKind;

struct Expr {
    ExprKind kind;
    DType dtype;
    union {
        int64_t ival;
        double fval;
        Var *var;
        struct { BinOp op; Expr *a, *b; } bin;
        struct { UnOp op; Expr *a; } un;
        struct { MathFn fn; Expr *args[KG_MAX_ARGS]; } call;
        struct { Expr *a; } cast;
        struct { Expr *cond, *t, *f; } sel;
        struct { Tensor *t; Expr **idx; int n; } access;
        struct { Buffer *buf; Expr *index; } load;
        struct { ReduceOp op; Expr *body; IterVar **axes; int naxes; } reduce;
    } u;
};

/* Constructors. The plain ones trust their operands (the lowering uses them); the
 * checked ir_binary/ir_unary/ir_mathcall unify literal types and return NULL with
 * ir_fail() on a type error. */
Expr *ir_int(int64_t v, DType t);
Expr *ir_float(double v, DType t);
Expr *ir_bool(int v);
Expr *ir_idx(int64_t v);               /* an index constant (DT_I32... see ir_index_dtype) */
Expr *ir_varref(Var *v);
Expr *ir_bin(BinOp op, Expr *a, Expr *b);
Expr *ir_un(UnOp op, Expr *a);
Expr *ir_call(MathFn fn, Expr **args);
Expr *ir_cast(DType t, Expr *a);
/* a's bits as type t: a and t are not bool and have the same width; a storage float's
 * bits are its encoding (f16: binary16). NULL with ir_fail() otherwise. */
Expr *ir_bitcast(DType t, Expr *a);
/* A cast of the kind of `like` (E_CAST or E_BITCAST) to like's type, over a: for passes
 * that rebuild expressions. */
Expr *ir_cast_like(const Expr *like, Expr *a);
Expr *ir_select(Expr *cond, Expr *t, Expr *f);
Expr *ir_access(Tensor *t, Expr **idx, int n);
Expr *ir_load(Buffer *b, Expr *index);
Expr *ir_reduce(ReduceOp op, Expr *body, IterVar **axes, int naxes);

Expr *ir_binary(BinOp op, Expr *a, Expr *b);
Expr *ir_unary(UnOp op, Expr *a);
Expr *ir_mathcall(MathFn fn, Expr **args, int nargs);

/* The dtype of loop variables and index arithmetic. */
#define DT_INDEX DT_I32

Expr *ir_reduce_identity(ReduceOp op, DType t);
int ir_expr_equal(const Expr *a, const Expr *b);      /* structural */
int ir_expr_is_const(const Expr *e, int64_t *v);       /* integer constant? */
/* Is the expression of run-time dims e non-negative by its form alone (dims, non-negative
 * constants, and sums, products, quotients, minimums and maximums of such, remainders by
 * a positive constant)? The printers of the model functions write a division or remainder
 * as C's and JavaScript's operators where its dividend is, and a form that rounds toward
 * minus infinity elsewhere (torch's `(8 - h % 8) % 8`, simplified to `(-(h % 8)) % 8`). */
int ir_dim_expr_nonneg(const Expr *e);
int ir_expr_uses_var(const Expr *e, const Var *v);
int ir_expr_has_reduce(const Expr *e);
/* Does e read memory (a load, a tensor access, a reduction over one)? */
int ir_expr_reads_memory(const Expr *e);
int ir_expr_uses_dims(const Expr *e);   /* reads a run-time dim's variable (Var.is_dim) */
/* The first subexpression of e, e itself first, then its operands left to right (a load's
 * or access's indices, a select's condition before its sides), for which match(x, ctx)
 * holds; NULL if none. */
Expr *ir_expr_find(Expr *e, int (*match)(const Expr *, const void *), const void *ctx);
/* Operations from e to its deepest leaf (a leaf is 1), index expressions included. */
int ir_expr_depth(const Expr *e);
/* An integer wrapped into the range of its type, as a store into it would. */
int64_t ir_wrap_int(int64_t v, DType t);

/* Substitution: replace each vars[i] by values[i]. */
Expr *ir_subst(Expr *e, Var **vars, Expr **values, int n);

void ir_print_expr(FILE *f, const Expr *e);

/* ---------------------------------------------------------------- tensors (tensor.c) */

typedef enum { IV_SPATIAL, IV_REDUCE } IterKind;

/* Loop annotations set by schedule primitives. */
typedef enum {
    ANN_NONE,
    ANN_UNROLL,
    ANN_VECTORIZE,
    ANN_PARALLEL,
    ANN_BIND,         /* GPU: bound to bind_tag ("blockIdx.x", "threadIdx.y", ...) */
    ANN_TENSORIZE     /* replaced by micro-kernel calls (tensorize; ir/tensorize.c) */
} Annotation;

/* What tensorize asked of a loop: the micro-kernel pattern its body must match. The
 * schedule primitive (schedule.c) makes it; ir/tensorize.c checks the lowered loop against
 * it and the C printer turns the loop into calls of templates/kgen_ukernels.h. */
enum {
    TZ_BCAST = 1,         /* fma_bcast: acc[j] += a * b[j], a broadcast */
    TZ_ELEM = 2           /* fma: acc[j] += a[j] * b[j] */
};
/* The widths W of the micro-kernels' fixed-width forms (kgen_fma_bcast_f32xW,
 * kgen_fma_f32xW), widest first: the widths tensorize cuts a loop into and the ones a
 * schedule may name. */
enum { IR_TZ_NWIDTHS = 5 };
extern const int ir_tz_widths[IR_TZ_NWIDTHS];
typedef struct {
    const char *name;     /* as written: "fma_bcast", "fma_bcast_f32x16", "fma" */
    int kinds;            /* the patterns the loop may match: TZ_BCAST, TZ_ELEM (kgen's own
                             requests: either) */
    int width;            /* micro-kernel width the loop is cut into; 0: the widest that fit */
    int lanes;            /* the loop's extent must be a multiple of it (the target's vector) */
    int soft;             /* kgen's own choice (-mattr): a loop that does not match stays an
                             ordinary vectorized loop instead of failing */
    const char *stage;    /* for messages: the stage and axis, the .kg position */
    const char *axis;
    const char *where;    /* "file.kg:12:5", or NULL */
} Tensorize;

/* An iteration axis. Root axes belong to a compute (spatial) or to a reduction; split and
 * fuse create derived ones. extent is known for root axes; for derived axes it is
 * recomputed by the lowering from the root extents in force (compute_at narrows them). */
struct IterVar {
    Var *var;
    int64_t extent;           /* a run-time dim's axis: its bound (the most iterations) */
    Expr *dyn;                /* a run-time dim's axis: its extent, an expression of IrDim
                                 variables (<= extent); NULL: extent itself */
    IterKind kind;
    Annotation ann;
    const char *bind_tag;
    const Tensorize *tensorize;   /* ANN_TENSORIZE */
    /* 0, or a hint for the default schedule: the body picks one of several expressions by
     * this axis' position within each group of unroll_mod (a select over the axis, or its
     * floor modulo; Winograd's transforms, ir/winograd.c). The schedule splits the axis by
     * unroll_mod and unrolls the position innermost, so that each copy folds to one
     * expression; a stage that inlines this one inherits it on the axis that indexes it. */
    int64_t unroll_mod;
};

IterVar *ir_itervar_new(const char *name, int64_t extent, IterKind kind);

typedef enum {
    T_PLACEHOLDER,  /* an input: name, dtype, shape */
    T_CONSTANT,     /* a tensor whose value is known when compiling: data (weights,
                       folded constants); printed as a static const array */
    T_COMPUTE,      /* axes[ndim] spatial axes; body (a top-level E_REDUCE is the stage's reduction) */
    T_SCAN          /* axes[0] is the time axis; init for t < init_steps, update for the rest;
                       update reads the tensor itself only at earlier time steps */
} TensorKind;

/* A source position for messages (frontends fill it; 0 = unknown). */
typedef struct {
    const char *file;
    int line, col;
} SrcPos;

/* A run-time If's branch (the ONNX importer): tensors needed only when the one element of
 * cond is nonzero (value 1) or zero (value 0), and up's condition holds too (nested Ifs). */
typedef struct IrGuard IrGuard;
struct IrGuard {
    const Tensor *cond;
    int value;
    const IrGuard *up;
};

/* A run-time loop (the ONNX importer: a Loop whose trip count or condition is known only
 * at run time). Its state is placeholders in the arena (Tensor.loop_state == the loop),
 * which the model function sets before the first iteration and copies the body's next
 * values into after each one: state[0] is the iteration number (int64, counts up from 0),
 * state[1] the condition (bool), state[2..) the carried values. Iterations run while
 * state[0] < the trip count and state[1] is nonzero. The tensors it names may be rebuilt
 * by later passes (the layout pass): the lowering finds them by name. */
#define IR_LOOP_MAX_STATES 34   /* a counter, a condition and 32 carried values */
typedef struct IrLoop IrLoop;
struct IrLoop {
    const char *name;         /* the node, for messages */
    const Tensor *trip;       /* int64, one element: the most iterations; NULL: trip_count */
    int64_t trip_count;       /* trip == NULL: the most iterations, or -1: no bound */
    int nstate;
    Tensor **state;           /* placeholders */
    const Tensor **init;      /* the states' values before the first iteration; init[0] is
                                 NULL (0), init[1] NULL when the loop has no condition (1) */
    const Tensor **next;      /* their values for the next iteration, tensors of the body;
                                 NULL: unchanged (next[0] is always NULL: counted up) */
};

struct Tensor {
    const char *name;
    TensorKind kind;
    DType dtype;
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    IterVar *axes[KG_MAX_DIMS];   /* compute and scan */
    Expr *body;                   /* compute */
    Expr *init, *update;          /* scan */
    int64_t init_steps;           /* scan */
    int is_output;
    int id;                       /* definition order within its program */
    SrcPos pos;
    const char *comment;          /* optional: e.g. the ONNX nodes a compute came from */
    const void *data;             /* T_CONSTANT: numel elements of dtype, little-endian;
                                     T_PLACEHOLDER: optional data to freeze it with when an
                                     operator needs its value at compile time */
    int frozen;                   /* a placeholder turned into a constant from its data */
    const IrGuard *guard;         /* NULL: needed whatever the input */
    const IrLoop *loop;           /* computed in every iteration of this run-time loop */
    const IrLoop *loop_state;     /* a placeholder: one of this loop's states */
    /* Dims decided at run time (--input-shape x=1,3,32..224,W): dyn[d] is dim d's extent,
     * an index expression of IrDim variables, and shape[d] its bound, the most it can be
     * (buffers are sized and strided for the bound); NULL: shape[d] itself. */
    Expr *dyn[KG_MAX_DIMS];
    /* A constant integer tensor whose values are extents decided at run time (what Shape
     * gives of a tensor with run-time dims, and Gather, Concat... of that): sym[i] is
     * element i's value, an index expression of dim variables (data holds the bound), or
     * NULL where data is the value. NULL: every value is in data. */
    Expr **sym;
    /* The axis that runs over the image's rows: a kernel's parallel loop divides it into
     * parts before anything else (sch_default_parallel), so that one kernel after another
     * gives each thread the same rows, still in its own cache. 0 (never the rows: axis 0
     * is the batch): by rank, axis 2 of a 5-D tensor (NCHWc), none for others (a 4-D one
     * may be NHWC: ConvNeXt's); -1: none. The ONNX importer marks the 4-D tensors of
     * Conv, ConvTranspose, pools and Resize (NCHW), the layout pass its conversions to
     * NCHW, Winograd its tiles. */
    int rows_axis;
};

/* Does constant t hold values decided at run time (Tensor.sym)? */
int ir_tensor_has_sym(const Tensor *t);

/* A dimension decided at run time: a variable of the generated entry points (an
 * int64_t extent argument, or read from a tensor's shape), in [lo, hi]. The program's
 * other run-time extents are expressions of these.
 * A dim computed from values (count != NULL: NonZero, Unique, Compress, NonMaxSuppression,
 * TopK of a run-time K) is not an argument: the model function reads it from the one
 * int64 element of count right after the kernel that computes it, checks it against
 * [lo, hi] (hi: the bound, the most the operator can give) and passes it to the kernels
 * after it; an output dim of it is returned (input and dim are -1). */
typedef struct {
    const char *name;      /* a C identifier: the --dim symbol, INPUT_dimD, or OUTPUT_dimD */
    Var *var;              /* DT_INDEX; its value in the kernels */
    int64_t lo, hi;
    int input, dim;        /* where an entry point reads it: graph input `input`, dim `dim` */
    const Tensor *count;   /* a dim computed from values: its int64 one-element tensor; the
                              lowering finds it by name (graph passes may rebuild it) */
} IrDim;

/* Dim d of t as an index expression: its run-time extent, or the constant shape. */
Expr *ir_tensor_dim(const Tensor *t, int d);
/* Has t a dim decided at run time? */
int ir_tensor_is_dynamic(const Tensor *t);
/* Is v one of the run-time dims' variables (of any program)? */
int ir_var_is_dim(const Var *v);

Tensor *ir_placeholder(const char *name, DType dtype, int ndim, const int64_t *shape);
/* A constant: the data is copied into the arena. */
Tensor *ir_constant(const char *name, DType dtype, int ndim, const int64_t *shape, const void *data);
/* axes: ndim fresh spatial axes whose extents equal the shape; body uses their vars. */
Tensor *ir_compute(const char *name, int ndim, IterVar **axes, Expr *body);
/* A scan is built in two steps, since init and update read the tensor itself. */
Tensor *ir_scan_begin(const char *name, DType dtype, int ndim, IterVar **axes);
int ir_scan_finish(Tensor *t, int64_t init_steps, Expr *init, Expr *update);

int64_t ir_tensor_numel(const Tensor *t);
/* A tensor with no computation of its own: a placeholder or a constant. */
int ir_tensor_is_leaf(const Tensor *t);
int ir_tensor_same_shape(const Tensor *a, const Tensor *b);   /* rank and extents */

/* A program: tensors in definition order (every tensor after the ones it reads). */
typedef struct {
    const char *name;
    PtrVec tensors;              /* Tensor* */
    PtrVec dims;                 /* IrDim*: the dims decided at run time, in argument order */
    /* conditions on the run-time dims every entry point checks before it runs (derived
     * constraints: two branches of an Add whose extents must agree), each with a message */
    PtrVec checks;               /* Expr* (bool) */
    PtrVec check_msgs;           /* const char* */
} Program;

/* A run-time dim named name in [lo, hi], appended to p->dims (its variable is fresh). */
IrDim *ir_program_add_dim(Program *p, const char *name, int64_t lo, int64_t hi, int input, int dim);
/* A dim computed from values by count (an int64 tensor of one element, in p), in [lo, hi],
 * named after name (made unique among p's dims). */
IrDim *ir_program_add_value_dim(Program *p, const char *name, int64_t lo, int64_t hi, const Tensor *count);
/* A condition the entry points check (cond a bool expression of dim variables). */
void ir_program_add_check(Program *p, Expr *cond, const char *msg);
/* dyn.c: the run-time extents of compute t's axes from the run-time dims it reads each as
 * a whole, position for position (its IterVar.dyn and Tensor.dyn; extents that must agree
 * become checks of p). strict: any other read of a run-time dim, or a fixed dim other than
 * 1 read by an axis of run-time extent, fails with ir_fail() (an operator that does not
 * handle run-time dims); lenient: the operator set the rest itself. 0, or -1. */
int ir_dyn_infer(Program *p, Tensor *t, int strict);
/* e, an expression of p's run-time dims, at the dims' values (values[i]: p->dims item i):
 * 1 with *out when it folds to a constant, else 0 */
int ir_dims_fold(const Program *p, const int64_t *values, const Expr *e, int64_t *out);
/* Bounds of index expression e of p's run-time dims over their ranges: exactly its least
 * and largest values where the combinations of the dims it uses are few (4096 at most:
 * `T + 1 - T / 3` is at most 33 for T in [2, 48], not 49), else as ir_const_bounds gives
 * them. 1, or 0 when e has no bound. */
int ir_dims_bounds(const Program *p, const Expr *e, int64_t *lo, int64_t *hi);

Program *ir_program_new(const char *name);
int ir_program_add(Program *p, Tensor *t);        /* fails on a duplicate name */
/* Tensor ids follow positions again after tensors were removed or shared. */
void ir_program_renumber(Program *p);
Tensor *ir_program_find(Program *p, const char *name);
/* Check the whole program: accesses have the right rank and constant-in-range or
 * affine indices, every read tensor is defined, outputs exist. */
int ir_program_verify(Program *p);
void ir_print_program(FILE *f, Program *p);
/* Does tensor r (a compute or scan) read tensor t? */
int ir_tensor_reads(const Tensor *r, const Tensor *t);
/* Collect the distinct tensors that e reads, in first-read order. */
void ir_expr_tensors(const Expr *e, PtrVec *out);

/* ---------------------------------------------------------------- loop IR (stmt.c) */

typedef enum {
    SCOPE_PARAM,       /* a kernel argument (input or output) */
    SCOPE_WORKSPACE,   /* an intermediate in the caller's workspace, at ws_offset */
    SCOPE_LOCAL,       /* a per-thread array allocated in the kernel (stack/registers) */
    SCOPE_SHARED       /* GPU shared / OpenCL local / Metal threadgroup memory */
} Scope;

/* A flat buffer: element (i0..in) is at sum(i_k * strides[k]). */
struct Buffer {
    const char *name;
    DType dtype;
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    int64_t strides[KG_MAX_DIMS];
    int64_t size;          /* elements allocated (>= the extent covered by the strides) */
    Scope scope;
    int64_t ws_offset;     /* SCOPE_WORKSPACE: byte offset in the workspace */
    int is_input;          /* SCOPE_PARAM: read only */
    const Tensor *constant;/* SCOPE_PARAM: the constant tensor it holds (weights), or NULL */
    /* SCOPE_PARAM of a run-time dim (a graph input or output): dyn[d] is dim d's run-time
     * extent and the buffer is compact for the run-time extents (the strides above are the
     * bound's and unused); NULL everywhere for the others, which keep the bound's strides */
    Expr *dyn[KG_MAX_DIMS];
    /* SCOPE_WORKSPACE of a run-time dim (an intermediate): dim d's run-time extent, or NULL
     * for a fixed dim; the buffer is compact for the run-time extents, as a parameter with
     * dyn is (strides and size above are the bound's: what the arena plan reserves). NULL
     * everywhere: the bound's strides for every run (a fixed shape, a packed type, a padded
     * stride, an extent computed from values) */
    Expr *run_ext[KG_MAX_DIMS];
};
/* b's run-time extents (dyn, or else run_ext), or NULL when b keeps the bound's strides. */
Expr *const *ir_buffer_run_ext(const Buffer *b);
/* Stride of dim d of b as an index expression (a run-time one for a buffer with dyn or
 * run_ext: the product of the run-time extents after d). */
Expr *ir_buffer_stride(const Buffer *b, int d);

Buffer *ir_buffer_new(const char *name, DType dtype, int ndim, const int64_t *shape, Scope scope);

typedef enum {
    FOR_SERIAL,
    FOR_PARALLEL,     /* iterations may run on different threads */
    FOR_VECTORIZED,   /* constant extent, SIMD-friendly */
    FOR_UNROLLED,     /* kept for the record: the lowering replicates the body */
    FOR_BOUND,        /* GPU: bound to a thread index (bind_tag); no loop is printed */
    FOR_TENSORIZED    /* constant extent; its body matches loop.tensorize's pattern, and
                         the C printer calls the micro-kernel (elsewhere: a plain loop) */
} ForKind;

/* The largest unrolled and vectorized (tensorized) loop extents: the lowering refuses
 * more, a guard against code explosion (the schedule's SCH_MAX_UNROLL, SCH_MAX_VECTOR). */
#define IR_MAX_UNROLL 64
#define IR_MAX_VECTOR 64

/* S_BARRIER: GPU: every thread of the block waits here until all arrive and their shared
 * memory writes are visible (a no-op where loops run one after another).
 * S_PREFETCH: a hint that buf[index] will be read soon (C: KGEN_PREFETCH, a cache-line
 * prefetch where the compiler has one; other targets print nothing). It reads nothing and
 * changes nothing, so an index past the buffer would be harmless to the machine, but the
 * schedule keeps it in range (C forbids forming such an address). */
typedef enum { S_FOR, S_LET, S_IF, S_STORE, S_ALLOC, S_SEQ, S_COMMENT, S_BARRIER, S_PREFETCH } StmtKind;

typedef struct Stmt Stmt;
struct Stmt {
    StmtKind kind;
    union {
        struct {
            Var *var;
            Expr *min, *extent;
            ForKind kind;
            const char *bind_tag;          /* FOR_BOUND */
            const Tensorize *tensorize;    /* FOR_TENSORIZED (kept by every pass that copies
                                              a loop, as bind_tag is) */
            Stmt *body;
        } loop;
        struct { Var *var; Expr *value; Stmt *body; } let;
        struct {
            Expr *cond;
            Stmt *then, *els;      /* els may be NULL */
            int likely;            /* the condition usually holds (a hint for C compilers) */
        } cond;
        struct { Buffer *buf; Expr *index; Expr *value; } store;   /* S_PREFETCH: value NULL */
        struct { Buffer *buf; Stmt *body; } alloc;
        struct { Stmt **items; int n; } seq;
        const char *comment;
    } u;
};

Stmt *ir_for(Var *v, Expr *min, Expr *extent, ForKind kind, Stmt *body);
Stmt *ir_let(Var *v, Expr *value, Stmt *body);
Stmt *ir_if(Expr *cond, Stmt *then, Stmt *els);
/* An if rebuilt from the if `from` (a pass's copy): ir_if, keeping from's hints. */
Stmt *ir_if_like(const Stmt *from, Expr *cond, Stmt *then, Stmt *els);
/* A loop rebuilt from the loop `from` over [min, min + extent): from's variable, kind and
 * annotations (bind_tag, tensorize). */
Stmt *ir_for_like(const Stmt *from, Expr *min, Expr *extent, Stmt *body);
Stmt *ir_store(Buffer *b, Expr *index, Expr *value);
Stmt *ir_allocate(Buffer *b, Stmt *body);
Stmt *ir_seq(Stmt **items, int n);              /* flattens nested seqs, drops NULLs */
Stmt *ir_seq2(Stmt *a, Stmt *b);
Stmt *ir_comment(const char *text);
Stmt *ir_barrier(void);
Stmt *ir_prefetch(Buffer *b, Expr *index);
Stmt *ir_stmt_subst(Stmt *s, Var **vars, Expr **values, int n);
/* Does s store into buffer b? */
int ir_stmt_stores(const Stmt *s, const Buffer *b);
/* Does s hold a GPU barrier (S_BARRIER) anywhere? */
int ir_stmt_has_barrier(const Stmt *s);
/* Does s read variable v anywhere (bounds, conditions, indices, values)? */
int ir_stmt_uses_var(const Stmt *s, const Var *v);

void ir_print_stmt(FILE *f, const Stmt *s, int indent);

/* map.c: rebuilding a tree through a callback, for passes that rewrite the nodes they match
 * and leave the rest as it was. Each returns its argument itself when no callback changed
 * anything, else a copy built by the constructors above (ir_for_like, ir_if_like, ...).
 *   ir_expr_map  e with f(x, ctx) in place of each operand x directly inside it (a load's
 *                and an access's indices, a reduction's body; operands left to right, a
 *                select's condition first)
 *   ir_stmt_map  s with fs(x, ctx) in place of each statement x directly inside it (a loop's
 *                body, a let's, an if's sides but a missing else, an allocation's body, a
 *                sequence's items) and, when fe is not NULL, fe(x, ctx) in place of each
 *                expression x directly in it (a loop's bounds, a let's value, an if's
 *                condition, a store's index and value, a prefetch's index), expressions
 *                first; a NULL fs leaves the statements inside as they are */
Expr *ir_expr_map(Expr *e, Expr *(*f)(Expr *, void *), void *ctx);
Stmt *ir_stmt_map(Stmt *s, Stmt *(*fs)(Stmt *, void *), Expr *(*fe)(Expr *, void *), void *ctx);

#define IR_MAX_GUARDS 8   /* nested run-time Ifs whose branches a kernel skips */

/* A lowered kernel: one function. */
typedef struct {
    const char *name;
    PtrVec params;              /* Buffer*: inputs in program order, then outputs */
    PtrVec locals;              /* Buffer*: workspace and local buffers, for the record */
    int64_t workspace_bytes;
    Stmt *body;
    PtrVec notes;               /* char*: header comment lines (schedule, fused nodes) */
    int internal;               /* one step of a model: a static function returning nothing,
                                   without workspace; a parameter is const unless stored */
    int team;                   /* a model step run by the model function's team of threads
                                   (emit/model.c): its parallel loop shares its iterations
                                   among the team's threads (KGEN_TEAM_FOR) */
    /* a model step the model function runs only when, for each i (outermost first),
     * element 0 of guard_buf[i] is nonzero == guard_value[i] (a run-time If's branch;
     * skipping it is an optimization: its results are read only where it ran) */
    int nguards;
    const Buffer *guard_buf[IR_MAX_GUARDS];
    int guard_value[IR_MAX_GUARDS];
    PtrVec dims;                /* Var*: the run-time dims the body reads, scalar parameters
                                   after the buffers (in the program's dim order) */
    /* a model step's versions for smaller run-time extents (gen/driver.c): the C model
     * function runs variants.items[i] (Kernel*, the same parameters) where when.items[i]
     * (Expr*, a condition on the run-time dims) holds, the first that does, else this one */
    PtrVec variants, when;
} Kernel;

void ir_print_kernel(FILE *f, const Kernel *k);

/* ---------------------------------------------------------------- tensorize.c */

/* The loops of s annotated FOR_TENSORIZED, checked against their pattern (run by the
 * lowering after the last simplification, with the loops' ranges known): a loop whose body
 * is the update acc[i0 + j] = acc[i0 + j] + a * b[b0 + j] (a not depending on j; TZ_BCAST)
 * or acc[i0 + j] + a[a0 + j] * b[b0 + j] (TZ_ELEM, a[...] possibly under a zero-padding
 * select whose condition does not depend on j) stays tensorized; guards and zero-padding selects in j are versioned out (the micro-kernel runs
 * where they hold for every j, the loop as it was elsewhere). A loop that does not match
 * fails with ir_fail() naming the stage and loop, or, for a soft request, becomes a
 * vectorized loop. Replaces *s; 0, or -1 on failure. */
int ir_tensorize(Stmt **s);
/* Can a loop of ext iterations be cut into t's micro-kernels? 0, or -1 with ir_fail(). */
int ir_tensorize_extent(const Tensorize *t, int64_t ext);
/* Split the condition c into its conjuncts (appended to out); 0 if one that uses j is not
 * a comparison (<, <=, >, >=) of index forms affine in j, or one reads memory. Then c holds
 * for every j of an interval exactly when it holds at both ends (the versioning of
 * tensorized loops and of the unswitch pass). */
int ir_affine_conjuncts(Expr *c, Var *j, PtrVec *out);

/* A tensorized loop as calls: for each chunk k, over `width[k]` elements,
 *     kgen_fma_bcast_f32xW(&acc[acc_index + off_k], scalar, &b[b_index + off_k])
 * or (elem) kgen_fma_f32xW(&acc[acc_index + off_k], A, &b[b_index + off_k]), A the address
 * &a[a_index + off_k], or where a_cond is set (zero padding around a depthwise conv's
 * window: a condition the loop does not change), a_cond ? that address : kgen_zero_f32(). */
#define IR_TZ_MAX_CHUNKS 16
typedef struct {
    Buffer *acc, *b;
    Expr *acc_index, *b_index;    /* of element 0 */
    Expr *scalar;
    int elem;
    Buffer *a;
    Expr *a_index, *a_cond;
    int nchunks;
    int width[IR_TZ_MAX_CHUNKS];  /* 4, 8, 16, 32 or 64 */
} IrTzCall;
/* The calls of a FOR_TENSORIZED loop (after ir_tensorize): 1, or 0 if its body is not
 * the plain update (then it is printed as a loop). */
int ir_tensorize_match(const Stmt *loop, IrTzCall *out);

/* ---------------------------------------------------------------- interp.c */

/* Run a kernel on the host (constant folding, tests): params[i] points to the data of
 * k->params[i] (constants included), workspace to k->workspace_bytes bytes. Float math
 * is done in the element type (f32 in float, f16 through float). Returns 0, or -1 with
 * ir_fail() (an out-of-bounds access, a division by zero). */
int ir_interp(const Kernel *k, void **params, void *workspace);

/* ---------------------------------------------------------------- simplify.c */

/* Known ranges of integer variables: [lo, hi] inclusive. */
typedef struct {
    Var *var;
    int64_t lo, hi;
} VarRange;

typedef struct {
    VarRange *items;
    int n, cap;
} RangeMap;

void ir_range_push(RangeMap *m, Var *v, int64_t lo, int64_t hi);
void ir_range_pop(RangeMap *m);
/* Bounds of an integer expression under m; returns 0 if unbounded. */
int ir_const_bounds(const Expr *e, const RangeMap *m, int64_t *lo, int64_t *hi);

/* Constant folding, canonical affine forms, div/mod rules using variable ranges,
 * min/max and comparison folding when the ranges decide them. */
Expr *ir_simplify(Expr *e, const RangeMap *m);
/* The same over statements: loop ranges are pushed while their bodies are simplified,
 * unit loops vanish, constant conditions are decided, empty loops removed. */
Stmt *ir_simplify_stmt(Stmt *s);

/* Symbolic interval of an index expression when the variables in `inner` range over
 * [0, extent) and the others stay fixed. Returns 0 when the expression is not affine in
 * the inner variables. */
int ir_affine_interval(Expr *e, Var **inner, const int64_t *extents, int ninner, const RangeMap *m,
                       Expr **lo, Expr **hi);

/* Is the integer index e, simplified under m, affine in plain variables: a constant plus
 * constant multiples of variables, with no division, modulo, min, max, select, cast or
 * tensor read left in it? Then coefs[i] is the coefficient of vars[i] (0 when e does not
 * use it; other variables may appear) and 1 is returned; else 0. */
int ir_index_affine(Expr *e, const RangeMap *m, Var *const *vars, int nvars, int64_t *coefs);

/* Linear form helpers used by the simplifier and the bound inference. */
Expr *ir_add(Expr *a, Expr *b);   /* simplifying + on indices */
Expr *ir_mul(Expr *a, Expr *b);
Expr *ir_sub(Expr *a, Expr *b);

/* ---------------------------------------------------------------- dyn.c: products of extents */

/* A product of extents: coef times atoms, simplified index expressions of the run-time dims
 * that are not products themselves, in any order: H * W and W * H, 2 * (H * W) and (2 * H)
 * * W are one product. Element counts over run-time dims compare and divide as these (a
 * Reshape's view, its -1). ok is 0 where a factor could not be taken (too many, a negative
 * or too large constant): such a product equals and divides nothing. */
#define IR_MAX_FACTORS 32
typedef struct {
    int64_t coef;
    int n, ok;
    Expr *atom[IR_MAX_FACTORS];
} IrProd;

IrProd ir_prod_one(void);
void ir_prod_mul(IrProd *p, Expr *e);                              /* *p times e */
/* a / b exactly (each atom of b cancels one of a, the constants divide): 1 with *q, or 0 */
int ir_prod_div(const IrProd *a, const IrProd *b, IrProd *q);
int ir_prod_equal(const IrProd *a, const IrProd *b);
Expr *ir_prod_expr(const IrProd *p);                               /* as an index expression */
/* Is index e of compute t below a product of extents at every run, wherever t's spatial axes
 * run to their run-time extents (the other variables in m's ranges)? 1 with *below, e in
 * [0, *below); else 0. An operator that takes a run-time product apart builds such indices
 * (Reshape: m / W of a merged axis m < H * W, a flat h * W + w), which intervals over the
 * bounds do not follow: ir_program_verify asks this where they fail. */
int ir_dyn_index_below(const Tensor *t, const Expr *e, const RangeMap *m, IrProd *below);

#endif
