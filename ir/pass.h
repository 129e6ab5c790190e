/* pass.h - the compiler's pipeline as named passes: what `kgen --list-passes` prints and
 * what `--dump=NAME` stops after.
 *
 * Every stage that transforms a program has a name (lower case, words joined by '-') and
 * a one-line description, kept beside the code in a PassInfo table of its level:
 *   graph  tensor-IR passes over a Program (import clean-ups, layout, fusion decisions),
 *   loop   loop-IR passes over a kernel's statements (simplify, unroll, peel, ...),
 * plus the fixed steps between them (the schedule, lowering, printing). A driver that
 * runs a pass calls ir_pass_dump(NAME) afterwards and, when it returns a stream, prints
 * its IR there (ir_print_program for graph passes, ir_print_stmt for loop passes).
 */
#ifndef KGEN_IR_PASS_H
#define KGEN_IR_PASS_H

#include <stdio.h>

typedef struct PassInfo {
    const char *name;   /* as --dump=NAME spells it */
    const char *what;   /* one line: what the pass does */
} PassInfo;

/* The --dump request: the pass after which to print the IR, and the stream (NULL name:
 * none). Set once by the driver before compiling. */
void ir_pass_dump_set(const char *name, FILE *out);

/* The stream to print to when NAME is the requested pass, else NULL. */
FILE *ir_pass_dump(const char *name);

#endif
