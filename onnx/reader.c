/* reader.c - decodes ONNX files (ModelProto, TensorProto) into OnnxModel / OnnxTensor.
 * requires: pb.c's wire reader; breaks: nothing (the file buffer is only read).
 *
 * Each message is read twice: onnx_pb_count sizes its repeated fields, then one pass
 * fills arrays of exactly that size, so nothing grows and every index has a bound. All
 * memory of one load comes from one arena of chunks, freed at once. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"

#define die(msg) die_at(__FILE__, __LINE__, msg)

_Noreturn static void die_at(const char *file, int line, const char *msg)
{
    fprintf(stderr, "%s:%d: internal error: %s\n", file, line, msg);
    abort();
}

/* TensorProto fields that hold a payload, by field number. */
enum {
    F_FLOAT = 4,     /* float_data: FLOAT, COMPLEX64 (fixed32) */
    F_INT32 = 5,     /* int32_data: the 32-bit-and-smaller types, one value or packed byte each */
    F_STRING = 6,    /* string_data: STRING */
    F_INT64 = 7,     /* int64_data: INT64 */
    F_RAW = 9,
    F_DOUBLE = 10,   /* double_data: DOUBLE, COMPLEX128 (fixed64) */
    F_UINT64 = 11    /* uint64_data: UINT32, UINT64 */
};

static const char *payload_name(int field)
{
    switch (field) {
    case F_FLOAT: return "float_data";
    case F_INT32: return "int32_data";
    case F_STRING: return "string_data";
    case F_INT64: return "int64_data";
    case F_RAW: return "raw_data";
    case F_DOUBLE: return "double_data";
    case F_UINT64: return "uint64_data";
    default: return "?";
    }
}

/* The typed field that may hold dtype's values (onnx.proto's rules). */
static int payload_field(int dt)
{
    switch (dt) {
    case ONNX_FLOAT:
    case ONNX_COMPLEX64: return F_FLOAT;
    case ONNX_STRING: return F_STRING;
    case ONNX_INT64: return F_INT64;
    case ONNX_DOUBLE:
    case ONNX_COMPLEX128: return F_DOUBLE;
    case ONNX_UINT32:
    case ONNX_UINT64: return F_UINT64;
    default: return F_INT32;
    }
}

/* Bytes of the converted buffer that one value of the typed field becomes. int32_data
 * holds one value per element of 8 to 32 bits, but one packed byte per entry for the
 * 4-bit and 2-bit types. */
static size_t payload_width(int dt, int field)
{
    switch (field) {
    case F_FLOAT: return 4;
    case F_DOUBLE:
    case F_INT64: return 8;
    default: {
        int size = onnx_dtype_size(dt);
        return size ? (size_t)size : 1;
    }
    }
}

/* ---------------------------------------------------------------- the arena */

#define CHUNK_SIZE ((size_t)64 * 1024)
#define ALIGN ((size_t)16)

struct OnnxChunk {
    struct OnnxChunk *next;
    size_t size, used;
    unsigned char mem[];
};

