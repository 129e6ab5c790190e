/* pass.c - the --dump request of pass.h. */
#include <string.h>

#include "pass.h"

static const char *dump_name;
static FILE *dump_out;

void ir_pass_dump_set(const char *name, FILE *out)
{
    dump_name = name;
    dump_out = out ? out : stdout;
}

FILE *ir_pass_dump(const char *name)
{
    return dump_name && !strcmp(dump_name, name) ? dump_out : NULL;
}
