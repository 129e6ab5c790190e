/* emit.h - printers from the loop IR to target source, and the files around them.
 *
 * One C-family printer (cprint.c) serves C, CUDA, OpenCL and Metal through a Dialect
 * table of differences (dialect.c); a NULL entry means plain C. JavaScript has its own
 * printer over the same loop IR (jsprint.c). Both stand on printer.c (printer.h): the
 * statement walk with a hook per statement kind, scopes of names, identifiers, comment
 * text. A GPU kernel's launches come from the gpu-launch pass (lower/launch.c), run
 * before it is printed.
 */
#ifndef KGEN_EMIT_H
#define KGEN_EMIT_H

#include "../ir/ir.h"
#include "../lower/lower.h"
#include "target.h"

/* A math function spelled differently from the base spelling (em_math_name). */
typedef struct {
    MathFn fn;
    const char *name;
} EmMathName;

typedef struct {
    const char *name;               /* "c", "cuda", "opencl", "metal" */
    const char *kernel_prefix;      /* before the return type of a kernel; NULL: none */
    const char *restrict_kw;        /* "restrict" in C99 */
    const char *global_qual;        /* address space of parameter pointers; NULL: none */
    const char *local_qual;         /* of SCOPE_SHARED arrays */
    const char *barrier;            /* statement for a work-group barrier */
    const char *prefetch;           /* macro taking an element's address: a cache-line
                                       prefetch (NULL: prefetch hints are not printed) */
    /* math spelling (em_math_name): C's double library ("exp", "fabs", "rint", kgen_
     * helpers for rsqrt and sigmoid), with "f" appended for f32 when f32_suffix is set,
     * then these overrides, each list ending at a NULL name */
    int f32_suffix;
    const EmMathName *f32_math;
    const EmMathName *f64_math;
    const char *fmod_f32;           /* float remainder (C: fmodf) */
    int has_openmp;                 /* print FOR_PARALLEL as an OpenMP pragma */
    /* GPU dialects */
    const char *block_index;        /* printf format of a block index, %c is x, y or z
                                       ("blockIdx.%c") or %d is 0, 1 or 2 ("get_group_id(%d)") */
    const char *thread_index;       /* the same for the thread index inside its block */
    const char *launch_bounds;      /* after kernel_prefix, %lld threads per block; NULL: none */
    const char *buffer_attr;        /* after each buffer parameter, %d its index; NULL: none */
    const char *scalar_param;       /* a run-time dim's parameter, %s its type then its name (then
                                       buffer_attr with the next index); NULL: "TYPE NAME" */
    const char *index_params;       /* extra parameters that carry the indices; NULL: none */
    const char *workspace_type;     /* element type of the workspace parameter (C: void) */
    int no_f64;                     /* the language has no double */
} Dialect;

extern const Dialect em_dialect_c;
extern const Dialect em_dialect_cuda;
extern const Dialect em_dialect_opencl;
extern const Dialect em_dialect_metal;
const Dialect *em_dialect_for(TargetKind k);    /* NULL for targets the printer does not serve */
/* fn's name for type t (DT_F64, else f32) in dialect d: static, or written into buf. */
const char *em_math_name(const Dialect *d, MathFn fn, DType t, char *buf, size_t n);

/* One launch of a GPU kernel: a function with its grid. A kernel prints as one launch per
 * top-level loop nest of its body (each runs after the previous one finished), as the
 * gpu-launch pass (lower/launch.h) plans them. */
typedef struct {
    char *name;                     /* the function name */
    int64_t grid[3];                /* blocks in x, y, z (the bound's where dgrid is set) */
    int64_t block[3];               /* threads per block in x, y, z */
    int64_t shared_bytes;           /* shared (local, threadgroup) memory per block */
    const Expr *dgrid[3];           /* a grid decided at run time: an index Expr of dims, or NULL */
} EmLaunch;

/* Print kernel k for a GPU dialect: one function per launch. Returns the number of
 * launches (*launches: malloc'd, free with em_free_launches), or -1 with ir_fail() when
 * the kernel cannot run on the target as scheduled (a bound loop that does not start at
 * 0, a thread count or shared memory above the target's limits, a barrier under a branch
 * that threads take differently). */
int em_print_gpu_kernel(StrBuf *out, const Kernel *k, const Dialect *d, const Target *t, EmLaunch **launches);
void em_free_launches(EmLaunch *l, int n);

/* Print one kernel as a function definition (with its header comment). */
void em_print_kernel(StrBuf *out, const Kernel *k, const Dialect *d);
/* Print the prototype (no trailing semicolon) of a kernel. */
void em_print_prototype(StrBuf *out, const Kernel *k, const Dialect *d);

/* A generated file held in memory until the whole output is ready. */
typedef struct {
    const char *name;      /* file name inside the output directory */
    StrBuf text;
} OutFile;

typedef struct {
    OutFile files[32];
    int n;
} OutSet;

StrBuf *em_outset_add(OutSet *o, const char *name);
/* The base name of a kernel's files: name, else the kernel's own; NULL with ir_fail() when
 * it cannot name a file (empty, a leading '.', a path separator, a quote or a newline). */
