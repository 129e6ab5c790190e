#include "common.h"
#include "layernorm.h"

#ifndef R
#define R 128
#endif
#ifndef L
#define L 768
#endif

int main(void)
{
    float *x = new_input((size_t)R * L), *g = new_input(L), *b = new_input(L), *y = new_output((size_t)R * L);
    double *ref = new_ref((size_t)R * L);
    void *ws = new_workspace(LAYERNORM_WORKSPACE_BYTES);
    int r, l, st;
    if ((st = layernorm(x, g, b, y, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", st), 1;
    for (r = 0; r < R; r++) {
        double mean = 0, var = 0;
        for (l = 0; l < L; l++)
            mean += x[r * L + l];
        mean /= L;
        for (l = 0; l < L; l++)
            var += (x[r * L + l] - mean) * (x[r * L + l] - mean);
        var /= L;
        for (l = 0; l < L; l++)
            ref[r * L + l] = (x[r * L + l] - mean) / sqrt(var + 1e-5) * g[l] + b[l];
    }
    return compare("Y", y, ref, (size_t)R * L, 1e-4, 1e-4);
}
