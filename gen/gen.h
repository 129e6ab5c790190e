/* gen.h - the kgen driver's frontends: the .kg tensor-expression language (kg.c) and,
 * later, ONNX. */
#ifndef KGEN_GEN_H
#define KGEN_GEN_H

#include "../ir/ir.h"
#include "../schedule/schedule.h"

/* -DNAME=VALUE on the command line: overrides a `param` of the .kg file. */
typedef struct {
    const char *name;
    int64_t value;
    int used;          /* set by the parser when a param took it */
} Define;

typedef struct {
    Program *prog;
    Schedule *sched;           /* the schedule after the target's section was applied */
    const char *kernel_name;   /* from `kernel NAME`, else NULL */
    int scheduled;             /* a schedule section for the target was found and applied */
    PtrVec schedule_lines;     /* char*: the schedule statements applied, as written */
} KgModule;

/* Parse the .kg source `text` (read from `path`, used in messages), build its program,
 * create its schedule and apply the `schedule TARGET { ... }` section whose name equals
 * `target` (target NULL or "none": no section is applied). On error returns -1 and
 * ir_errmsg() holds "path:line:col: error: message", then the source line and a caret
 * line under the problem. */
int gen_parse_kg(const char *path, const char *text, Define *defs, int ndefs, const char *target,
                 KgModule *out);

/* ---------------------------------------------------------------- api.c (the driver) */

#define GEN_MAX_FILE_BYTES ((size_t)1 << 30)   /* largest input file read */
#define GEN_MAX_DEFINES 256

typedef struct {
    const char *input;          /* .kg path */
    const char *target;         /* "c" */
    const char *outdir;         /* NULL: write nothing (e.g. only --dump) */
    const char *name;           /* NULL: from `kernel NAME` or the file name */
    Define defines[GEN_MAX_DEFINES];
    int ndefines;
    int no_schedule;            /* ignore the file's schedule sections */
    const char *dump;           /* NULL or "tir", "schedule", "lower" */
    FILE *dump_out;
} GenOptions;

/* Read a whole file (NUL-terminated). Returns 0, or -1 with ir_fail(). */
int gen_read_file(const char *path, char **text, size_t *len);
/* Compile one .kg file as the options say. Returns 0, or -1 with ir_fail(). */
int gen_compile(const GenOptions *opt);
/* A C identifier from a file name: "examples/conv-2d.kg" -> "conv_2d". */
const char *gen_name_from_path(const char *path);

#endif
