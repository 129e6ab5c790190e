/* mkseeds.c - writes small .npy seed files for fuzz_io into the folder given (one per
 * dtype and rank, written by kgen_io_encode_npy, so they are valid files to mutate). */
#include <stdio.h>
#include <stdlib.h>

#include "kgen_io.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkseeds DIR\n");
        return 2;
    }
    static const struct { uint8_t code, bits; } types[] = {
        {KGEN_DTYPE_FLOAT, 32}, {KGEN_DTYPE_FLOAT, 64}, {KGEN_DTYPE_FLOAT, 16}, {KGEN_DTYPE_INT, 8},
        {KGEN_DTYPE_INT, 64},   {KGEN_DTYPE_UINT, 8},    {KGEN_DTYPE_BOOL, 8},
    };
    static const int64_t shapes[][3] = {{1, 1, 1}, {3, 1, 1}, {2, 3, 1}, {2, 2, 2}};
    static const int32_t ranks[] = {0, 1, 2, 3};
    unsigned char data[64] = {0};
    for (int i = 0; i < 64; i++)
        data[i] = (unsigned char)(i * 37);
    int n = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (int si = 0; si < 4; si++) {
            kgen_dtype dt = kgen_io_dtype(types[ti].code, types[ti].bits);
            size_t len;
            char err[256];
            unsigned char *b = kgen_io_encode_npy(dt, ranks[si], shapes[si], data, &len, err, sizeof err);
            if (!b) {
                fprintf(stderr, "mkseeds: %s\n", err);
                return 1;
            }
            char path[4096];
            snprintf(path, sizeof path, "%s/seed_%d.npy", argv[1], n++);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(b, 1, len, f) != len || fclose(f)) {
                perror(path);
                return 1;
            }
            free(b);
        }
    return 0;
}
