/* pb.c - a protobuf wire-format reader: just enough for ONNX files.
 * requires: the whole serialized message in memory; breaks: nothing (never writes to it).
 *
 * Reads tags, varints (at most 10 bytes, no bits past the 64th), fixed32, fixed64 and
 * length-delimited fields; every read is checked against the end of the enclosing message.
 * Unknown fields are skipped whatever their wire type, except groups, which proto3 dropped
 * and ONNX never uses: they are rejected. Errors name the field path and the byte offset. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx.h"

enum { VARINT_OK, VARINT_TRUNCATED, VARINT_OVERFLOW };

/* Decodes the varint at buf[*pos], not reading at or past end. */
static int varint(const uint8_t *buf, size_t *pos, size_t end, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = *pos;
    for (int shift = 0; shift < 64; shift += 7) {
        if (i >= end)
            return VARINT_TRUNCATED;
        uint8_t b = buf[i++];
        /* the tenth byte has room for one bit only */
        if (shift == 63 && (b & 0x7e))
            return VARINT_OVERFLOW;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pos = i;
            *out = v;
            return VARINT_OK;
        }
    }
    return VARINT_OVERFLOW;
}

const char *onnx_pb_wire_name(int wire)
{
    switch (wire) {
    case ONNX_PB_VARINT: return "varint";
    case ONNX_PB_FIXED64: return "fixed64";
    case ONNX_PB_LEN: return "length-delimited";
    case 3: return "start-group";
    case 4: return "end-group";
    case ONNX_PB_FIXED32: return "fixed32";
    default: return "invalid";
    }
}

/* Appends to err[*n] without overflowing errlen; *n may pass errlen (then nothing more
 * is written). */
static void append(char *err, size_t errlen, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (*n < errlen) {
        int k = vsnprintf(err + *n, errlen - *n, fmt, ap);
        if (k > 0)
            *n += (size_t)k;
    }
    va_end(ap);
}

int onnx_pb_fail(OnnxPb *p, size_t off, const char *field, const char *fmt, ...)
{
    if (!p->err || p->errlen == 0)
        return -1;
    size_t n = 0;
    append(p->err, p->errlen, &n, "%s: ", p->file ? p->file : "<buffer>");

    /* the frames run from the innermost out; print them outermost first */
    const OnnxPbPath *frames[64];
    int nframes = 0;
    for (const OnnxPbPath *fr = p->path; fr && nframes < 64; fr = fr->up)
        if (fr->field)
            frames[nframes++] = fr;
    int first = 1;
    for (int i = nframes - 1; i >= 0; i--) {
        append(p->err, p->errlen, &n, "%s%s", first ? "" : ".", frames[i]->field);
        if (frames[i]->index >= 0)
            append(p->err, p->errlen, &n, "[%lld]", (long long)frames[i]->index);
        first = 0;
    }
    if (field) {
        append(p->err, p->errlen, &n, "%s%s", first ? "" : ".", field);
        first = 0;
    }
    if (!first)
        append(p->err, p->errlen, &n, ": ");

    va_list ap;
    va_start(ap, fmt);
    if (n < p->errlen) {
        int k = vsnprintf(p->err + n, p->errlen - n, fmt, ap);
        if (k > 0)
            n += (size_t)k;
    }
    va_end(ap);
    append(p->err, p->errlen, &n, " at byte %zu", off);
    return -1;
}

static int varint_fail(OnnxPb *p, int why, size_t at, const char *what, uint32_t num)
{
    if (why == VARINT_TRUNCATED)
        return num ? onnx_pb_fail(p, at, NULL, "truncated varint in %s %u", what, num)
                   : onnx_pb_fail(p, at, NULL, "truncated varint in %s", what);
    return num ? onnx_pb_fail(p, at, NULL, "varint longer than 64 bits in %s %u", what, num)
               : onnx_pb_fail(p, at, NULL, "varint longer than 64 bits in %s", what);
}

int onnx_pb_next(OnnxPb *p, OnnxPbField *f)
{
    if (p->pos >= p->end)
        return 0;
    memset(f, 0, sizeof *f);
    f->at = p->pos;

    uint64_t tag;
    int r = varint(p->buf, &p->pos, p->end, &tag);
    if (r != VARINT_OK)
        return varint_fail(p, r, f->at, "field tag", 0);
    if (tag > UINT32_MAX || (tag >> 3) == 0)
        return onnx_pb_fail(p, f->at, NULL, "invalid field number %llu",
                            (unsigned long long)(tag >> 3));
    f->num = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);

    size_t left;
    switch (f->wire) {
    case ONNX_PB_VARINT:
        r = varint(p->buf, &p->pos, p->end, &f->v);
        if (r != VARINT_OK)
            return varint_fail(p, r, f->at, "field", f->num);
        return 1;
    case ONNX_PB_FIXED64:
    case ONNX_PB_FIXED32: {
        size_t w = f->wire == ONNX_PB_FIXED64 ? 8 : 4;
        if (p->end - p->pos < w)
            return onnx_pb_fail(p, f->at, NULL, "truncated %s field %u",
                                onnx_pb_wire_name(f->wire), f->num);
        uint64_t v = 0;
        for (size_t i = 0; i < w; i++)
            v |= (uint64_t)p->buf[p->pos + i] << (8 * i);
        f->v = v;
        p->pos += w;
        return 1;
    }
    case ONNX_PB_LEN: {
        uint64_t len;
        r = varint(p->buf, &p->pos, p->end, &len);
        if (r != VARINT_OK)
            return varint_fail(p, r, f->at, "length of field", f->num);
        left = p->end - p->pos;
        if (len > left)
            return onnx_pb_fail(p, f->at, NULL,
                                "truncated length-delimited field %u (length %llu, %zu bytes "
                                "left)",
                                f->num, (unsigned long long)len, left);
        f->off = p->pos;
        f->len = (size_t)len;
        p->pos += (size_t)len;
        return 1;
    }
    case 3:
    case 4:
        return onnx_pb_fail(p, f->at, NULL, "group (wire type %d) in field %u: groups are not "
                            "supported", f->wire, f->num);
    default:
        return onnx_pb_fail(p, f->at, NULL, "invalid wire type %d in field %u", f->wire, f->num);
    }
}

