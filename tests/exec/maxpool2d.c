#include "common.h"
#include "maxpool2d.h"

#ifndef N
#define N 1
#endif
#ifndef C
#define C 16
#endif
#ifndef H
#define H 32
#endif
#ifndef W
#define W 32
#endif
#ifndef K
#define K 3
#endif
#ifndef S
#define S 2
#endif
#ifndef P
#define P 1
#endif
#define OH ((H + 2 * P - K) / S + 1)
#define OW ((W + 2 * P - K) / S + 1)

int main(void)
{
    float *x = new_input((size_t)N * C * H * W), *y = new_output((size_t)N * C * OH * OW);
    double *ref = new_ref((size_t)N * C * OH * OW);
    void *ws = new_workspace(MAXPOOL2D_WORKSPACE_BYTES);
    int n, c, oy, ox, ry, rx, st;
    if ((st = maxpool2d(x, y, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", st), 1;
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (oy = 0; oy < OH; oy++)
                for (ox = 0; ox < OW; ox++) {
                    double best = -INFINITY, sum = 0;
                    int count = 0;
                    for (ry = 0; ry < K; ry++)
                        for (rx = 0; rx < K; rx++) {
                            int iy = oy * S + ry - P, ix = ox * S + rx - P;
                            double v;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            v = x[((n * C + c) * H + iy) * W + ix];
                            best = v > best ? v : best;
                            sum += v;
                            count++;
                        }
                    ref[((n * C + c) * OH + oy) * OW + ox] = best;
                    (void)sum;
                    (void)count;
                }
    return compare("Y", y, ref, (size_t)N * C * OH * OW, RTOL, ATOL);
}
