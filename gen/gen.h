/* gen.h - the kgen driver (driver.c: one pipeline, frontend -> graph passes -> schedule
 * -> lower -> emit) and its frontends: the .kg tensor-expression language (kg.c,
 * kg_expr.c, kg_sched.c) and ONNX (onnx_front.c over the reader and importer in onnx/). */
#ifndef KGEN_GEN_H
#define KGEN_GEN_H

#include "../ir/ir.h"
#include "../ir/pass.h"
#include "../lower/lower.h"
#include "../schedule/schedule.h"
#include "../emit/emit.h"
#include "../emit/target.h"
#include "../onnx/import.h"

/* ---------------------------------------------------------------- lex.c */

typedef enum {
    GT_EOF,       /* placed just after the last token */
    GT_NEWLINE,   /* ends a line (none after an operator: continues()), placed after its last token */
    GT_NAME,
    GT_INT,       /* ival */
    GT_FLOAT,     /* fval */
    GT_PUNCT      /* an operator or punctuator: text s[0..len) */
} GenTokKind;

typedef struct {
    GenTokKind kind;
    const char *s;     /* the token's text inside the source, not NUL-terminated */
    int len;
    int line, col;     /* 1-based; col counts bytes */
    union {
        int64_t ival;  /* GT_INT */
        double fval;   /* GT_FLOAT */
    };
} GenTok;

#define GEN_MAX_NAME 255          /* bytes in a name or a number */
#define GEN_MAX_SOURCE (256 << 20) /* bytes in a .kg source */
#define GEN_MAX_TOKENS (4 << 20)  /* tokens in a .kg source */

/* Tokenize text into a heap array (free() it) that ends with a GT_EOF token.
 * 0, or -1 with the message in ir_errmsg(). */
int gen_lex(const char *path, const char *text, GenTok **toks, int *ntoks);
/* Set "path:line:col: error: MESSAGE", the source line and a caret line under col with
 * ir_fail(); line 0 gives "path: error: MESSAGE". Returns -1. */
int gen_src_error(const char *path, const char *text, int line, int col, const char *fmt, ...);

/* ---------------------------------------------------------------- kg.c (with kg_expr.c, kg_sched.c) */

/* -DNAME=VALUE on the command line: overrides a `param` of the .kg file. */
typedef struct {
    const char *name;
    int64_t value;
    int used;          /* set by the parser when a param took it */
} Define;

/* `tune NAME in {V, ...}` in a .kg file: values `kgen tune` may give the param NAME. */
#define GEN_MAX_TUNE_VALUES 64
typedef struct {
    const char *name;
    int64_t value;             /* the param's value without tuning (the file's, or -D's) */
    int n;
    int64_t values[GEN_MAX_TUNE_VALUES];
} GenTunable;

typedef struct {
    Program *prog;
    Schedule *sched;           /* the schedule after the target's section was applied */
    const char *kernel_name;   /* from `kernel NAME`, else NULL */
    int scheduled;             /* a schedule section for the target was found and applied */
    int default_gpu;           /* set by the driver: kgen's default GPU schedule was applied */
    PtrVec schedule_lines;     /* char*: the schedule statements applied, as written */
    PtrVec tunables;           /* GenTunable*: the file's `tune` lines */
} KgModule;

/* Parse the .kg source `text` (read from `path`, used in messages), build its program,
 * create its schedule and apply the `schedule TARGET { ... }` section whose name equals
 * `target` (target NULL or "none": no section is applied). On error returns -1 and
 * ir_errmsg() holds "path:line:col: error: message", then the source line and a caret
 * line under the problem. */
int gen_parse_kg(const char *path, const char *text, Define *defs, int ndefs, const char *target,
                 KgModule *out);

/* ---------------------------------------------------------------- graph passes */

#define GEN_MAX_SHAPE_ARGS 64   /* of each: --input-shape, --dim, --bind */
#define GEN_MAX_FOLD_ELEMS ((int64_t)1 << 24)   /* largest tensor folded at compile time */

/* ---------------------------------------------------------------- check.c */