int onnx_pb_sub(OnnxPb *p, const OnnxPbField *f, const OnnxPbPath *frame, OnnxPb *sub)
{
    if (f->wire != ONNX_PB_LEN)
        return onnx_pb_fail(p, f->at, frame->field, "expected a message (length-delimited), "
                            "found wire type %d (%s)", f->wire, onnx_pb_wire_name(f->wire));
    *sub = *p;
    sub->pos = f->off;
    sub->end = f->off + f->len;
    sub->depth = p->depth + 1;
    sub->path = frame;
    if (sub->depth > ONNX_MAX_DEPTH)
        return onnx_pb_fail(sub, f->at, NULL, "messages nested deeper than %d levels",
                            ONNX_MAX_DEPTH);
    return 0;
}

int onnx_pb_want(OnnxPb *p, const OnnxPbField *f, int wire, const char *name)
{
    if (f->wire == wire)
        return 0;
    return onnx_pb_fail(p, f->at, name, "expected wire type %d (%s), found %d (%s)", wire,
                        onnx_pb_wire_name(wire), f->wire, onnx_pb_wire_name(f->wire));
}

/* Counts the scalars of a packed field; checks each one. */
static int count_packed(OnnxPb *p, const OnnxPbField *f, int wire, int64_t *n)
{
    if (wire == ONNX_PB_FIXED32 || wire == ONNX_PB_FIXED64) {
        size_t w = wire == ONNX_PB_FIXED32 ? 4 : 8;
        if (f->len % w)
            return onnx_pb_fail(p, f->at, NULL, "packed %s field %u has %zu bytes, not a "
                                "multiple of %zu", onnx_pb_wire_name(wire), f->num, f->len, w);
        *n += (int64_t)(f->len / w);
        return 0;
    }
    size_t pos = f->off, end = f->off + f->len;
    while (pos < end) {
        uint64_t v;
        size_t at = pos;
        int r = varint(p->buf, &pos, end, &v);
        if (r != VARINT_OK)
            return varint_fail(p, r, at, "packed field", f->num);
        (*n)++;
    }
    return 0;
}

int onnx_pb_count(const OnnxPb *p, const int8_t *scalar, int n, int64_t *counts)
{
    OnnxPb q = *p;
    OnnxPbField f;
    int r;
    memset(counts, 0, (size_t)n * sizeof *counts);
    while ((r = onnx_pb_next(&q, &f)) > 0) {
        if (f.num >= (uint32_t)n)
            continue;
        if (scalar[f.num] >= 0 && f.wire == ONNX_PB_LEN) {
            if (count_packed(&q, &f, scalar[f.num], &counts[f.num]) < 0)
                return -1;
        } else {
            counts[f.num]++;
        }
    }
    return r;   /* 0 at the end, or -1 with the message in p's err (q shares it) */
}

int onnx_pb_iter(OnnxPb *p, const OnnxPbField *f, int wire, const char *name, OnnxPbIter *it)
{
    memset(it, 0, sizeof *it);
    it->p = p;
    it->name = name;
    it->wire = wire;
    if (f->wire == ONNX_PB_LEN) {
        it->pos = f->off;
        it->end = f->off + f->len;
        if ((wire == ONNX_PB_FIXED32 && f->len % 4) || (wire == ONNX_PB_FIXED64 && f->len % 8))
            return onnx_pb_fail(p, f->at, name, "packed %s field has %zu bytes",
                                onnx_pb_wire_name(wire), f->len);
        return 0;
    }
    if (onnx_pb_want(p, f, wire, name) < 0)
        return -1;
    it->single = 1;
    it->v = f->v;
    return 0;
}

int onnx_pb_iter_next(OnnxPbIter *it, uint64_t *v)
{
    if (it->single) {
        if (it->single > 1)
            return 0;
        it->single = 2;
        *v = it->v;
        return 1;
    }
    if (it->pos >= it->end)
        return 0;
    const uint8_t *b = it->p->buf;
    if (it->wire == ONNX_PB_VARINT) {
        size_t at = it->pos;
        int r = varint(b, &it->pos, it->end, v);
        if (r == VARINT_TRUNCATED)
            return onnx_pb_fail(it->p, at, it->name, "truncated varint in packed field");
        if (r == VARINT_OVERFLOW)
            return onnx_pb_fail(it->p, at, it->name, "varint longer than 64 bits in packed "
                                "field");
        return 1;
    }
    size_t w = it->wire == ONNX_PB_FIXED64 ? 8 : 4;
    if (it->end - it->pos < w)
        return onnx_pb_fail(it->p, it->pos, it->name, "truncated packed field");
    uint64_t x = 0;
    for (size_t i = 0; i < w; i++)
        x |= (uint64_t)b[it->pos + i] << (8 * i);
    it->pos += w;
    *v = x;
    return 1;
}