static size_t aligned_at(const struct OnnxChunk *c)
{
    uintptr_t base = (uintptr_t)c->mem;
    uintptr_t p = (base + c->used + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    return (size_t)(p - base);
}

/* Zeroed memory that lives until the arena goes; NULL when out of memory. */
static void *arena_alloc(struct OnnxChunk **arena, size_t n)
{
    struct OnnxChunk *c = *arena;
    if (c) {
        size_t at = aligned_at(c);
        if (at <= c->size && n <= c->size - at) {
            c->used = at + n;
            return c->mem + at;
        }
    }
    /* a big block gets a chunk of its own, kept behind the current one so that the
     * current one keeps filling */
    int own = n > CHUNK_SIZE / 4;
    size_t size = own ? n : CHUNK_SIZE;
    if (size > SIZE_MAX - sizeof(struct OnnxChunk) - ALIGN)
        return NULL;
    struct OnnxChunk *nc = calloc(1, sizeof(struct OnnxChunk) + size + ALIGN);
    if (!nc)
        return NULL;
    nc->size = size + ALIGN;
    size_t at = aligned_at(nc);
    nc->used = at + n;
    if (own && c) {
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        *arena = nc;
    }
    return nc->mem + at;
}

static void arena_free(struct OnnxChunk *c)
{
    while (c) {
        struct OnnxChunk *next = c->next;
        free(c);
        c = next;
    }
}

/* ---------------------------------------------------------------- decoding helpers */

typedef struct {
    struct OnnxChunk *arena;
    const char *dir;      /* where external data lives; NULL: none allowed */
    char *empty;          /* "" for absent strings */
    OnnxLimits lim;       /* every field set */
} Ctx;

/* lim with its zero fields set to the defaults (NULL: all defaults) */
static OnnxLimits resolve_limits(const OnnxLimits *lim)
{
    OnnxLimits l = lim ? *lim : (OnnxLimits){0};
    if (l.file_bytes <= 0)
        l.file_bytes = ONNX_MAX_FILE_SIZE;
    if (l.nodes <= 0)
        l.nodes = ONNX_MAX_NODES;
    if (l.elements <= 0)
        l.elements = ONNX_MAX_ELEMENTS;
    return l;
}

static int64_t as_i64(uint64_t v)
{
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

/* count elements of size bytes each from the arena; NULL with a message on failure */
static void *alloc(Ctx *c, OnnxPb *p, int64_t count, size_t size, size_t at)
{
    if (count < 0 || (uint64_t)count > SIZE_MAX / size) {
        onnx_pb_fail(p, at, NULL, "allocation of %lld x %zu bytes is too large",
                     (long long)count, size);
        return NULL;
    }
    void *m = arena_alloc(&c->arena, (size_t)count * size);
    if (!m)
        onnx_pb_fail(p, at, NULL, "out of memory (%zu bytes)", (size_t)count * size);
    return m;
}

/* option: the kgen option that changes the limit, or NULL */
static int check_count(OnnxPb *p, int64_t n, int64_t limit, const char *what, const char *option)
{
    if (n <= limit)
        return 0;
    return onnx_pb_fail(p, p->pos, NULL, "%lld %s, over the limit of %lld%s%s%s", (long long)n, what,
                        (long long)limit, option ? " (" : "", option ? option : "", option ? ")" : "");
}

/* A string field copied to the arena with a NUL after it. Names (ident) may not hold
 * NUL bytes; byte strings (attribute values) may. */
static int get_str(Ctx *c, OnnxPb *p, const OnnxPbField *f, const char *name, int ident,
                   char **out, size_t *lenp)
{
    if (onnx_pb_want(p, f, ONNX_PB_LEN, name) < 0)
        return -1;
    if (ident && f->len && memchr(p->buf + f->off, 0, f->len))
        return onnx_pb_fail(p, f->at, name, "NUL byte inside a name");
    char *s = alloc(c, p, (int64_t)f->len + 1, 1, f->at);
    if (!s)
        return -1;
    if (f->len)
        memcpy(s, p->buf + f->off, f->len);
    s[f->len] = 0;
    *out = s;
    if (lenp)
        *lenp = f->len;
    return 0;
}

static int get_i64(OnnxPb *p, const OnnxPbField *f, const char *name, int64_t *out)
{
    if (onnx_pb_want(p, f, ONNX_PB_VARINT, name) < 0)
        return -1;
    *out = as_i64(f->v);
    return 0;
}

/* Opens the message in field f as frame (field, index) under p. */
static int open_sub(OnnxPb *p, const OnnxPbField *f, OnnxPbPath *fr, const char *field,
                    int64_t index, OnnxPb *sub)
{
    fr->up = p->path;
    fr->field = field;
    fr->index = index;
    return onnx_pb_sub(p, f, fr, sub);
}

/* Counts the repeated fields below n; scalar fields are those named in `scalars`, as
 * pairs of field number and wire type ended by 0. */
static int count_fields(OnnxPb *p, int64_t *counts, int n, const int *scalars)
{
    int8_t sc[32];
    if (n > 32)
        die("count_fields: too many fields");
    memset(sc, -1, sizeof sc);
    for (; scalars && scalars[0]; scalars += 2)
        sc[scalars[0]] = (int8_t)scalars[1];
    return onnx_pb_count(p, sc, n, counts);
}

static int decode_graph(Ctx *c, OnnxPb *p, OnnxGraph *g);

/* ---------------------------------------------------------------- TensorProto */

static int valid_location(const char *s)
{
    if (!s[0] || s[0] == '/' || s[0] == '\\')
        return 0;
    if (((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) && s[1] == ':')
        return 0;   /* a Windows drive: C:\... */
    for (const char *q = s; *q;) {
        size_t n = strcspn(q, "/\\");
        if (n == 2 && q[0] == '.' && q[1] == '.')
            return 0;
        q += n;
        if (*q)
            q++;
    }
    return 1;
}

/* a non-negative decimal number, as external_data stores offset and length */
static int parse_u63(const char *s, int64_t *out)
{
    int64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        int d = *s - '0';
        if (v > (INT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Reads t's payload from the external file. keys/vals: external_data's pairs. */
static int read_external(Ctx *c, OnnxPb *p, OnnxTensor *t, size_t at, char **keys, char **vals,
                         int n)
{
    const char *location = NULL;
    int64_t offset = 0, length = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(keys[i], "location")) {
            location = vals[i];
        } else if (!strcmp(keys[i], "offset") || !strcmp(keys[i], "length")) {
            int64_t v;
            if (parse_u63(vals[i], &v) < 0)
                return onnx_pb_fail(p, at, NULL, "tensor '%s': external data %s '%s' is not a "
                                    "non-negative number", t->name, keys[i], vals[i]);
            if (keys[i][0] == 'o')
                offset = v;
            else
                length = v;
        }
    }
    if (!location)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': external data has no location",
                            t->name);
    if (!valid_location(location))
        return onnx_pb_fail(p, at, NULL, "tensor '%s': external data location '%s' must be a "
                            "relative path without '..'", t->name, location);
    if (!c->dir)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': external data '%s' needs the model's "
                            "directory, and none was given", t->name, location);
    if (length >= 0 && (uint64_t)length != t->nbytes)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': external data length %lld, but %lld %s "
                            "elements need %zu bytes", t->name, (long long)length,
                            (long long)t->nelems, onnx_dtype_name(t->dtype), t->nbytes);

    size_t dl = strlen(c->dir), ll = strlen(location);
    char *path = alloc(c, p, (int64_t)(dl + ll + 2), 1, at);
    if (!path)
        return -1;
    memcpy(path, c->dir, dl);
    path[dl] = '/';
    memcpy(path + dl + 1, location, ll + 1);

    FILE *fp = fopen(path, "rb");
    if (!fp)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': cannot open external data '%s': %s",
                            t->name, path, strerror(errno));
    int rc = -1;
    long size;
    if (fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0) {
        onnx_pb_fail(p, at, NULL, "tensor '%s': cannot seek in external data '%s'", t->name,
                     path);
        goto out;
    }
    if (offset > size || t->nbytes > (uint64_t)(size - offset)) {
        onnx_pb_fail(p, at, NULL, "tensor '%s': external data '%s' is %ld bytes, too short for "
                     "%zu bytes at offset %lld", t->name, path, size, t->nbytes,
                     (long long)offset);
        goto out;
    }
    if (length < 0 && t->nbytes != (uint64_t)(size - offset)) {
        onnx_pb_fail(p, at, NULL, "tensor '%s': external data '%s' holds %lld bytes after "
                     "offset %lld, but %lld %s elements need %zu", t->name, path,
                     (long long)(size - offset), (long long)offset, (long long)t->nelems,
                     onnx_dtype_name(t->dtype), t->nbytes);
        goto out;
    }
    if (!(t->data = alloc(c, p, (int64_t)t->nbytes, 1, at)))
        goto out;
    if (fseek(fp, (long)offset, SEEK_SET) != 0 ||
        fread(t->data, 1, t->nbytes, fp) != t->nbytes) {
        onnx_pb_fail(p, at, NULL, "tensor '%s': cannot read %zu bytes of external data '%s'",
                     t->name, t->nbytes, path);
        goto out;
    }
    t->external = 1;
    rc = 0;
out:
    fclose(fp);
    return rc;
}

