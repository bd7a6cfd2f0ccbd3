#!/bin/sh
# run_json.sh CGC CGFUSE RENAME FILECHECK WORK JSON CHECKFILE [cgfuse options...]
# Compiles JSON, gives every node and slot a name that is not UTF-8 (fusion_rename),
# fuses it with --json and checks the report: exit status, then stdout.
set -eu
cgc=$1; cgfuse=$2; rename=$3; filecheck=$4; work=$5; json=$6; check=$7; shift 7
mkdir -p "$work"
"$cgc" "$json" -o "$work/in.cgf" -q
"$rename" "$work/in.cgf" "$work/bad.cgf"
status=0
"$cgfuse" "$work/bad.cgf" -o "$work/out.cgf" --json "$@" > "$work/report.json" 2> "$work/stderr.txt" || status=$?
{
  echo "; cgfuse exit $status"
  cat "$work/stderr.txt"
  cat "$work/report.json"
} > "$work/all.txt"
"$filecheck" --input-file "$work/all.txt" "$check"
