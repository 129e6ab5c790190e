/* onnx.h - kgen's ONNX model reader: a protobuf wire-format decoder (pb.c) and the
 * decoding of ModelProto, GraphProto, NodeProto, TensorProto and friends (reader.c).
 *
 * Nothing here needs libprotobuf or generated code. Everything decoded from one model
 * lives in one arena owned by the OnnxModel and goes at once in onnx_free(). Every read is
 * bounds-checked; a malformed file gives NULL and a message that names the file, the
 * field path and the byte offset, e.g.
 *   "model.onnx: graph.node[3].attribute[1]: truncated length-delimited field 4 (length 50,
 *    2 bytes left) at byte 1234".
 * There is no global state: loaders may run in parallel on different files.
 */
#ifndef KGEN_ONNX_H
#define KGEN_ONNX_H

#include "../ir/ops/onnx_dtype.h"

#include <stddef.h>
#include <stdint.h>

/* Limits, checked with overflow-safe arithmetic; each has its own error message naming
 * the place, the limit and, for the first three, the kgen option that changes it. Those
 * three are defaults: a load may be given others (OnnxLimits). The rest size fixed
 * arrays, the recursion or the memory one field may ask for. */
#define ONNX_MAX_FILE_SIZE ((int64_t)1 << 31)   /* bytes of a .onnx or .pb file (2 GiB): --max-file-mb */
#define ONNX_MAX_NODES 1000000                   /* nodes in one graph: --max-nodes */
#define ONNX_MAX_ELEMENTS ((int64_t)1 << 40)     /* product of a tensor's dims: --max-elements */
#define ONNX_MAX_RANK 8                          /* dims of a tensor or a value's shape */
#define ONNX_MAX_DEPTH 16                        /* nested messages below the top one */
#define ONNX_MAX_OPSET 27                        /* the newest default-domain opset kgen knows */
#define ONNX_MAX_ATTRS 1000                      /* attributes of one node */
#define ONNX_MAX_ATTR_VALUES (1 << 24)           /* values of one list attribute (ints, floats,
                                                    strings, tensors or graphs) */

/* Per-load limits; a field left 0 takes the default above. */
typedef struct {
    int64_t file_bytes;              /* the model file or a .pb file (not external data) */
    int64_t nodes;                   /* nodes of one graph (subgraphs each count alone) */
    int64_t elements;                /* elements of one tensor */
} OnnxLimits;

/* The element types (OnnxDType, onnx_dtype_name/size/bits) are those of
 * ir/ops/onnx_dtype.h, shared with the operator builders. */

/* ---------------------------------------------------------------- reader.c: the model */

/* A tensor, its payload converted to one layout whatever the file used (raw_data,
 * float_data, int32_data, ..., or external data): `data` holds `nbytes` little-endian
 * bytes, elements packed one after another; sub-byte types are packed two (4-bit) or four
 * (2-bit) to a byte, the first element in the low bits. Values that int32_data stored one
 * to an int32 are narrowed to the element size. data is 16-byte aligned and non-NULL for
 * every type but STRING, whose elements are in strings/string_lens (data NULL). */
typedef struct {
    char *name;                      /* "" if unnamed */
    int dtype;                       /* OnnxDType */
    int ndim;
    int64_t dims[ONNX_MAX_RANK];
    int64_t nelems;                  /* product of dims (1 for a scalar) */
    size_t nbytes;
    void *data;
    char **strings;                  /* STRING tensors only: nelems strings */
    size_t *string_lens;
    int external;                    /* the payload came from an external file */
} OnnxTensor;

/* AttributeProto.AttributeType */
typedef enum {
    ONNX_ATTR_UNDEFINED = 0,
    ONNX_ATTR_FLOAT = 1,
    ONNX_ATTR_INT = 2,
    ONNX_ATTR_STRING = 3,
    ONNX_ATTR_TENSOR = 4,
    ONNX_ATTR_GRAPH = 5,
    ONNX_ATTR_FLOATS = 6,
    ONNX_ATTR_INTS = 7,
    ONNX_ATTR_STRINGS = 8,
    ONNX_ATTR_TENSORS = 9,
    ONNX_ATTR_GRAPHS = 10,
    ONNX_ATTR_SPARSE_TENSOR = 11,
    ONNX_ATTR_SPARSE_TENSORS = 12,
    ONNX_ATTR_TYPE_PROTO = 13,
    ONNX_ATTR_TYPE_PROTOS = 14
} OnnxAttrType;

