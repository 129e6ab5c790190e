#include "common.h"
#include "matmul.h"

#ifndef M
#define M 1024
#endif
#ifndef N
#define N 1024
#endif
#ifndef K
#define K 1024
#endif

int main(void)
{
    float *a = new_input((size_t)M * K), *b = new_input((size_t)K * N), *c = new_output((size_t)M * N);
    double *ref = new_ref((size_t)M * N);
    void *ws = new_workspace(MATMUL_WORKSPACE_BYTES);
    int i, j, k, rc;
    if ((rc = matmul(a, b, c, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", rc), 1;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0;
            for (k = 0; k < K; k++)
                s += (double)a[i * K + k] * b[k * N + j];
            ref[i * N + j] = s;
        }
    /* float32 accumulation over K terms: the absolute error grows with K */
    return compare("C", c, ref, (size_t)M * N, RTOL, ATOL + 2e-6 * K);
}
