/* The Metal host: compiles NAME.metal at run time (or use a .metallib from xcrun metal),
 * makes one pipeline per launch, keeps the weights and the arena in device buffers and
 * dispatches the launches in order in one compute encoder. Build on macOS/iOS with
 * -framework Metal -framework Foundation (see the Makefile). */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <stdio.h>

#include "{{FILE}}.h"
#include "kgen_gpu.h"

#ifndef {{MACRO}}_METAL_FILE
#define {{MACRO}}_METAL_FILE "{{FILE}}.metal"
#endif
{{WEIGHTS}}{{TABLES}}
static id<MTLDevice> {{NAME}}_dev;
static id<MTLCommandQueue> {{NAME}}_queue;
static NSMutableArray *{{NAME}}_pipes;
static NSMutableArray *{{NAME}}_bufs;   /* one per buffer entry */
static id<MTLBuffer> {{NAME}}_arena;
static double {{NAME}}_ms;
{{READ}}
static int {{NAME}}_init(void)
{
    const kgen_gpu_program *p = &{{NAME}}_program;
    NSError *err = nil;
    {{NAME}}_dev = MTLCreateSystemDefaultDevice();
    if (!{{NAME}}_dev) {
        fprintf(stderr, "{{NAME}}: Metal: no device\n");
        return KGEN_ERR_DEVICE;
    }
    NSString *src = [NSString stringWithContentsOfFile:@{{MACRO}}_METAL_FILE encoding:NSUTF8StringEncoding error:&err];
    id<MTLLibrary> lib = src ? [{{NAME}}_dev newLibraryWithSource:src options:nil error:&err] : nil;
    if (!lib) {
        fprintf(stderr, "{{NAME}}: Metal: %s: %s\n", {{MACRO}}_METAL_FILE, err.localizedDescription.UTF8String);
        return KGEN_ERR_DEVICE;
    }
    {{NAME}}_queue = [{{NAME}}_dev newCommandQueue];
    {{NAME}}_pipes = [NSMutableArray array];
    {{NAME}}_bufs = [NSMutableArray array];
    for (int i = 0; i < p->nlaunches; i++) {
        id<MTLFunction> f = [lib newFunctionWithName:@(p->launches[i].name)];
        id<MTLComputePipelineState> ps = f ? [{{NAME}}_dev newComputePipelineStateWithFunction:f error:&err] : nil;
        if (!ps) {
            fprintf(stderr, "{{NAME}}: Metal: kernel %s: %s\n", p->launches[i].name, err ? err.localizedDescription.UTF8String : "not found");
            return KGEN_ERR_DEVICE;
        }
        [{{NAME}}_pipes addObject:ps];
    }
    {{NAME}}_arena = [{{NAME}}_dev newBufferWithLength:(p->arena_bytes ? p->arena_bytes : 4) options:MTLResourceStorageModeShared];
    for (int i = 0; i < p->nbuffers; i++) {
        const kgen_gpu_buffer *b = &p->buffers[i];
        size_t n = b->bytes ? b->bytes : 4;
        id<MTLBuffer> mb = b->kind == KGEN_GPU_ARENA ? {{NAME}}_arena
                         : b->kind == KGEN_GPU_WEIGHT && b->bytes ? [{{NAME}}_dev newBufferWithBytes:p->weights[b->index] length:n options:MTLResourceStorageModeShared]
                         : [{{NAME}}_dev newBufferWithLength:n options:MTLResourceStorageModeShared];
        [{{NAME}}_bufs addObject:mb];
    }
    return KGEN_OK;
}

{{SIGNATURE}}
{
    const kgen_gpu_program *p = &{{NAME}}_program;
{{IO}}    (void){{ARENA}};
{{DIM_CHECKS}}    if (!{{NAME}}_dev && {{NAME}}_init() != KGEN_OK)
        return KGEN_ERR_DEVICE;
    @autoreleasepool {
        for (int i = 0; i < p->nbuffers; i++)
            if (p->buffers[i].kind == KGEN_GPU_INPUT && p->buffers[i].bytes)
                memcpy([(id<MTLBuffer>){{NAME}}_bufs[i] contents], ins[p->buffers[i].index], p->buffers[i].bytes);
        id<MTLCommandBuffer> cb = [{{NAME}}_queue commandBuffer];
        id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];
{{VALUES_START}}        for (int i = 0; i < p->nlaunches; i++) {
            const kgen_gpu_launch *l = &p->launches[i];
            [enc setComputePipelineState:{{NAME}}_pipes[i]];
            for (int a = 0; a < l->nargs; a++) {
                const kgen_gpu_buffer *b = &p->buffers[l->args[a]];
                [enc setBuffer:{{NAME}}_bufs[l->args[a]] offset:(b->kind == KGEN_GPU_ARENA ? b->offset : 0) atIndex:a];
            }
{{DIM_ARGS}}            [enc dispatchThreadgroups:MTLSizeMake(l->grid[0], l->grid[1], l->grid[2])
                threadsPerThreadgroup:MTLSizeMake(l->block[0], l->block[1], l->block[2])];
{{AFTER}}        }
        [enc endEncoding];
        [cb commit];
        [cb waitUntilCompleted];
        if (cb.error) {
            fprintf(stderr, "{{NAME}}: Metal: %s\n", cb.error.localizedDescription.UTF8String);
            return KGEN_ERR_DEVICE;
        }
        {{NAME}}_ms = (cb.GPUEndTime - cb.GPUStartTime) * 1e3;
{{VALUES_MS}}        for (int i = 0; i < p->nbuffers; i++)
            if (p->buffers[i].kind == KGEN_GPU_OUTPUT && p->buffers[i].bytes)
                memcpy(outs[p->buffers[i].index], [(id<MTLBuffer>){{NAME}}_bufs[i] contents], p->buffers[i].bytes);
    }
{{DIM_OUT}}    return KGEN_OK;
}

double {{NAME}}_device_ms(void)
{
    return {{NAME}}_ms;
}

void {{NAME}}_release(void)
{
    {{NAME}}_pipes = nil;
    {{NAME}}_bufs = nil;
    {{NAME}}_arena = nil;
    {{NAME}}_queue = nil;
    {{NAME}}_dev = nil;
}
