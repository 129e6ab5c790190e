/* fuzz_kg.c - fuzz target: the bytes as .kg source text, parsed for target "c" and
 * lowered when it parses, in a fresh arena that goes at once. An input with a NUL byte
 * is skipped (the driver rejects such files before parsing). Build: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "lower/lower.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    KgModule mod = {0};
    if (!gen_parse_kg("fuzz.kg", text, NULL, 0, "c", &mod))
        (void)ir_lower(mod.sched, "fuzz");
    ir_arena_free(arena);
    ir_arena_set(NULL);
    free(text);
    return 0;
}