/* Run an ONNX node-test directory (model.onnx, test_data_set_0/input_N.pb and
 * output_N.pb) through the importer and the loop-IR interpreter, and compare with the
 * expected outputs (rtol 1e-3, atol 1e-5; integers exactly). Returns 0 on a match, 1 on
 * a mismatch (described in ir_errmsg()), -1 when the model cannot be compiled. */
int gen_check_onnx_dir(const char *dir);
/* The same run, writing the interpreter's outputs as DIR/test_data_set_0/output_N.pb
 * (raw_data TensorProtos named after the graph outputs). Returns 0, 1 when an output
 * cannot be written, -1 when the model cannot be compiled (ir_errmsg() says why). */
int gen_interp_write_dir(const char *dir);

/* ---------------------------------------------------------------- api.c, driver.c */

/* Limits on what kgen reads (README, "Limits"). The first three are defaults that
 * GenOptions may change (--max-file-mb, --max-elements; --max-nodes is onnx/onnx.h's
 * ONNX_MAX_NODES); the ONNX reader's own are in onnx/onnx.h, the .kg parser's in kg_parse.h
 * and lex.c. */
#define GEN_MAX_FILE_BYTES ((int64_t)1 << 31)  /* a model, .kg source or bound input file (2 GiB) */
#define GEN_MAX_ELEMS ((int64_t)INT32_MAX)      /* elements of one tensor, and the ceiling of
                                                  --max-elements: generated code indexes with int32 */
#define GEN_MAX_DEFINES 256

/* GenOptions.layout_block values besides the block sizes 8 and 16 */
enum { GEN_LAYOUT_AUTO = IR_LAYOUT_AUTO, GEN_LAYOUT_NCHW = IR_LAYOUT_NCHW };

typedef struct {
    const char *input;          /* the .kg file or ONNX model */
    const char *target;         /* the target's name ("c", "cuda", ...): picks the .kg schedule section */
    Target tgt;                 /* the parsed target with its attributes */
    int gpu_schedule;           /* --schedule=gpu: the default GPU schedule for a C target (its
                                   bound loops run as plain loops: a CPU check of GPU schedules) */
    const char *outdir;         /* NULL: write nothing (e.g. only --dump) */
    const char *name;           /* NULL: from `kernel NAME` or the file name */
    Define defines[GEN_MAX_DEFINES];
    int ndefines;
    int no_schedule;            /* ignore the file's schedule sections */
    const char *dump;           /* NULL or a pass of the pipeline (gen_pass_known), --dump=NAME */
    FILE *dump_out;
    /* ONNX models */
    int with_main;              /* --main: also a runner program and its Makefile */
    int report;                 /* --report: fused graph, MACs, memory plan on stdout */
    int weights_in_file;        /* --weights=auto|file|embed|incbin: 0 (auto, the default), 1, 2, 3,
                                   the EM_WEIGHTS_* of emit/emit.h, copied into EmModel */
    const char *bind_dir;       /* --bind-inputs DIR: input_N.pb/.npy data for inputs whose
                                   values an operator needs at compile time */
    OnnxInputShape shapes[GEN_MAX_SHAPE_ARGS];   /* --input-shape */
    int nshapes;
    OnnxDimValue dims[GEN_MAX_SHAPE_ARGS];       /* --dim */
    int ndims;
    const char *binds[GEN_MAX_SHAPE_ARGS];      /* --bind NAME=VALUE|FILE, as written */
    int nbinds;
    int layout_block;           /* --layout: GEN_LAYOUT_AUTO (0, the default), GEN_LAYOUT_NCHW,
                                   or 8 / 16: 2-D convs in NCHWc (ir/layout.h) */
    int winograd;               /* --winograd: IR_WINOGRAD_AUTO (0, the default), _OFF or _ALL
                                   (ir/pass.h; ir/winograd.c) */
    int no_extent_versions;     /* --extent-versions=off: a ranged C build without the model
                                   steps' versions for smaller extents and extent 1 (gen/driver.c) */
    const SchTile *tile;        /* (ONNX, CPU) the default schedule's register tile; NULL: default */
    /* limits; 0: the default */
    int64_t max_file_bytes;     /* --max-file-mb: GEN_MAX_FILE_BYTES */
    int64_t max_nodes;          /* --max-nodes: ONNX_MAX_NODES (onnx/onnx.h) */
    int64_t max_elements;       /* --max-elements: GEN_MAX_ELEMS (ONNX; a .kg tensor has GEN_MAX_ELEMS) */
} GenOptions;