static int decode_entry(Ctx *c, OnnxPb *p, char **key, char **val)
{
    OnnxPbField f;
    int r;
    *key = *val = c->empty;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        if (f.num == 1 && get_str(c, p, &f, "key", 1, key, NULL) < 0)
            return -1;
        if (f.num == 2 && get_str(c, p, &f, "value", 1, val, NULL) < 0)
            return -1;
    }
    return r;
}

static void put_le(uint8_t *d, uint64_t v, size_t w)
{
    for (size_t i = 0; i < w; i++)
        d[i] = (uint8_t)(v >> (8 * i));
}

/* Second pass over the tensor message m: the values of typed field `field` into t->data,
 * or the strings of string_data. */
static int fill_payload(Ctx *c, OnnxPb m, OnnxTensor *t, int field, size_t w)
{
    OnnxPbField f;
    int r;
    int64_t k = 0, n = t->dtype == ONNX_STRING ? t->nelems : (int64_t)(t->nbytes / w);
    uint8_t *d = t->data;
    while ((r = onnx_pb_next(&m, &f)) > 0) {
        if ((int)f.num != field)
            continue;
        if (field == F_STRING) {
            if (k >= n)
                die("string_data count changed between passes");
            if (get_str(c, &m, &f, "string_data", 0, &t->strings[k], &t->string_lens[k]) < 0)
                return -1;
            k++;
            continue;
        }
        int wire = field == F_FLOAT ? ONNX_PB_FIXED32
                   : field == F_DOUBLE ? ONNX_PB_FIXED64 : ONNX_PB_VARINT;
        OnnxPbIter it;
        uint64_t v;
        if (onnx_pb_iter(&m, &f, wire, payload_name(field), &it) < 0)
            return -1;
        while ((r = onnx_pb_iter_next(&it, &v)) > 0) {
            if (k >= n)
                die("payload count changed between passes");
            put_le(d + (size_t)k * w, v, w);
            k++;
        }
        if (r < 0)
            return -1;
    }
    if (r < 0)
        return -1;
    if (k != n)
        die("payload count changed between passes");
    return 0;
}

static int decode_tensor(Ctx *c, OnnxPb *p, OnnxTensor *t)
{
    static const int scalars[] = {1, ONNX_PB_VARINT, F_FLOAT, ONNX_PB_FIXED32,
                                  F_INT32, ONNX_PB_VARINT, F_INT64, ONNX_PB_VARINT,
                                  F_DOUBLE, ONNX_PB_FIXED64, F_UINT64, ONNX_PB_VARINT, 0};
    int64_t cnt[16];
    if (count_fields(p, cnt, 16, scalars) < 0)
        return -1;
    const OnnxPb start = *p;
    size_t at = p->pos;
    if (cnt[1] > ONNX_MAX_RANK)
        return onnx_pb_fail(p, at, "dims", "%lld dims, over the rank limit of %d",
                            (long long)cnt[1], ONNX_MAX_RANK);
    if (check_count(p, cnt[13], ONNX_MAX_ATTR_VALUES, "external_data entries", NULL) < 0)
        return -1;
    char **keys = alloc(c, p, cnt[13], sizeof *keys, at);
    char **vals = alloc(c, p, cnt[13], sizeof *vals, at);
    if (!keys || !vals)
        return -1;
    int nentries = 0;

    int64_t dtype = 0, location = 0;
    unsigned present = 0;      /* bit per payload field number */
    OnnxPbField f, raw = {0};
    int r;
    t->name = c->empty;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        switch (f.num) {
        case 1: {
            OnnxPbIter it;
            uint64_t v;
            if (onnx_pb_iter(p, &f, ONNX_PB_VARINT, "dims", &it) < 0)
                return -1;
            while ((r = onnx_pb_iter_next(&it, &v)) > 0) {
                if (t->ndim >= cnt[1])
                    die("dims count changed between passes");
                if (as_i64(v) < 0)
                    return onnx_pb_fail(p, f.at, "dims", "negative dim %lld",
                                        (long long)as_i64(v));
                t->dims[t->ndim++] = as_i64(v);
            }
            if (r < 0)
                return -1;
            break;
        }
        case 2:
            if (get_i64(p, &f, "data_type", &dtype) < 0)
                return -1;
            break;
        case F_FLOAT:
        case F_INT32:
        case F_STRING:
        case F_INT64:
        case F_DOUBLE:
        case F_UINT64:
        case F_RAW:
            present |= 1u << f.num;
            if (f.num == F_RAW) {
                if (onnx_pb_want(p, &f, ONNX_PB_LEN, "raw_data") < 0)
                    return -1;
                raw = f;
            }
            break;
        case 8:
            if (get_str(c, p, &f, "name", 1, &t->name, NULL) < 0)
                return -1;
            break;
        case 13: {
            OnnxPbPath fr;
            OnnxPb sub;
            if (nentries >= cnt[13])
                die("external_data count changed between passes");
            if (open_sub(p, &f, &fr, "external_data", nentries, &sub) < 0 ||
                decode_entry(c, &sub, &keys[nentries], &vals[nentries]) < 0)
                return -1;
            nentries++;
            break;
        }
        case 14:
            if (get_i64(p, &f, "data_location", &location) < 0)
                return -1;
            break;
        default:
            break;
        }
    }
    if (r < 0)
        return -1;

    const char *tn = t->name;
    if (dtype == 0)
        return onnx_pb_fail(p, at, NULL, "tensor '%s' has no data_type", tn);
    if (dtype < 0 || dtype >= ONNX_NDTYPES)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': unknown data_type %lld", tn,
                            (long long)dtype);
    t->dtype = (int)dtype;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->dims[i];
        if (d > c->lim.elements || (d && n > c->lim.elements / d))
            return onnx_pb_fail(p, at, NULL, "tensor '%s': more than %lld elements, the limit "
                                "(--max-elements)", tn, (long long)c->lim.elements);
        n *= d;
    }
    t->nelems = n;
    uint64_t nbytes = ((uint64_t)n * (uint64_t)onnx_dtype_bits(dtype) + 7) / 8;
    if (nbytes > SIZE_MAX)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': %llu bytes do not fit in memory", tn,
                            (unsigned long long)nbytes);
    t->nbytes = (size_t)nbytes;

    if (location != 0 && location != 1)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': unknown data_location %lld", tn,
                            (long long)location);
    /* at most one payload */
    int first = 0;
    for (int fn = 0; fn < 16; fn++) {
        if (!(present & (1u << fn)))
            continue;
        if (first)
            return onnx_pb_fail(p, at, NULL, "tensor '%s' holds both %s and %s", tn,
                                payload_name(first), payload_name(fn));
        if (location == 1)
            return onnx_pb_fail(p, at, NULL, "tensor '%s' has external data and %s", tn,
                                payload_name(fn));
        first = fn;
    }

    if (t->dtype == ONNX_STRING) {
        if (first && first != F_STRING)
            return onnx_pb_fail(p, at, NULL, "tensor '%s': STRING values must be in "
                                "string_data, not %s", tn, payload_name(first));
        if (location == 1)
            return onnx_pb_fail(p, at, NULL, "tensor '%s': external STRING data is not "
                                "supported", tn);
        if (cnt[F_STRING] != n)
            return onnx_pb_fail(p, at, NULL, "tensor '%s': string_data holds %lld strings, "
                                "but the dims give %lld", tn, (long long)cnt[F_STRING],
                                (long long)n);
        t->strings = alloc(c, p, n, sizeof *t->strings, at);
        t->string_lens = alloc(c, p, n, sizeof *t->string_lens, at);
        if (!t->strings || !t->string_lens)
            return -1;
        return fill_payload(c, start, t, F_STRING, 0);
    }

    /* the payload's size is checked against the file before anything is allocated, so a
     * few bytes cannot ask for a terabyte */
    if (first == F_RAW) {
        if (raw.len != nbytes)
            return onnx_pb_fail(p, at, NULL, "tensor '%s': raw_data holds %zu bytes, but %lld "
                                "%s elements need %llu", tn, raw.len, (long long)n,
                                onnx_dtype_name(t->dtype), (unsigned long long)nbytes);
        if (!(t->data = alloc(c, p, (int64_t)nbytes, 1, at)))
            return -1;
        if (nbytes)
            memcpy(t->data, p->buf + raw.off, raw.len);
        return 0;
    }
    if (first) {
        int field = payload_field(t->dtype);
        if (first != field)
            return onnx_pb_fail(p, at, NULL, "tensor '%s': %s cannot hold %s values", tn,
                                payload_name(first), onnx_dtype_name(t->dtype));
        size_t w = payload_width(t->dtype, field);
        if ((uint64_t)cnt[field] != nbytes / w)
            return onnx_pb_fail(p, at, NULL, "tensor '%s': %s holds %lld values, but %lld %s "
                                "elements need %llu", tn, payload_name(field),
                                (long long)cnt[field], (long long)n,
                                onnx_dtype_name(t->dtype), (unsigned long long)(nbytes / w));
        if (!(t->data = alloc(c, p, (int64_t)nbytes, 1, at)))
            return -1;
        return fill_payload(c, start, t, field, w);
    }
    if (location == 1)
        return read_external(c, p, t, at, keys, vals, nentries);
    if (n)
        return onnx_pb_fail(p, at, NULL, "tensor '%s': %lld elements but no data", tn,
                            (long long)n);
    return (t->data = alloc(c, p, 0, 1, at)) ? 0 : -1;
}

