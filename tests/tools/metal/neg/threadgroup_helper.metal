// expect: local address space
#include <metal_stdlib>
using namespace metal;
static float f(float x) { threadgroup float t[4]; t[0] = x; return t[0]; }
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = f(y[i]); }