/* Read a whole file (NUL-terminated) of at most max_bytes (0: GEN_MAX_FILE_BYTES).
 * Returns 0, or -1 with ir_fail(). */
int gen_read_file(const char *path, int64_t max_bytes, char **text, size_t *len);
/* Compile one .kg file or ONNX model (told by the content) as the options say
 * (driver.c). Returns 0, or -1 with ir_fail(). */
int gen_compile(const GenOptions *opt);
/* The pipeline, one pass a line in the order they run, "NAME  what it does" (--list-passes). */
void gen_list_passes(FILE *f);
/* Is name a pass of the pipeline or an alias --dump takes ("tir": the tensor IR after the
 * graph passes)? 1, or 0 with ir_fail() naming the known ones. */
int gen_pass_known(const char *name);
/* The graph passes of the pipeline, in order, over an imported ONNX program (a .kg
 * program brings its own schedule and gets none), each followed by its --dump. 0, or -1
 * with ir_fail(). */
int gen_graph_passes(Program *p, const PassCtx *ctx);
/* --input-shape, --dim and --bind (as "--opt VALUE" or "--opt=VALUE") at argv[*i] into
 * opt, *i moved past the value: 1; 0 if argv[*i] is none of them; -1 after a message
 * "PROG: error: ..." on stderr. gen_shape_options_free frees what they allocated. */
int gen_shape_option(GenOptions *opt, int argc, char **argv, int *i, const char *prog);
void gen_shape_options_free(GenOptions *opt);
/* A C identifier from a file name: "examples/conv-2d.kg" -> "conv_2d". */
const char *gen_name_from_path(const char *path);

/* What a frontend hands the rest of the pipeline. */
typedef struct {
    int onnx;                  /* the frontend: 1 ONNX (im holds the import), 0 .kg (kg) */
    Program *prog;
    const char *name;          /* the kernel or model name: --name, `kernel NAME`, the file's */
    const char *source;        /* the input's file name, for the generated headers */
    KgModule kg;
    OnnxImport im;
    void *front;               /* the ONNX frontend's buffers (gen_onnx_release) */
} GenUnit;

/* ---------------------------------------------------------------- onnx_front.c */

/* Load the model of opt->input with its bound inputs (--bind, --bind-inputs), check
 * u->name (set by the driver) and import it into u->prog, u->im. 0, or -1 with ir_fail();
 * either way gen_onnx_release frees what it read. */
int gen_onnx_front(const GenOptions *opt, GenUnit *u);
void gen_onnx_release(GenUnit *u);
/* --report: the inputs and outputs, what the import decided, the kernels with their MACs
 * and notes, the memory plan; on stdout. */
void gen_onnx_report(const GenUnit *u, const Model *m, Schedule *s);
/* The model's files for opt's target into o (its inputs and outputs by ONNX name, the
 * header notes). 0, or -1 with ir_fail(). */
int gen_onnx_files(OutSet *o, const GenOptions *opt, const GenUnit *u, const Model *m, const Schedule *s);

/* ---------------------------------------------------------------- tune_run.c */

/* `kgen tune FILE ...` (argv[0] is "tune"): search, measure, log. Returns the exit status. */
int gen_tune_main(int argc, char **argv);
/* --tuning-log LOG: the best record of LOG for opt's workload set opt's tunable params
 * (.kg, as defines the command line did not give) or opt->tile (ONNX). 0 (also when
 * the log has no record for it, with a note on stderr), or -1 with ir_fail(). */
int gen_tune_apply(GenOptions *opt, const char *log);

#endif
