// expect: address space
#include <metal_stdlib>
using namespace metal;
static float first(thread const float* p) { return p[0]; }
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = first(y); }
