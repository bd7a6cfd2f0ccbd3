// Shared by the feature test's kernels; found through the description's "include".
#define WORKGROUP_SUM_MAX 256
