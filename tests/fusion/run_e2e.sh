#!/bin/sh
# run_e2e.sh CGC CGFUSE CGRUN WORK JSON "CGFUSE OPTIONS" "CGRUN INPUTS" "SLOTS" ULP
# Compiles JSON, fuses it, checks that the output has fewer kernel nodes and records
# what was fused, then runs both graphs on the cpu backend with the same inputs and
# compares every slot in SLOTS: the unfused run's values are the reference, the fused
# run must match them within ULP units in the last place (0 = bit-exact).
set -eu
cgc=$1; cgfuse=$2; cgrun=$3; work=$4; json=$5; fopts=$6; inputs=$7; slots=$8; ulp=$9
mkdir -p "$work"
"$cgc" "$json" -o "$work/in.cgf" -q
# shellcheck disable=SC2086
"$cgfuse" "$work/in.cgf" -o "$work/out.cgf" $fopts --remarks
before=$("$cgc" dump "$work/in.cgf" | grep -c '  kernel ' || true)
after=$("$cgc" dump "$work/out.cgf" | grep -c '  kernel ' || true)
echo "kernel nodes: $before unfused, $after fused"
if [ "$after" -ge "$before" ]; then echo "FAIL: nothing was fused"; exit 1; fi
"$cgc" dump "$work/out.cgf" | grep -q 'fused\.' || { echo "FAIL: no fused.* metadata"; exit 1; }
outs=""; checks=""
for s in $slots; do
  outs="$outs --output $s=$work/ref_$s.npy"
  checks="$checks --check $s=@$work/ref_$s.npy"
done
# shellcheck disable=SC2086
"$cgrun" "$work/in.cgf" --backend cpu $inputs $outs
# shellcheck disable=SC2086
"$cgrun" "$work/out.cgf" --backend cpu $inputs $checks --ulp "$ulp"
echo "fused outputs match the unfused ones"
