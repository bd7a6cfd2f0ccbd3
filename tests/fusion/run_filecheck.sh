#!/bin/sh
# run_filecheck.sh CGC CGFUSE FILECHECK WORK JSON CHECKFILE [cgfuse options...]
# Compiles JSON with cgc, runs cgfuse with the options, then checks with FileCheck, in
# this order: the fused LLVM IR (--print-ir), the remarks, `cgc dump` of the output.
set -eu
cgc=$1; cgfuse=$2; filecheck=$3; work=$4; json=$5; check=$6; shift 6
mkdir -p "$work"
rm -f "$work/out.cgf" "$work/ir.ll"
"$cgc" "$json" -o "$work/in.cgf" -q
status=0
"$cgfuse" "$work/in.cgf" -o "$work/out.cgf" --print-ir "$work/ir.ll" --remarks "$@" 2> "$work/remarks.txt" || status=$?
{
  echo "; cgfuse exit $status"
  cat "$work/ir.ll" 2>/dev/null || true
  cat "$work/remarks.txt"
  if [ -f "$work/out.cgf" ]; then "$cgc" dump "$work/out.cgf"; else echo "; no output file"; fi
} > "$work/all.txt"
"$filecheck" --input-file "$work/all.txt" "$check"
