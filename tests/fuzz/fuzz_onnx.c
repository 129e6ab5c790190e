/* fuzz_onnx.c - fuzz target: the bytes as a .onnx model, through the whole front end.
 * onnx_load_buffer, then onnx_import, the graph passes (NCHW), sch_create +
 * sch_default and ir_lower_model in a fresh arena, as gen/driver.c does; everything is
 * freed. Errors are expected;
 * a crash, a leak or undefined behaviour is a finding. Build: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>

#include "gen/gen.h"
#include "lower/lower.h"
#include "onnx/onnx.h"
#include "schedule/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    OnnxModel *om = onnx_load_buffer(data, size, "fuzz.onnx", NULL, err, sizeof err);
    if (!om)
        return 0;
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    OnnxImport im;
    PassCtx passes = {"fuzz.onnx", "c", 0, 0, IR_LAYOUT_NCHW};
    if (!onnx_import(om, NULL, &im) && !gen_graph_passes(im.prog, &passes)) {
        Schedule *s = sch_create(im.prog);
        if (!sch_default(s))
            (void)ir_lower_model(s, "fuzz");
    }
    ir_arena_free(arena);
    ir_arena_set(NULL);
    onnx_free(om);
    return 0;
}
