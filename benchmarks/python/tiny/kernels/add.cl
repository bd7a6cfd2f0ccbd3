// y[i] += s; one work-item per element.
__kernel void add(__global float *y, float s) { y[get_global_id(0)] += s; }