/* ---------------------------------------------------------------- ValueInfoProto */

static int decode_dim(Ctx *c, OnnxPb *p, OnnxValueInfo *vi, int i)
{
    OnnxPbField f;
    int r;
    vi->dims[i] = -1;
    vi->dim_params[i] = NULL;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        if (f.num == 1) {
            if (get_i64(p, &f, "dim_value", &vi->dims[i]) < 0)
                return -1;
            vi->dim_params[i] = NULL;
        } else if (f.num == 2) {
            if (get_str(c, p, &f, "dim_param", 1, &vi->dim_params[i], NULL) < 0)
                return -1;
            vi->dims[i] = -1;
        }
    }
    return r;
}

static int decode_shape(Ctx *c, OnnxPb *p, OnnxValueInfo *vi)
{
    int64_t cnt[2];
    if (count_fields(p, cnt, 2, NULL) < 0)
        return -1;
    if (cnt[1] > ONNX_MAX_RANK)
        return onnx_pb_fail(p, p->pos, "dim", "%lld dims, over the rank limit of %d",
                            (long long)cnt[1], ONNX_MAX_RANK);
    OnnxPbField f;
    int r;
    vi->has_shape = 1;
    vi->ndim = 0;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        if (f.num != 1)
            continue;
        OnnxPbPath fr;
        OnnxPb sub;
        if (vi->ndim >= cnt[1])
            die("dim count changed between passes");
        if (open_sub(p, &f, &fr, "dim", vi->ndim, &sub) < 0 ||
            decode_dim(c, &sub, vi, vi->ndim) < 0)
            return -1;
        vi->ndim++;
    }
    return r;
}

/* TypeProto.Tensor, and SparseTensor, which has the same fields */
static int decode_tensor_type(Ctx *c, OnnxPb *p, OnnxValueInfo *vi)
{
    OnnxPbField f;
    int r;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        if (f.num == 1) {
            int64_t dt;
            if (get_i64(p, &f, "elem_type", &dt) < 0)
                return -1;
            if (dt < 0 || dt >= ONNX_NDTYPES)
                return onnx_pb_fail(p, f.at, "elem_type", "unknown element type %lld",
                                    (long long)dt);
            vi->dtype = (int)dt;
        } else if (f.num == 2) {
            OnnxPbPath fr;
            OnnxPb sub;
            if (open_sub(p, &f, &fr, "shape", -1, &sub) < 0 || decode_shape(c, &sub, vi) < 0)
                return -1;
        }
    }
    return r;
}

