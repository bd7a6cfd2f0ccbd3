#!/bin/sh
# run_e2e.sh CGC CGFUSE CGRUN WORK JSON "CGFUSE OPTIONS" "CGRUN INPUTS" "SLOTS" ULP ["BACKENDS"] [any]
# Compiles JSON, fuses it, checks that the output has fewer kernel nodes and records
# what was fused (with `any`: or that it is the unfused graph where --auto finds
# nothing to fuse, which the remarks explain), then runs both graphs on each of BACKENDS (default: cpu) with the
# same inputs and compares every slot in SLOTS: the unfused run's values on a backend
# are the reference for the fused run on that backend, which must match them within
# ULP units in the last place (0 = bit-exact).
set -eu
cgc=$1; cgfuse=$2; cgrun=$3; work=$4; json=$5; fopts=$6; inputs=$7; slots=$8; ulp=$9
backends=${10:-cpu}
# CGRAPH_FUSION_BACKENDS="cuda" (for example) runs the same comparisons on other devices.
backends=${CGRAPH_FUSION_BACKENDS:-$backends}
mode=${11:-}
mkdir -p "$work"
"$cgc" "$json" -o "$work/in.cgf" -q
# shellcheck disable=SC2086
"$cgfuse" "$work/in.cgf" -o "$work/out.cgf" $fopts --remarks
before=$("$cgc" dump "$work/in.cgf" | grep -c '  kernel ' || true)
after=$("$cgc" dump "$work/out.cgf" | grep -c '  kernel ' || true)
echo "kernel nodes: $before unfused, $after fused"
if [ "$after" -ge "$before" ]; then
  if [ "$mode" != any ] || [ "$after" -ne "$before" ]; then echo "FAIL: nothing was fused"; exit 1; fi
  echo "nothing fused (allowed for this graph); the output must still run and match"
else
  "$cgc" dump "$work/out.cgf" | grep -q 'fused\.' || { echo "FAIL: no fused.* metadata"; exit 1; }
fi
for b in $backends; do
  outs=""; checks=""
  for s in $slots; do
    outs="$outs --output $s=$work/ref_${b}_$s.npy"
    checks="$checks --check $s=@$work/ref_${b}_$s.npy"
  done
  # shellcheck disable=SC2086
  "$cgrun" "$work/in.cgf" --backend "$b" $inputs $outs
  # shellcheck disable=SC2086
  "$cgrun" "$work/out.cgf" --backend "$b" $inputs $checks --ulp "$ulp"
  echo "fused outputs on $b match the unfused ones on $b"
done