typedef struct OnnxGraph OnnxGraph;

/* An attribute. `type` is the file's, or when the file left it out, the kind of the value
 * that is present. Only the fields of that kind are meaningful; strings are never NULL
 * ("" when absent) and may hold NUL bytes (hence slen / string_lens). Sparse tensors and
 * type protos are not decoded: only the type says they are there. */
typedef struct {
    char *name;
    int type;                        /* OnnxAttrType */
    float f;
    int64_t i;
    char *s;
    size_t slen;
    OnnxTensor *t;                   /* NULL unless a tensor was given */
    OnnxGraph *g;                    /* NULL unless a subgraph was given */
    float *floats;
    int nfloats;
    int64_t *ints;
    int nints;
    char **strings;
    size_t *string_lens;
    int nstrings;
    OnnxTensor *tensors;
    int ntensors;
    OnnxGraph *graphs;
    int ngraphs;
    char *ref_attr_name;             /* inside functions; "" otherwise */
} OnnxAttr;

/* A node. inputs[i] is "" for an optional input that was left out. */
typedef struct {
    char *name, *op_type, *domain;   /* "" when absent */
    char **inputs;
    int ninputs;
    char **outputs;
    int noutputs;
    OnnxAttr *attrs;
    int nattrs;
} OnnxNode;

/* What TypeProto holds: the "value" oneof. Only tensors (and sparse tensors) have an
 * element type and a shape here. */
typedef enum {
    ONNX_TYPE_NONE = 0,
    ONNX_TYPE_TENSOR,
    ONNX_TYPE_SEQUENCE,
    ONNX_TYPE_MAP,
    ONNX_TYPE_OPTIONAL,
    ONNX_TYPE_SPARSE_TENSOR,
    ONNX_TYPE_OPAQUE
} OnnxTypeKind;

/* A graph input, output or value_info. dims[i] is the dim_value, or -1 where the dim is
 * symbolic (dim_params[i] names it) or unknown (dim_params[i] NULL too). has_shape is 0
 * when the rank itself is unknown; a scalar has has_shape 1 and ndim 0. */
typedef struct {
    char *name;
    int kind;                        /* OnnxTypeKind */
    int dtype;                       /* elem_type: OnnxDType */
    int ndim;
    int64_t dims[ONNX_MAX_RANK];
    char *dim_params[ONNX_MAX_RANK]; /* NULL where dim_value */
    int has_shape;
} OnnxValueInfo;

struct OnnxGraph {
    char *name;
    OnnxNode *nodes;
    int nnodes;
    OnnxTensor *initializers;
    int ninit;
    OnnxValueInfo *inputs;
    int ninputs;
    OnnxValueInfo *outputs;
    int noutputs;
    OnnxValueInfo *value_info;
    int nvalue_info;
    int nsparse_init;                /* sparse_initializer: counted, not decoded */
};

typedef struct {
    char *domain;                    /* "" for the default domain */
    int64_t version;
} OnnxOpset;

struct OnnxChunk;

typedef struct {
    int64_t ir_version;
    OnnxOpset *opsets;
    int nopsets;
    char *producer;                  /* producer_name; "" when absent */
    char *producer_version;
    char *domain;
    int64_t model_version;
    OnnxGraph graph;
    int nfunctions;                  /* model-local functions: counted, not decoded */
    OnnxLimits limits;               /* those it was loaded under, every field set */
    struct OnnxChunk *arena;         /* every allocation above; freed by onnx_free */
} OnnxModel;

/* Load a model file; returns NULL and writes a message into err (size errlen) on failure.
 * External tensor data is read relative to the model's directory. The _ex variants take
 * limits (NULL: the defaults). */
OnnxModel *onnx_load_file(const char *path, char *err, size_t errlen);
OnnxModel *onnx_load_file_ex(const char *path, const OnnxLimits *lim, char *err, size_t errlen);

/* The same from memory. name_for_errors starts each message; model_dir is where external
 * data lives (NULL: a model that uses external data is rejected). */
OnnxModel *onnx_load_buffer(const void *data, size_t size, const char *name_for_errors,
                            const char *model_dir, char *err, size_t errlen);
OnnxModel *onnx_load_buffer_ex(const void *data, size_t size, const char *name_for_errors,
                               const char *model_dir, const OnnxLimits *lim, char *err, size_t errlen);