static int decode_type(Ctx *c, OnnxPb *p, OnnxValueInfo *vi)
{
    OnnxPbField f;
    int r;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        OnnxPbPath fr;
        OnnxPb sub;
        switch (f.num) {
        case 1:
        case 8:
            vi->kind = f.num == 1 ? ONNX_TYPE_TENSOR : ONNX_TYPE_SPARSE_TENSOR;
            if (open_sub(p, &f, &fr, f.num == 1 ? "tensor_type" : "sparse_tensor_type", -1,
                         &sub) < 0 ||
                decode_tensor_type(c, &sub, vi) < 0)
                return -1;
            break;
        case 4:
        case 5:
        case 7:
        case 9: {
            static const char *const names[] = {[4] = "sequence_type", [5] = "map_type",
                                                [7] = "opaque_type", [9] = "optional_type"};
            if (onnx_pb_want(p, &f, ONNX_PB_LEN, names[f.num]) < 0)
                return -1;
            vi->kind = f.num == 4 ? ONNX_TYPE_SEQUENCE
                       : f.num == 5 ? ONNX_TYPE_MAP
                       : f.num == 7 ? ONNX_TYPE_OPAQUE : ONNX_TYPE_OPTIONAL;
            break;
        }
        default:
            break;
        }
    }
    return r;
}

static int decode_value_info(Ctx *c, OnnxPb *p, OnnxValueInfo *vi)
{
    OnnxPbField f;
    int r;
    vi->name = c->empty;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        if (f.num == 1) {
            if (get_str(c, p, &f, "name", 1, &vi->name, NULL) < 0)
                return -1;
        } else if (f.num == 2) {
            OnnxPbPath fr;
            OnnxPb sub;
            if (open_sub(p, &f, &fr, "type", -1, &sub) < 0 || decode_type(c, &sub, vi) < 0)
                return -1;
        }
    }
    return r;
}

/* ---------------------------------------------------------------- AttributeProto */

static int decode_attr(Ctx *c, OnnxPb *p, OnnxAttr *a)
{
    static const int scalars[] = {7, ONNX_PB_FIXED32, 8, ONNX_PB_VARINT, 0};
    int64_t cnt[24];
    if (count_fields(p, cnt, 24, scalars) < 0)
        return -1;
    size_t at = p->pos;
    if (check_count(p, cnt[7], ONNX_MAX_ATTR_VALUES, "floats", NULL) < 0 ||
        check_count(p, cnt[8], ONNX_MAX_ATTR_VALUES, "ints", NULL) < 0 ||
        check_count(p, cnt[9], ONNX_MAX_ATTR_VALUES, "strings", NULL) < 0 ||
        check_count(p, cnt[10], ONNX_MAX_ATTR_VALUES, "tensors", NULL) < 0 ||
        check_count(p, cnt[11], ONNX_MAX_ATTR_VALUES, "graphs", NULL) < 0)
        return -1;
    a->floats = alloc(c, p, cnt[7], sizeof *a->floats, at);
    a->ints = alloc(c, p, cnt[8], sizeof *a->ints, at);
    a->strings = alloc(c, p, cnt[9], sizeof *a->strings, at);
    a->string_lens = alloc(c, p, cnt[9], sizeof *a->string_lens, at);
    a->tensors = alloc(c, p, cnt[10], sizeof *a->tensors, at);
    a->graphs = alloc(c, p, cnt[11], sizeof *a->graphs, at);
    if (!a->floats || !a->ints || !a->strings || !a->string_lens || !a->tensors || !a->graphs)
        return -1;
    a->name = a->s = a->ref_attr_name = c->empty;

    int64_t type = 0;
    unsigned seen = 0;   /* bit per field number below 32, for the type when it is absent */
    OnnxPbField f;
    int r;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        OnnxPbPath fr;
        OnnxPb sub;
        OnnxPbIter it;
        uint64_t v;
        if (f.num < 32)
            seen |= 1u << f.num;
        switch (f.num) {
        case 1:
            if (get_str(c, p, &f, "name", 1, &a->name, NULL) < 0)
                return -1;
            break;
        case 2: {
            uint32_t bits = (uint32_t)f.v;
            if (onnx_pb_want(p, &f, ONNX_PB_FIXED32, "f") < 0)
                return -1;
            memcpy(&a->f, &bits, sizeof a->f);
            break;
        }
        case 3:
            if (get_i64(p, &f, "i", &a->i) < 0)
                return -1;
            break;
        case 4:
            if (get_str(c, p, &f, "s", 0, &a->s, &a->slen) < 0)
                return -1;
            break;
        case 5:
            if (a->t)
                return onnx_pb_fail(p, f.at, "t", "the field appears twice");
            if (!(a->t = alloc(c, p, 1, sizeof *a->t, f.at)) ||
                open_sub(p, &f, &fr, "t", -1, &sub) < 0 || decode_tensor(c, &sub, a->t) < 0)
                return -1;
            break;
        case 6:
            if (a->g)
                return onnx_pb_fail(p, f.at, "g", "the field appears twice");
            if (!(a->g = alloc(c, p, 1, sizeof *a->g, f.at)) ||
                open_sub(p, &f, &fr, "g", -1, &sub) < 0 || decode_graph(c, &sub, a->g) < 0)
                return -1;
            break;
        case 7:
        case 8:
            if (onnx_pb_iter(p, &f, f.num == 7 ? ONNX_PB_FIXED32 : ONNX_PB_VARINT,
                             f.num == 7 ? "floats" : "ints", &it) < 0)
                return -1;
            while ((r = onnx_pb_iter_next(&it, &v)) > 0) {
                if (f.num == 7) {
                    uint32_t bits = (uint32_t)v;
                    if (a->nfloats >= cnt[7])
                        die("floats count changed between passes");
                    memcpy(&a->floats[a->nfloats++], &bits, sizeof(float));
                } else {
                    if (a->nints >= cnt[8])
                        die("ints count changed between passes");
                    a->ints[a->nints++] = as_i64(v);
                }
            }
            if (r < 0)
                return -1;
            break;
        case 9:
            if (a->nstrings >= cnt[9])
                die("strings count changed between passes");
            if (get_str(c, p, &f, "strings", 0, &a->strings[a->nstrings],
                        &a->string_lens[a->nstrings]) < 0)
                return -1;
            a->nstrings++;
            break;
        case 10:
            if (a->ntensors >= cnt[10])
                die("tensors count changed between passes");
            if (open_sub(p, &f, &fr, "tensors", a->ntensors, &sub) < 0 ||
                decode_tensor(c, &sub, &a->tensors[a->ntensors]) < 0)
                return -1;
            a->ntensors++;
            break;
        case 11:
            if (a->ngraphs >= cnt[11])
                die("graphs count changed between passes");
            if (open_sub(p, &f, &fr, "graphs", a->ngraphs, &sub) < 0 ||
                decode_graph(c, &sub, &a->graphs[a->ngraphs]) < 0)
                return -1;
            a->ngraphs++;
            break;
        case 14:
        case 15:
        case 22:
        case 23: {
            static const char *const names[] = {[14] = "tp", [15] = "type_protos",
                                                [22] = "sparse_tensor",
                                                [23] = "sparse_tensors"};
            if (onnx_pb_want(p, &f, ONNX_PB_LEN, names[f.num]) < 0)
                return -1;
            break;
        }
        case 20:
            if (get_i64(p, &f, "type", &type) < 0)
                return -1;
            if (type < 0 || type > ONNX_ATTR_TYPE_PROTOS)
                return onnx_pb_fail(p, f.at, "type", "unknown attribute type %lld",
                                    (long long)type);
            break;
        case 21:
            if (get_str(c, p, &f, "ref_attr_name", 1, &a->ref_attr_name, NULL) < 0)
                return -1;
            break;
        default:
            break;
        }
    }
    if (r < 0)
        return -1;
    if (!a->name[0])
        return onnx_pb_fail(p, at, NULL, "attribute has no name");
    if (type == 0) {
        /* files before IR version 3 left the type out: take the field that is there */
        static const int infer[][2] = {
            {2, ONNX_ATTR_FLOAT}, {3, ONNX_ATTR_INT}, {4, ONNX_ATTR_STRING},
            {5, ONNX_ATTR_TENSOR}, {6, ONNX_ATTR_GRAPH}, {22, ONNX_ATTR_SPARSE_TENSOR},
            {14, ONNX_ATTR_TYPE_PROTO}, {7, ONNX_ATTR_FLOATS}, {8, ONNX_ATTR_INTS},
            {9, ONNX_ATTR_STRINGS}, {10, ONNX_ATTR_TENSORS}, {11, ONNX_ATTR_GRAPHS},
            {23, ONNX_ATTR_SPARSE_TENSORS}, {15, ONNX_ATTR_TYPE_PROTOS}};
        for (size_t i = 0; i < sizeof infer / sizeof infer[0] && !type; i++)
            if (seen & (1u << infer[i][0]))
                type = infer[i][1];
    }
    a->type = (int)type;
    if (a->type == ONNX_ATTR_TENSOR && !a->t)
        return onnx_pb_fail(p, at, NULL, "attribute '%s' of type TENSOR has no tensor", a->name);
    if (a->type == ONNX_ATTR_GRAPH && !a->g)
        return onnx_pb_fail(p, at, NULL, "attribute '%s' of type GRAPH has no graph", a->name);
    return 0;
}

