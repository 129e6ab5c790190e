/* jsemit.h - private to emit/: what the JavaScript printer (jsprint.c) shares with the
 * files that wrap its output (jsmodel.c). */
#ifndef KGEN_JSEMIT_H
#define KGEN_JSEMIT_H

#include "emit.h"
#include "printer.h"     /* em_comment_text: the inside of a comment */

/* The typed array that holds elements of t ("Float32Array"; the storage floats as bits). */
const char *em_js_array_type(DType t);
/* Any string as a JS identifier that is not reserved (malloc'd). */
char *em_js_ident(const char *s);
/* Print kernel k as `function fn(params[, workspace])` into out; local arrays it needs go
 * to hoist as module-level declarations, their names added to module_names (char*), whose
 * names the function's own names avoid. */
void em_js_print_kernel(StrBuf *out, StrBuf *hoist, const Kernel *k, const char *fn, PtrVec *module_names,
                        int exported);

#endif
