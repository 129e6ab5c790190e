/* driver.c - main() for the fuzz targets built as plain programs (no libFuzzer): runs
 * LLVMFuzzerTestOneInput once on each file named on the command line, or on stdin when
 * none is named, so AFL++ (`afl-fuzz ... -- prog @@`) and tests/fuzz_replay.sh can run
 * the same targets. Exits 0 unless a file cannot be read; a finding aborts (sanitizers). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run(FILE *f, const char *name)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return 1;
    for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                return 1;
            }
            buf = nb;
        }
    }
    if (ferror(f)) {
        fprintf(stderr, "%s: read error\n", name);
        free(buf);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return run(stdin, "<stdin>");
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            rc = 1;
            continue;
        }
        rc |= run(f, argv[i]);
        fclose(f);
    }
    return rc;
}