/* ---------------------------------------------------------------- NodeProto */

static int decode_node(Ctx *c, OnnxPb *p, OnnxNode *n)
{
    int64_t cnt[8];
    if (count_fields(p, cnt, 8, NULL) < 0)
        return -1;
    size_t at = p->pos;
    if (check_count(p, cnt[1], INT_MAX, "inputs", NULL) < 0 ||
        check_count(p, cnt[2], INT_MAX, "outputs", NULL) < 0 ||
        check_count(p, cnt[5], ONNX_MAX_ATTRS, "attributes", NULL) < 0)
        return -1;
    n->inputs = alloc(c, p, cnt[1], sizeof *n->inputs, at);
    n->outputs = alloc(c, p, cnt[2], sizeof *n->outputs, at);
    n->attrs = alloc(c, p, cnt[5], sizeof *n->attrs, at);
    if (!n->inputs || !n->outputs || !n->attrs)
        return -1;
    n->name = n->op_type = n->domain = c->empty;

    OnnxPbField f;
    int r;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        OnnxPbPath fr;
        OnnxPb sub;
        switch (f.num) {
        case 1:
            if (n->ninputs >= cnt[1])
                die("input count changed between passes");
            if (get_str(c, p, &f, "input", 1, &n->inputs[n->ninputs], NULL) < 0)
                return -1;
            n->ninputs++;
            break;
        case 2:
            if (n->noutputs >= cnt[2])
                die("output count changed between passes");
            if (get_str(c, p, &f, "output", 1, &n->outputs[n->noutputs], NULL) < 0)
                return -1;
            n->noutputs++;
            break;
        case 3:
            if (get_str(c, p, &f, "name", 1, &n->name, NULL) < 0)
                return -1;
            break;
        case 4:
            if (get_str(c, p, &f, "op_type", 1, &n->op_type, NULL) < 0)
                return -1;
            break;
        case 5:
            if (n->nattrs >= cnt[5])
                die("attribute count changed between passes");
            if (open_sub(p, &f, &fr, "attribute", n->nattrs, &sub) < 0 ||
                decode_attr(c, &sub, &n->attrs[n->nattrs]) < 0)
                return -1;
            n->nattrs++;
            break;
        case 7:
            if (get_str(c, p, &f, "domain", 1, &n->domain, NULL) < 0)
                return -1;
            break;
        default:
            break;
        }
    }
    if (r < 0)
        return -1;
    if (!n->op_type[0])
        return onnx_pb_fail(p, at, NULL, "node '%s' has no op_type", n->name);
    return 0;
}

/* ---------------------------------------------------------------- GraphProto */

