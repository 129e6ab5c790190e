/* ops.c - the operator registry: one table per family file. */
#include "ops.h"

#include <string.h>

extern const OpDef op_defs_elementwise[], op_defs_reduce[], op_defs_nn[], op_defs_shape[], op_defs_resize[],
    op_defs_rnn[], op_defs_quant[], op_defs_misc[], op_defs_loss[], op_defs_signal[], op_defs_image[],
    op_defs_array[], op_defs_attention[], op_defs_training[];

static const OpDef *const tables[] = {op_defs_elementwise, op_defs_reduce, op_defs_nn,    op_defs_shape,
                                      op_defs_resize,      op_defs_rnn,    op_defs_quant, op_defs_misc,
                                      op_defs_loss,        op_defs_signal, op_defs_image, op_defs_array,
                                      op_defs_attention,   op_defs_training};

#define NTABLES ((int)(sizeof tables / sizeof *tables))

const OpDef *op_find(const char *op_type)
{
    for (int t = 0; t < NTABLES; t++)
        for (const OpDef *d = tables[t]; d->name; d++)
            if (!strcmp(d->name, op_type))
                return d;
    return NULL;
}

int op_count(void)
{
    int n = 0;
    for (int t = 0; t < NTABLES; t++)
        for (const OpDef *d = tables[t]; d->name; d++)
            n++;
    return n;
}

const char *op_name_at(int i)
{
    for (int t = 0; t < NTABLES; t++)
        for (const OpDef *d = tables[t]; d->name; d++)
            if (i-- == 0)
                return d->name;
    return NULL;
}
