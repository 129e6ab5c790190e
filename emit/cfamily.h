/* cfamily.h - private to emit/: what the C-family printer shares with the files that wrap
 * its output (ctarget.c, later the GPU hosts). Not part of emit.h's public contract. */
#ifndef KGEN_CFAMILY_H
#define KGEN_CFAMILY_H

#include "emit.h"

/* The C identifier em_print_kernel gives the function of kernel k: k->name made a valid,
 * non-reserved identifier (unchanged for ordinary names). malloc'd; the caller frees it. */
char *em_c_func_name(const Kernel *k);

/* Append text for the inside of a C comment: "*" "/" and "/" "*" are broken up (the
 * second would trip -Wcomment), newlines become spaces. */
void em_c_comment(StrBuf *o, const char *text);

#endif