static int decode_graph(Ctx *c, OnnxPb *p, OnnxGraph *g)
{
    int64_t cnt[16];
    if (count_fields(p, cnt, 16, NULL) < 0)
        return -1;
    size_t at = p->pos;
    if (check_count(p, cnt[1], c->lim.nodes, "nodes", "--max-nodes") < 0 ||
        check_count(p, cnt[5], INT_MAX, "initializers", NULL) < 0 ||
        check_count(p, cnt[11], INT_MAX, "inputs", NULL) < 0 ||
        check_count(p, cnt[12], INT_MAX, "outputs", NULL) < 0 ||
        check_count(p, cnt[13], INT_MAX, "value_info entries", NULL) < 0)
        return -1;
    g->nodes = alloc(c, p, cnt[1], sizeof *g->nodes, at);
    g->initializers = alloc(c, p, cnt[5], sizeof *g->initializers, at);
    g->inputs = alloc(c, p, cnt[11], sizeof *g->inputs, at);
    g->outputs = alloc(c, p, cnt[12], sizeof *g->outputs, at);
    g->value_info = alloc(c, p, cnt[13], sizeof *g->value_info, at);
    if (!g->nodes || !g->initializers || !g->inputs || !g->outputs || !g->value_info)
        return -1;
    g->name = c->empty;

    OnnxPbField f;
    int r;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        OnnxPbPath fr;
        OnnxPb sub;
        OnnxValueInfo *vi;
        const char *what;
        switch (f.num) {
        case 1:
            if (g->nnodes >= cnt[1])
                die("node count changed between passes");
            if (open_sub(p, &f, &fr, "node", g->nnodes, &sub) < 0 ||
                decode_node(c, &sub, &g->nodes[g->nnodes]) < 0)
                return -1;
            g->nnodes++;
            break;
        case 2:
            if (get_str(c, p, &f, "name", 1, &g->name, NULL) < 0)
                return -1;
            break;
        case 5:
            if (g->ninit >= cnt[5])
                die("initializer count changed between passes");
            if (open_sub(p, &f, &fr, "initializer", g->ninit, &sub) < 0 ||
                decode_tensor(c, &sub, &g->initializers[g->ninit]) < 0)
                return -1;
            g->ninit++;
            break;
        case 11:
        case 12:
        case 13:
            if (f.num == 11) {
                if (g->ninputs >= cnt[11])
                    die("input count changed between passes");
                fr.index = g->ninputs;
                vi = &g->inputs[g->ninputs++];
                what = "input";
            } else if (f.num == 12) {
                if (g->noutputs >= cnt[12])
                    die("output count changed between passes");
                fr.index = g->noutputs;
                vi = &g->outputs[g->noutputs++];
                what = "output";
            } else {
                if (g->nvalue_info >= cnt[13])
                    die("value_info count changed between passes");
                fr.index = g->nvalue_info;
                vi = &g->value_info[g->nvalue_info++];
                what = "value_info";
            }
            if (open_sub(p, &f, &fr, what, fr.index, &sub) < 0 ||
                decode_value_info(c, &sub, vi) < 0)
                return -1;
            break;
        case 15:
            if (onnx_pb_want(p, &f, ONNX_PB_LEN, "sparse_initializer") < 0)
                return -1;
            g->nsparse_init++;
            break;
        default:
            break;
        }
    }
    return r;
}

/* ---------------------------------------------------------------- ModelProto */

static int decode_opset(Ctx *c, OnnxPb *p, OnnxOpset *o)
{
    OnnxPbField f;
    int r;
    o->domain = c->empty;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        if (f.num == 1 && get_str(c, p, &f, "domain", 1, &o->domain, NULL) < 0)
            return -1;
        if (f.num == 2 && get_i64(p, &f, "version", &o->version) < 0)
            return -1;
    }
    return r;
}

static int decode_model(Ctx *c, OnnxPb *p, OnnxModel *m)
{
    int64_t cnt[9];
    if (count_fields(p, cnt, 9, NULL) < 0)
        return -1;
    size_t at = p->pos;
    if (check_count(p, cnt[8], INT_MAX, "opset imports", NULL) < 0)
        return -1;
    if (!(m->opsets = alloc(c, p, cnt[8], sizeof *m->opsets, at)))
        return -1;
    m->producer = m->producer_version = m->domain = c->empty;

    int has_graph = 0;
    OnnxPbField f;
    int r;
    while ((r = onnx_pb_next(p, &f)) > 0) {
        OnnxPbPath fr;
        OnnxPb sub;
        switch (f.num) {
        case 1:
            if (get_i64(p, &f, "ir_version", &m->ir_version) < 0)
                return -1;
            break;
        case 2:
            if (get_str(c, p, &f, "producer_name", 0, &m->producer, NULL) < 0)
                return -1;
            break;
        case 3:
            if (get_str(c, p, &f, "producer_version", 0, &m->producer_version, NULL) < 0)
                return -1;
            break;
        case 4:
            if (get_str(c, p, &f, "domain", 0, &m->domain, NULL) < 0)
                return -1;
            break;
        case 5:
            if (get_i64(p, &f, "model_version", &m->model_version) < 0)
                return -1;
            break;
        case 7:
            if (has_graph)
                return onnx_pb_fail(p, f.at, "graph", "the field appears twice");
            if (open_sub(p, &f, &fr, "graph", -1, &sub) < 0 ||
                decode_graph(c, &sub, &m->graph) < 0)
                return -1;
            has_graph = 1;
            break;
        case 8:
            if (m->nopsets >= cnt[8])
                die("opset count changed between passes");
            if (open_sub(p, &f, &fr, "opset_import", m->nopsets, &sub) < 0 ||
                decode_opset(c, &sub, &m->opsets[m->nopsets]) < 0)
                return -1;
            m->nopsets++;
            break;
        case 25:
            if (onnx_pb_want(p, &f, ONNX_PB_LEN, "functions") < 0)
                return -1;
            m->nfunctions++;
            break;
        default:
            break;
        }
    }
    if (r < 0)
        return -1;
    if (!has_graph)
        return onnx_pb_fail(p, at, NULL, "the model has no graph");
    return 0;
}

/* ---------------------------------------------------------------- loading */

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void file_too_large(char *err, size_t errlen, const char *path, int64_t max)
{
    if (max % (1 << 20) == 0)
        errf(err, errlen, "%s: larger than the limit of %lld MiB (--max-file-mb)", path,
             (long long)(max >> 20));
    else
        errf(err, errlen, "%s: larger than the limit of %lld bytes (--max-file-mb)", path,
             (long long)max);
}

