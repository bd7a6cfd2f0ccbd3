#!/usr/bin/env sh
# fusion_e2e_gpu.sh: inside an unpacked GPU bundle (scripts/gpu-bundle.sh), the fusion
# end-to-end cases of tests/fusion/CMakeLists.txt on the cuda backend (issue 9): each
# graph fused with cgfuse, both run on cuda, the fused outputs checked against the
# unfused ones (bit-exact for integer graphs, ULP-bounded for floats). Prints one
# PASS/FAIL line per case and a closing count.
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here" || exit 1
mkdir -p wrap
for t in cgc cgfuse cgrun; do
  printf '#!/bin/sh\nexec "%s/run.sh" %s "$@"\n' "$here" "$t" > "wrap/$t"
  chmod +x "wrap/$t"
done
D=src/tests/fusion/data
E=src/examples
pass=0
fail=0
e2e() { # name json fopts inputs slots ulp [backends any]
  name=$1
  shift
  if CGRAPH_FUSION_BACKENDS=cuda sh src/tests/fusion/run_e2e.sh wrap/cgc wrap/cgfuse wrap/cgrun "work/e2e_$name" "$@" \
    > "work_$name.log" 2>&1; then
    pass=$((pass + 1))
    echo "PASS $name: $(grep -m1 'kernel nodes' "work_$name.log")"
  else
    fail=$((fail + 1))
    echo "FAIL $name"
    tail -5 "work_$name.log"
  fi
}
e2e chain4 $D/chain4.json "--fuse k1,k2,k3,k4" "--random x:3" "y" 0
e2e chain4_auto $D/chain4.json "--auto" "--random x:5" "y" 0
e2e chain4_local $D/chain4.json "--plan $D/chain4_local_plan.json" "--random x:12" "y" 0
e2e ichain $D/ichain.json "--fuse i1,i2,i3,i4" "--random a:7" "b" 0
e2e local $D/local.json "--fuse a,b,c" "--random x:2" "y" 0
e2e ranges $D/ranges.json "--fuse a1,a2" "--random x:6" "y1" 0
e2e tile_auto $D/tile.json "--auto" "--random x:3 --random ix:4 --random y:5 --random z:6 --random iy:7" "y z iy" 0
e2e ndrange $D/ndrange.json "--fuse a1,a2 --fuse b1,b2 --fuse c1,c2 --fuse f1,f2" \
  "--random x:13 --random y1:14 --random y2:15 --random y3:16 --random y7:17" "y1 y2 y3 y7" 0
e2e mlp $E/mlp/graph.json "--auto" \
  "--random x:1 --random w1:2 --random b1:3 --random w2:4 --random b2:5 --random wc:6 --random bc:7" "probs" 4
e2e chain1000 $E/chain1000/graph.json "--auto" "--random y:11" "y" 4
e2e saxpy $E/saxpy/graph.json "--auto" "--random y:21" "y" 0 cuda any
e2e stencil_linear $E/stencil/graph.json "--auto --auto-linear" "--random f:22" "u0 r" 0
e2e image $E/image/graph.json "--auto" "--random input:25" "edges crop" 0 cuda any
echo "fusion e2e on cuda: $pass passed, $fail failed"
