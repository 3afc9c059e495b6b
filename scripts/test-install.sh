#!/usr/bin/env bash
# Installs the artefacts scripts/release.sh made into a throwaway directory and uses them the way a user would, then
# removes them. Run by .ci/run after the tests; exits non-zero with the reason on the first failure.
#
#   - SHA256SUMS verifies the three artefacts
#   - the .deb: every Depends is a package installed here; `dpkg -x` into a temporary root; the installed
#     `b2c --version` prints the package's version; `b2c demo` (b2c handing over to the installed b2c-emulator next
#     to it) runs the whole job; `man -l` renders a page; the bash completion, sourced, completes `b2c to` to `token`;
#     the zsh and fish completions are where those shells look
#   - the archive: unpacked, its b2c prints the same version and its b2c-emulator answers `default-seed`
#   - the container image: scripts/test-image.sh (podman), with the archive's b2c as the client on the host
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIST=${B2C_DIST:-$ROOT/dist}
fail() { printf 'test-install: FAILED: %s\n' "$*" >&2; exit 1; }
step() { printf 'test-install: %s\n' "$*" >&2; }

# The artefacts of the last release.sh run are the ones its SHA256SUMS names (dist/ may hold older versions too).
[[ -f $DIST/SHA256SUMS ]] || fail "no $DIST/SHA256SUMS (run scripts/release.sh)"
deb=$DIST/$(awk '$2 ~ /\.deb$/ { print $2 }' "$DIST/SHA256SUMS")
tarball=$DIST/$(awk '$2 ~ /\.tar\.gz$/ { print $2 }' "$DIST/SHA256SUMS")
[[ -f $deb && -f $tarball ]] || fail "SHA256SUMS names artefacts that are not in $DIST (run scripts/release.sh)"
(cd "$DIST" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match the artefacts"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/b2c-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
version=$(dpkg-deb -f "$deb" Version)
step "package b2c $version: Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*//; s/ //g' | while read -r dep; do
    dpkg -s "$dep" >/dev/null 2>&1 || fail "Depends names $dep, which is not installed here"
done
dpkg-deb -x "$deb" "$tmp/root"
bin=$tmp/root/usr/bin
[[ -x $bin/b2c && -x $bin/b2c-client && -x $bin/b2c-emulator ]] \
    || fail "the package has no /usr/bin/b2c, /usr/bin/b2c-client and /usr/bin/b2c-emulator"
for f in "$bin/b2c" "$bin/b2c-client" "$bin/b2c-emulator"; do
    ldd "$f" 2>/dev/null | grep -q "not found" && fail "$(basename "$f") needs a library that is not installed: $(ldd "$f" | grep 'not found')"
done
[[ $("$bin/b2c" --version) == "b2c $version" ]] || fail "the installed b2c --version prints '$("$bin/b2c" --version)', not 'b2c $version'"

# The demo, as a user runs it from the installed package: only /usr/bin of the package on PATH for b2c, a fresh home.
home=$tmp/home
mkdir -p "$home"
env -i HOME="$home" PATH="$bin:/usr/bin:/bin" TMPDIR="$tmp" "$bin/b2c" demo >"$tmp/demo.out" 2>"$tmp/demo.err" \
    || { cat "$tmp/demo.err" >&2; fail "the installed b2c demo failed"; }
# The number of steps is the one the README's sample output shows, so a new step updates one place.
done_line=$(grep -oE '^Done: [0-9]+ steps' "$ROOT/README.md") || fail "README.md shows no 'Done: N steps' line"
grep -q "^$done_line against" "$tmp/demo.out" || { cat "$tmp/demo.out" >&2; fail "the installed b2c demo did not print '$done_line'"; }
step "installed b2c demo: $(grep 'Done:' "$tmp/demo.out")"

# The package's b2c (a static program) answers a repeated token cache hit itself and hands the rest to b2c-client.
fast=$tmp/fast
mkdir -p "$fast/home"
"$bin/b2c-emulator" serve --port 0 --config-out "$fast/policies.json" >"$fast/tenant.log" 2>&1 &
tenant=$!
for _ in $(seq 100); do [[ -s $fast/policies.json ]] && break; sleep 0.1; done
fast_env=(env -i HOME="$fast/home" PATH="$bin:/usr/bin:/bin" B2C_CONFIG="$fast/policies.json" B2C_STORE_KEY="$(openssl rand -base64 32)")
printf 'Alice-dev-2026!\n' | "${fast_env[@]}" b2c signin --policy B2C_1_ROPC_Auth --username alice@contoso.com --password-stdin >/dev/null 2>&1 \
    || fail "the installed b2c could not sign in with ROPC"
"${fast_env[@]}" b2c token --policy B2C_1_ROPC_Auth >/dev/null 2>&1 || fail "the installed b2c token failed"
"${fast_env[@]}" B2C_FAST_PATH=require b2c token --policy B2C_1_ROPC_Auth >/dev/null 2>&1 || fail "the installed b2c did not answer a repeated cache hit itself"
kill "$tenant" 2>/dev/null || true
wait "$tenant" 2>/dev/null || true
step "installed b2c: the full client signs in and answers token; the fast path answers it again"

# Without a configuration, b2c names `b2c init` and the example the package installs (a file that is there).
hint=$(cd "$home" && env -i HOME="$home" PATH="$bin:/usr/bin:/bin" "$bin/b2c" token 2>&1 >/dev/null) && fail "b2c token without a configuration succeeded"
example=$tmp/root/usr/share/doc/b2c/policies.example.json
[[ -f $example ]] || fail "the package has no $example"
grep -q 'b2c init' <<<"$hint" && grep -qF "$example" <<<"$hint" || fail "the no-configuration hint names neither b2c init nor $example: $hint"
step "no configuration: the hint names b2c init and the installed example"

page=$tmp/root/usr/share/man/man1/b2c.token.1.gz
[[ -f $page ]] || fail "no man page $page"
MANWIDTH=100 man -l "$page" 2>/dev/null | grep -q "b2c token" || fail "man -l $page does not render the token page"
# An example stays on a line of its own (scripts/man-examples.sh), not filled into the text after it.
decode=$tmp/root/usr/share/man/man1/b2c.jwt.decode.1.gz
MANWIDTH=100 man -l "$decode" 2>/dev/null | grep -qx " *b2c jwt decode -o json < token.txt" \
    || fail "man -l $decode runs its examples together: $(MANWIDTH=100 man -l "$decode" 2>/dev/null | grep -A1 'jwt decode -o json')"
# A command's other names are on its page, and text outside ASCII stays (swift-argument-parser's generator dropped it:
# "Users per page (1999)").
man1=$tmp/root/usr/share/man/man1
MANWIDTH=100 man -l "$man1/b2c.signin.1.gz" 2>/dev/null | grep -q "b2c signin, login" || fail "the signin page does not name b2c login"
# (In a UTF-8 locale: in the C locale man shows the en dash as '-'.)
per_page=$(LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$man1/b2c.users.list.1.gz" 2>/dev/null | grep 'per page')
grep -qF "Users per page (1–999)" <<<"$per_page" || fail "the users list page lost its dash: $per_page"
for p in "$man1"/*.1.gz; do
    warnings=$(MANWIDTH=100 man --warnings -l "$p" 2>&1 >/dev/null) || true
    [[ -z $warnings ]] || fail "man -l $p warns: $warnings"
done
step "man pages: $(ls "$man1" | wc -l) (man -l b2c.token.1.gz renders; examples stay as written; aliases and UTF-8 kept; no warnings)"

completion=$tmp/root/usr/share/bash-completion/completions/b2c
[[ -f $completion ]] || fail "no bash completion at /usr/share/bash-completion/completions/b2c"
words=$(bash -c 'source "$1"; COMP_WORDS=(b2c to); COMP_CWORD=1; COMP_LINE="b2c to"; COMP_POINT=6; f=$(complete -p b2c | sed -n "s/.*-F \([^ ]*\).*/\1/p"); "$f" b2c to b2c; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion") \
    || fail "sourcing the bash completion failed"
grep -qx token <<<"$words" || fail "the bash completion does not complete 'b2c to' to 'token' (got: $words)"
[[ -f $tmp/root/usr/share/zsh/vendor-completions/_b2c ]] || fail "no zsh completion in /usr/share/zsh/vendor-completions"
[[ -f $tmp/root/usr/share/fish/vendor_completions.d/b2c.fish ]] || fail "no fish completion in /usr/share/fish/vendor_completions.d"
step "completions: bash completes 'b2c to' to token; zsh and fish files in place"

mkdir -p "$tmp/archive"
tar -C "$tmp/archive" -xzf "$tarball"
abin=$(echo "$tmp"/archive/b2c-*/bin)
[[ $("$abin/b2c" --version) == "b2c $version" ]] || fail "the archive's b2c --version is not b2c $version"
"$abin/b2c-emulator" default-seed | grep -q '"contoso.onmicrosoft.com"' || fail "the archive's b2c-emulator default-seed did not print the seed"
step "archive: $(basename "$tarball") unpacks; b2c $version; b2c-emulator answers"

# The container image, with the archive's b2c on the host side.
image=$DIST/$(awk '$2 ~ /\.image\.tar$/ { print $2 }' "$DIST/SHA256SUMS")
[[ -f $image ]] || fail "SHA256SUMS names no image archive (run scripts/release.sh)"
"$ROOT/scripts/test-image.sh" "$image" "$abin" || fail "the container image (scripts/test-image.sh)"
step "OK"
