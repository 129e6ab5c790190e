// simd/simd.h: the vector types of tests/tools/metal/metal_stdlib
#include <metal_stdlib>
