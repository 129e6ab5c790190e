/* fuzz_io.c - fuzz target: the bytes as a .npy file and as a TensorProto .pb file,
 * through the runner's in-memory readers (templates/kgen_io.h: kgen_io_parse_npy,
 * kgen_io_parse_pb) and kgen's own TensorProto reader (onnx_load_tensor_buffer). A
 * tensor that loads is touched end to end, so a wrong byte count shows under ASan.
 * Build: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>

#include "onnx/onnx.h"
#include "kgen_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned char sink;

static void touch(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned char x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= b[i];
    sink = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    kgen_io_tensor t;
    kgen_io_init(&t);
    if (kgen_io_parse_npy(data, size, &t, err, sizeof err) == KGEN_IO_OK)
        touch(t.data, t.nbytes);
    kgen_io_free(&t);
    if (kgen_io_parse_pb(data, size, &t, err, sizeof err) == KGEN_IO_OK)
        touch(t.data, t.nbytes);
    kgen_io_free(&t);
    OnnxTensor *ot = onnx_load_tensor_buffer(data, size, "fuzz.pb", NULL, err, sizeof err);
    onnx_tensor_free(ot);
    return 0;
}
