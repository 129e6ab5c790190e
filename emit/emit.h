/* emit.h - printers from the loop IR to target source, and the files around them.
 *
 * One C-family printer (cprint.c) serves C, CUDA, OpenCL and Metal through a Dialect
 * table of differences; a NULL entry means plain C. JavaScript gets its own printer over
 * the same loop IR (later).
 */
#ifndef KGEN_EMIT_H
#define KGEN_EMIT_H

#include "../ir/ir.h"

typedef struct {
    const char *name;               /* "c", "cuda", "opencl", "metal" */
    const char *kernel_prefix;      /* before the return type of a kernel; NULL: none */
    const char *restrict_kw;        /* "restrict" in C99 */
    const char *global_qual;        /* address space of parameter pointers; NULL: none */
    const char *local_qual;         /* of SCOPE_SHARED arrays */
    const char *barrier;            /* statement for a work-group barrier */
    /* math spelling per function for f32; NULL entries fall back to the C name + "f" */
    const char *const *f32_math;
    int has_openmp;                 /* print FOR_PARALLEL as an OpenMP pragma */
} Dialect;

extern const Dialect em_dialect_c;

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
/* Write every file into dir (created if missing) through temporary names and renames;
 * on failure nothing new is left behind. Returns 0 or -1 with ir_fail(). */
int em_outset_write(OutSet *o, const char *dir);
void em_outset_free(OutSet *o);

/* Built-in copies of templates/ (generated from the files at build time). */
const char *em_template(const char *name);    /* "kgen_runtime.h"; NULL if unknown */

/* The C target for one kernel: NAME.c, NAME.h and kgen_runtime.h. `source` names the
 * input (for the header comment). */
int em_c_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source);

/* ---------------------------------------------------------------- model.c */

/* One input or output of a model as the outside sees it. */
typedef struct {
    const char *name;          /* ONNX name */
    const Buffer *buf;         /* the model's parameter buffer */
    int graph_index;           /* position among the graph's inputs (outputs) */
} EmValue;

typedef struct {
    const void *model;         /* Model* (schedule/schedule.h) */
    const char *name;          /* C prefix of every symbol and file */
    const char *source;        /* for the banner: the model's file name */
    const EmValue *inputs;     /* in signature order; frozen inputs are absent */
    int ninputs;
    const EmValue *outputs;
    int noutputs;
    int with_main;             /* --main: NAME_main.c, kgen_io.h, kgen_main.h, Makefile */
    int weights_in_file;       /* --weights=file: NAME_weights.bin, loaded by the caller */
    PtrVec notes;              /* char*: lines for the header comment of NAME.c */
} EmModel;

/* The C target for a model: NAME.h, NAME.c (kernels and the model function),
 * NAME_weights.c (constants), kgen_runtime.h, and with with_main the runner. */
int em_c_model_files(OutSet *o, const EmModel *m);

#endif
