#!/bin/sh
# Builds the web version of basis-lab into target/web: index.html, basis-lab.js and
# basis-lab_bg.wasm, a static folder that any web server can publish as it is. With --serve it
# then serves that folder on http://127.0.0.1:${PORT:-8080} (Ctrl+C stops it).
#
# Needs the wasm32-unknown-unknown target (added with rustup if missing) and wasm-bindgen's
# command-line tool at exactly the version of the wasm-bindgen crate in Cargo.lock (installed
# with cargo if missing).
set -eu
cd "$(dirname "$0")/.."

out=${BASIS_LAB_WEB_OUT:-target/web}
version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/[^0-9.]/, "", $0); print; exit }' Cargo.lock)
[ -n "$version" ] || { echo "web/build.sh: no wasm-bindgen in Cargo.lock" >&2; exit 1; }

if command -v rustup >/dev/null 2>&1 &&
   ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q " $version\$"; then
  echo "installing wasm-bindgen-cli $version (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "=$version"
fi

cargo build --release --target wasm32-unknown-unknown --bin basis-lab
rm -rf "$out.new"
mkdir -p "$out.new"
wasm-bindgen --target web --no-typescript --out-dir "$out.new" \
  "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/basis-lab.wasm"
cp web/index.html web/worker.js "$out.new/"
rm -rf "$out"
mv "$out.new" "$out"
echo "built $out ($(du -sh "$out" | cut -f1)): publish the folder as it is"

if [ "${1:-}" = "--serve" ]; then
  port=${PORT:-8080}
  echo "serving on http://127.0.0.1:$port/ (Ctrl+C stops)"
  exec python3 -m http.server --bind 127.0.0.1 --directory "$out" "$port"
fi
