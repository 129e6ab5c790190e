#include "common.h"
#include "depthwise_conv2d.h"

#ifndef N
#define N 1
#endif
#ifndef C
#define C 32
#endif
#ifndef H
#define H 56
#endif
#ifndef W
#define W 56
#endif
#ifndef KH
#define KH 3
#endif
#ifndef KW
#define KW 3
#endif
#ifndef S
#define S 1
#endif
#ifndef P
#define P 1
#endif
#define OH ((H + 2 * P - KH) / S + 1)
#define OW ((W + 2 * P - KW) / S + 1)

int main(void)
{
    float *x = new_input((size_t)N * C * H * W), *w = new_input((size_t)C * KH * KW);
    float *y = new_output((size_t)N * C * OH * OW);
    double *ref = new_ref((size_t)N * C * OH * OW);
    void *ws = new_workspace(DEPTHWISE_CONV2D_WORKSPACE_BYTES);
    int n, c, oy, ox, ry, rx, st;
    if ((st = depthwise_conv2d(x, w, y, ws)) != KGEN_OK)
        return fprintf(stderr, "status %d\n", st), 1;
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (oy = 0; oy < OH; oy++)
                for (ox = 0; ox < OW; ox++) {
                    double s = 0;
                    for (ry = 0; ry < KH; ry++)
                        for (rx = 0; rx < KW; rx++) {
                            int iy = oy * S + ry - P, ix = ox * S + rx - P;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            s += (double)x[((n * C + c) * H + iy) * W + ix] * w[(c * KH + ry) * KW + rx];
                        }
                    ref[((n * C + c) * OH + oy) * OW + ox] = s;
                }
    return compare("Y", y, ref, (size_t)N * C * OH * OW, RTOL, ATOL);
}
