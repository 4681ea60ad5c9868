#!/usr/bin/env bash
# docs/schedules.md and docs/schedules/ are what `make gallery` writes: regenerated into a
# temporary directory, they must equal the committed files byte for byte.
# usage: check_gallery.sh SCHEDULE_GALLERY SOURCE_DIR
set -euo pipefail
gallery=$1 source=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$gallery" "$out" > /dev/null
if ! diff -r "$out/schedules.md" "$source/docs/schedules.md" ||
   ! diff -r "$out/schedules" "$source/docs/schedules"; then
  echo "FAIL: docs/schedules.md or docs/schedules/ is stale: run 'make gallery' and commit" >&2
  exit 1
fi
echo "docs/schedules.md and $(ls "$out/schedules" | wc -l) pictures are current"
