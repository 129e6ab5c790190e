#include "common.h"
#include "softmax.h"

#ifndef R
#define R 128
#endif
#ifndef L
#define L 1000
#endif

int main(void)
{
    float *x = new_input((size_t)R * L), *y = new_output((size_t)R * L);
    double *ref = new_ref((size_t)R * L);
    void *ws = new_workspace(SOFTMAX_WORKSPACE_BYTES);
    int r, l, st;
    for (l = 0; l < R * L; l++)
        x[l] *= 8.0f;   /* a spread that makes the max subtraction matter */
    if ((st = softmax(x, y, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", st), 1;
    for (r = 0; r < R; r++) {
        double mx = -INFINITY, s = 0;
        for (l = 0; l < L; l++)
            mx = x[r * L + l] > mx ? x[r * L + l] : mx;
        for (l = 0; l < L; l++)
            s += exp(x[r * L + l] - mx);
        for (l = 0; l < L; l++)
            ref[r * L + l] = exp(x[r * L + l] - mx) / s;
    }
    return compare("Y", y, ref, (size_t)R * L, RTOL, ATOL);
}
