__kernel void broken(__global float *y) {
  y[get_global_id(0)] = undeclared_value;
}
