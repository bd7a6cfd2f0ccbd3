#!/bin/sh
# run_ptxas.sh CGC CGFUSE FUSION_PTXAS WORK SRC: writes fused .cgf files of the fusion
# test graphs and the examples into WORK (the same cgfuse options as the FileCheck and
# end-to-end tests), then lowers every fused kernel to PTX and assembles it with ptxas
# (fusion_ptxas). The .cgf files stay in WORK for runs on a GPU (cgrun --backend cuda).
set -eu
cgc=$1; cgfuse=$2; check=$3; work=$4; src=$5
mkdir -p "$work"
D=$src/tests/fusion/data
E=$src/examples
fuse() { # NAME JSON OPTIONS...
  name=$1; json=$2; shift 2
  "$cgc" "$json" -o "$work/$name.cgf" -q
  "$cgfuse" "$work/$name.cgf" -o "$work/$name-fused.cgf" "$@"
  files="$files $work/$name-fused.cgf"
}
files=""
fuse chain4 "$D/chain4.json" --fuse k1,k2,k3,k4 --internalize t1,t2,t3
fuse chain4_local "$D/chain4.json" --plan "$D/chain4_local_plan.json"
fuse ichain "$D/ichain.json" --fuse i1,i2,i3,i4 --internalize t
fuse local "$D/local.json" --fuse a,b,c --internalize t
fuse ranges "$D/ranges.json" --fuse a1,a2 --fuse e1,e2 --internalize t5
fuse tile "$D/tile.json" --auto --internalize t,u,it
fuse tile2d "$D/tile2d.json" --auto --internalize t,u,it
fuse ndrange "$D/ndrange.json" --fuse a1,a2 --fuse b1,b2 --fuse c1,c2 --fuse f1,f2 --internalize t1,t2,t3,t7
fuse chain1000 "$E/chain1000/graph.json" --auto
fuse mlp "$E/mlp/graph.json" --auto
fuse stencil "$E/stencil/graph.json" --fuse sweep.0,residual.0
fuse image "$E/image/graph.json" --auto
fuse timeloop "$D/timeloop.json" --auto --internalize b
fuse exprs_chain "$D/exprs_chain.json" --auto --internalize t
# shellcheck disable=SC2086
"$check" $files