/* Reads a whole file into a malloc'ed buffer, refusing one over max bytes. */
static uint8_t *read_file(const char *path, int64_t max, size_t *size, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    /* the size is only a hint: the file may change or be a pipe */
    size_t cap = 64 * 1024, n = 0;
    long hint;
    if (fseek(fp, 0, SEEK_END) == 0 && (hint = ftell(fp)) >= 0)
        cap = hint < 64L * 1024 * 1024 ? (size_t)hint + 1 : (size_t)64 * 1024 * 1024;
    rewind(fp);
    uint8_t *buf = NULL;
    for (;;) {
        if (n == cap || !buf) {
            size_t ncap = buf ? cap * 2 : cap;
            if (ncap > (size_t)max + 1)
                ncap = (size_t)max + 1;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                errf(err, errlen, "%s: out of memory reading the file", path);
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        size_t k = fread(buf + n, 1, cap - n, fp);
        n += k;
        if (n > (size_t)max) {
            file_too_large(err, errlen, path, max);
            goto fail;
        }
        if (k == 0) {
            if (ferror(fp)) {
                errf(err, errlen, "%s: read error: %s", path, strerror(errno));
                goto fail;
            }
            break;
        }
    }
    fclose(fp);
    *size = n;
    return buf;
fail:
    free(buf);
    fclose(fp);
    return NULL;
}

/* The directory part of path ("." when there is none); malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, !slash ? "." : path, n);
    d[n] = 0;
    return d;
}

static int start(Ctx *c, OnnxPb *p, OnnxPbPath *root, const void *data, size_t size,
                 const char *name, const char *dir, const OnnxLimits *lim, char *err,
                 size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    memset(c, 0, sizeof *c);
    c->dir = dir;
    c->lim = resolve_limits(lim);
    *root = (OnnxPbPath){NULL, NULL, -1};
    *p = (OnnxPb){.buf = data, .pos = 0, .end = size, .depth = 0, .path = root,
                  .file = name ? name : "<buffer>", .err = err, .errlen = errlen};
    if (size > (uint64_t)c->lim.file_bytes) {
        file_too_large(err, errlen, p->file, c->lim.file_bytes);
        return -1;
    }
    if (!data && size) {
        errf(err, errlen, "%s: no data", p->file);
        return -1;
    }
    if (!(c->empty = alloc(c, p, 1, 1, 0)))
        return -1;
    return 0;
}

OnnxModel *onnx_load_buffer_ex(const void *data, size_t size, const char *name_for_errors,
                               const char *model_dir, const OnnxLimits *lim, char *err, size_t errlen)
{
    Ctx c;
    OnnxPb p;
    OnnxPbPath root;
    if (start(&c, &p, &root, data, size, name_for_errors, model_dir, lim, err, errlen) < 0) {
        arena_free(c.arena);
        return NULL;
    }
    OnnxModel *m = alloc(&c, &p, 1, sizeof *m, 0);
    if (!m || decode_model(&c, &p, m) < 0) {
        arena_free(c.arena);
        return NULL;
    }
    m->limits = c.lim;
    m->arena = c.arena;
    return m;
}

OnnxModel *onnx_load_buffer(const void *data, size_t size, const char *name_for_errors,
                            const char *model_dir, char *err, size_t errlen)
{
    return onnx_load_buffer_ex(data, size, name_for_errors, model_dir, NULL, err, errlen);
}

OnnxModel *onnx_load_file_ex(const char *path, const OnnxLimits *lim, char *err, size_t errlen)
{
    size_t size;
    uint8_t *buf = read_file(path, resolve_limits(lim).file_bytes, &size, err, errlen);
    if (!buf)
        return NULL;
    char *dir = dir_of(path);
    OnnxModel *m = NULL;
    if (!dir)
        errf(err, errlen, "%s: out of memory", path);
    else
        m = onnx_load_buffer_ex(buf, size, path, dir, lim, err, errlen);
    free(dir);
    free(buf);
    return m;
}

OnnxModel *onnx_load_file(const char *path, char *err, size_t errlen)
{
    return onnx_load_file_ex(path, NULL, err, errlen);
}

void onnx_free(OnnxModel *m)
{
    if (m)
        arena_free(m->arena);   /* m itself is in the arena */
}

/* A tensor loaded on its own, with the arena it lives in. t comes first, so the
 * OnnxTensor pointer handed out is also this struct's. */
typedef struct {
    OnnxTensor t;
    struct OnnxChunk *arena;
} TensorFile;

OnnxTensor *onnx_load_tensor_buffer_ex(const void *data, size_t size, const char *name_for_errors,
                                       const char *model_dir, const OnnxLimits *lim, char *err,
                                       size_t errlen)
{
    Ctx c;
    OnnxPb p;
    OnnxPbPath root;
    if (start(&c, &p, &root, data, size, name_for_errors, model_dir, lim, err, errlen) < 0) {
        arena_free(c.arena);
        return NULL;
    }
    TensorFile *tf = alloc(&c, &p, 1, sizeof *tf, 0);
    if (!tf || decode_tensor(&c, &p, &tf->t) < 0) {
        arena_free(c.arena);
        return NULL;
    }
    tf->arena = c.arena;
    return &tf->t;
}

OnnxTensor *onnx_load_tensor_buffer(const void *data, size_t size, const char *name_for_errors,
                                    const char *model_dir, char *err, size_t errlen)
{
    return onnx_load_tensor_buffer_ex(data, size, name_for_errors, model_dir, NULL, err, errlen);
}

OnnxTensor *onnx_load_tensor_file_ex(const char *path, const OnnxLimits *lim, char *err, size_t errlen)
{
    size_t size;
    uint8_t *buf = read_file(path, resolve_limits(lim).file_bytes, &size, err, errlen);
    if (!buf)
        return NULL;
    char *dir = dir_of(path);
    OnnxTensor *t = NULL;
    if (!dir)
        errf(err, errlen, "%s: out of memory", path);
    else
        t = onnx_load_tensor_buffer_ex(buf, size, path, dir, lim, err, errlen);
    free(dir);
    free(buf);
    return t;
}

OnnxTensor *onnx_load_tensor_file(const char *path, char *err, size_t errlen)
{
    return onnx_load_tensor_file_ex(path, NULL, err, errlen);
}

void onnx_tensor_free(OnnxTensor *t)
{
    if (t)
        arena_free(((TensorFile *)t)->arena);
}

/* ---------------------------------------------------------------- queries */

const OnnxAttr *onnx_node_attr(const OnnxNode *n, const char *name)
{
    for (int i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}

static int default_domain(const char *d)
{
    return !d[0] || !strcmp(d, "ai.onnx");
}

int64_t onnx_opset(const OnnxModel *m, const char *domain)
{
    int dflt = default_domain(domain);
    for (int i = 0; i < m->nopsets; i++) {
        const char *d = m->opsets[i].domain;
        if (dflt ? default_domain(d) : !strcmp(d, domain))
            return m->opsets[i].version;
    }
    return -1;
}
