#!/usr/bin/env bash
# An example Poplar program (tools/examples/poplar/NAME) built as a user builds it: against an
# installed ipusim, found with find_package(ipusim); then run, checking its own results.
#   example_test.sh BUILD_DIR SOURCE_DIR WORK_DIR NAME EXPECTED [ARGS...]
# EXPECTED, when not empty, is an extended regular expression the program's output must match
# (besides its exit status, 0).
set -euo pipefail
build=$1 source=$2 work=$3 name=$4 expected=$5
shift 5
case_name=$name${1:+-$*}
case_name=${case_name// /-}
prefix=$work/poplar-install-$case_name
example=$work/poplar-example-$case_name
rm -rf "$prefix" "$example"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$source/tools/examples/poplar/$name" -B "$example" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$example" >/dev/null
cd "$example"
output=$("./$name" "$@")
printf '%s\n' "$output"
if [ -n "$expected" ] && ! grep -Eq -- "$expected" <<<"$output"; then
  echo "example_test.sh: the output of $name $* does not match: $expected" >&2
  exit 1
fi