const char *em_file_base(const Kernel *k, const char *name);
/* Write every file into dir (created if missing) through temporary names and renames;
 * on failure nothing new is left behind. Returns 0 or -1 with ir_fail(). */
int em_outset_write(OutSet *o, const char *dir);
void em_outset_free(OutSet *o);

/* Built-in copies of templates/ (generated from the files at build time). */
const char *em_template(const char *name);    /* "kgen_runtime.h"; NULL if unknown */
/* Append template `name` to o with each {{KEY}} replaced by its value; vars holds KEY,
 * VALUE pairs and ends with NULL. 0, or -1 with ir_fail() for a missing template or a
 * placeholder vars does not name. */
int em_template_fill(StrBuf *o, const char *name, const char *const *vars);
int em_fill(StrBuf *o, const char *text, const char *name, const char *const *vars);   /* the same for text */

/* The C target for one kernel: NAME.c, NAME.h and kgen_runtime.h. `source` names the
 * input (for the header comment). */
int em_c_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source);

/* ---------------------------------------------------------------- model.c */

/* How the C target links a model's constants (--weights). */
enum {
    EM_WEIGHTS_AUTO = 0,     /* C arrays up to EM_WEIGHTS_INCBIN_BYTES, .incbin above (default) */
    EM_WEIGHTS_FILE = 1,     /* NAME_weights.bin, loaded by the caller (NAME_set_weights) */
    EM_WEIGHTS_EMBED = 2,    /* C arrays in NAME_weights.c, whatever their size */
    EM_WEIGHTS_INCBIN = 3,   /* NAME_weights.bin, pulled into the program by NAME_weights.S */
};
/* Above this many bytes of weights, --weights=auto links them with .incbin: their hex C
 * arrays are 4.2 times as big, and gcc -O2 needs 70 to 80 times their size in memory
 * (8 MB: 10 s and 560 MB; 16 MB: 38 s and 1.3 GB; a ViT-B/16's 330 MB: a 1.46 GB
 * NAME_weights.c, 3 minutes and 10 GB), while .incbin assembles at disk speed. */
#define EM_WEIGHTS_INCBIN_BYTES ((int64_t)8 << 20)

/* One input or output of a model as the outside sees it. */
typedef struct {
    const char *name;          /* ONNX name */
    const Buffer *buf;         /* the model's parameter buffer */
    int graph_index;           /* position among the graph's inputs (outputs) */
} EmValue;

typedef struct {
    const Model *model;
    const char *name;          /* C prefix of every symbol and file */
    const char *source;        /* for the banner: the model's file name */
    const EmValue *inputs;     /* in signature order; frozen inputs are absent */
    int ninputs;
    const EmValue *outputs;
    int noutputs;
    int with_main;             /* --main: NAME_main.c, kgen_io.h, kgen_main.h, Makefile */
    int weights_in_file;       /* --weights: an EM_WEIGHTS_* mode (the name is older than the
                                  modes; em_model_files hands the targets other than C only
                                  0 or EM_WEIGHTS_FILE) */
    PtrVec notes;              /* char*: lines for the header comment of NAME.c */
    int weight_table;          /* embedded weights reached through NAME_weight_table, an array
                                  of their addresses in NAME_weights.c, not by their symbols
                                  (wasm: see wasm_model_files) */
    const Target *target;      /* NULL: C; a GPU target: host glue over device memory */
    const char *cflags;        /* the runner Makefile's default CFLAGS (target_c_cflags); NULL: -O2 */
} EmModel;

/* The C target for a model: NAME.h, NAME.c (kernels and the model function),
 * the constants (NAME_weights.c; NAME_weights.bin and NAME_weights.S for .incbin;
 * NAME_weights.bin alone for --weights=file), kgen_runtime.h, and with with_main the
 * runner. */
int em_c_model_files(OutSet *o, const EmModel *m);

/* ---------------------------------------------------------------- gpu.c */

/* The CUDA, OpenCL or Metal target for one kernel: the device source, host glue with the
 * C target's entry points over host arrays (NAME and NAME_tensors), NAME.h and the
 * runtime headers. */
int em_gpu_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t);
/* The same for a model (m->target is the GPU target). */
int em_gpu_model_files(OutSet *o, const EmModel *m);

/* ---------------------------------------------------------------- jsmodel.c */

/* The JavaScript target (an ES module per kernel or model) and, for models, the WebAssembly
 * one (the C files, an emcc Makefile and a JS loader with the same API). */
int em_js_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t);
int em_js_model_files(OutSet *o, const EmModel *m, const Target *t);

/* ---------------------------------------------------------------- webgpu.c */

/* The WebGPU target: NAME.wgsl (the compute shaders, wgslprint.c) and NAME.mjs, an ES module
 * with the JS target's API over templates/kgen_webgpu.mjs (init(), async run(inputs)); with
 * --main the node runner. */
int em_webgpu_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t);
int em_webgpu_model_files(OutSet *o, const EmModel *m);

/* ---------------------------------------------------------------- target.c */

/* Dispatch on the target: the kernel or model files for it. */
int em_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t);
int em_model_files(OutSet *o, const EmModel *m, const Target *t);

#endif