void onnx_free(OnnxModel *m);

/* Load a serialized TensorProto (a .pb file of the ONNX test data), or from memory.
 * Free the result with onnx_tensor_free, and only such tensors: those of a model go with
 * it. */
OnnxTensor *onnx_load_tensor_file(const char *path, char *err, size_t errlen);
OnnxTensor *onnx_load_tensor_file_ex(const char *path, const OnnxLimits *lim, char *err, size_t errlen);
OnnxTensor *onnx_load_tensor_buffer(const void *data, size_t size, const char *name_for_errors,
                                    const char *model_dir, char *err, size_t errlen);
OnnxTensor *onnx_load_tensor_buffer_ex(const void *data, size_t size, const char *name_for_errors,
                                       const char *model_dir, const OnnxLimits *lim, char *err,
                                       size_t errlen);
void onnx_tensor_free(OnnxTensor *t);

const OnnxAttr *onnx_node_attr(const OnnxNode *n, const char *name);   /* NULL if absent */

/* The opset version imported for domain ("" or "ai.onnx": the default domain); -1 if
 * absent. */
int64_t onnx_opset(const OnnxModel *m, const char *domain);

/* ---------------------------------------------------------------- pb.c: wire format */

/* Protobuf wire types; groups (3, 4) are rejected wherever they appear. */
enum { ONNX_PB_VARINT = 0, ONNX_PB_FIXED64 = 1, ONNX_PB_LEN = 2, ONNX_PB_FIXED32 = 5 };

/* Where a message sits, for error messages: frames linked to the enclosing one, printed
 * as "graph.node[3].attribute[1]". The top message's frame has field NULL. */
typedef struct OnnxPbPath {
    const struct OnnxPbPath *up;
    const char *field;
    int64_t index;                   /* -1: not a repeated field */
} OnnxPbPath;

/* A cursor over one message: [pos, end) of buf. Offsets count from buf, the start of the
 * file, so messages name the byte a person finds in a hex dump. */
typedef struct {
    const uint8_t *buf;
    size_t pos, end;
    int depth;                       /* messages around this one */
    const OnnxPbPath *path;
    const char *file;                /* starts each error message */
    char *err;
    size_t errlen;
} OnnxPb;

/* One field as read. For LEN the payload is buf[off, off + len). */
typedef struct {
    uint32_t num;                    /* field number */
    int wire;
    uint64_t v;                      /* VARINT, FIXED64, FIXED32 value */
    size_t off, len;
    size_t at;                       /* offset of the tag */
} OnnxPbField;

/* Reads the next field of the message: 1 read, 0 at the end, -1 on error (message set). */
int onnx_pb_next(OnnxPb *p, OnnxPbField *f);

/* A cursor over the message in LEN field f, at path frame `frame`; -1 past ONNX_MAX_DEPTH. */
int onnx_pb_sub(OnnxPb *p, const OnnxPbField *f, const OnnxPbPath *frame, OnnxPb *sub);

/* Counts, for each field number below n, the scalars or messages the message holds: one
 * per occurrence, or for a packed field (LEN where scalar[num] is a wire type) the
 * scalars in it. scalar[num] < 0: not a scalar field. Every field at this level is checked
 * on the way; p itself does not move. */
int onnx_pb_count(const OnnxPb *p, const int8_t *scalar, int n, int64_t *counts);

/* The scalars of one occurrence of a repeated scalar field of wire type `wire`, packed or
 * not. A mismatched wire type is an error naming `name`. */
typedef struct {
    OnnxPb *p;
    const char *name;
    int wire;
    int single;                      /* not packed: the one value is f.v */
    uint64_t v;
    size_t pos, end;
} OnnxPbIter;
int onnx_pb_iter(OnnxPb *p, const OnnxPbField *f, int wire, const char *name, OnnxPbIter *it);
int onnx_pb_iter_next(OnnxPbIter *it, uint64_t *v);   /* 1, 0 at the end, -1 on error */

/* Checks that field f, called name, has wire type `wire`; -1 with a message if not. */
int onnx_pb_want(OnnxPb *p, const OnnxPbField *f, int wire, const char *name);

/* Sets the error message "file: path[.field]: message at byte off" and returns -1.
 * field may be NULL. */
int onnx_pb_fail(OnnxPb *p, size_t off, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

const char *onnx_pb_wire_name(int wire);

#endif
