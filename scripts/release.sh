#!/usr/bin/env bash
# Builds b2c's release artefacts into dist/ (a fresh clone needs the Swift toolchain, dpkg-deb, gzip,
# and umoci and python3 for the image):
#
#   dist/b2c-<version>-linux-<arch>.tar.gz   b2c, b2c-client and b2c-emulator (release, Swift runtime linked in, debug info
#                                            stripped), bash/zsh/fish completions, one man page per command, the README,
#                                            the docs and the licence notices
#   dist/b2c_<version>_<debian arch>.deb     the same files where Debian keeps them: /usr/bin,
#                                            /usr/share/bash-completion/completions, /usr/share/zsh/vendor-completions,
#                                            /usr/share/fish/vendor_completions.d, /usr/share/man/man1,
#                                            /usr/share/doc/b2c; Depends computed from the binaries' NEEDED libraries
#   dist/b2c-emulator-<version>-linux-<arch>.image.tar
#                                            the local tenant as an OCI image (scripts/image.sh): b2c-emulator, the
#                                            libraries it links, CA roots and a non-root user, nothing else; loads with
#                                            `podman load` and `docker load`
#   dist/SHA256SUMS                          sha256sum of all three
#
# The version is the one `b2c --version` prints (B2CCommand.version in Sources/B2CCLI/Commands/Root.swift): one place.
# Man pages come from the release programs themselves: scripts/man-pages.py reads each one's --experimental-dump-help
# (swift-argument-parser's description of its commands) and writes a page per command. swift-argument-parser's own
# generator (`swift package generate-manual`) compiled the parser again for its tool and needed the debug build of every
# product: 40-100 s of CI's serial tail, under SwiftPM's lock on .build.
#
# Knobs: B2C_RELEASE_SCRATCH (SwiftPM scratch path of the release build; default <repo>/.build-release-static),
# B2C_DIST (output directory; default <repo>/dist). `--build-only` builds the programs and stops; `--no-build` packages
# the programs a `--build-only` run built (.ci/run starts the build beside the tests and packages after them: three
# SwiftPM runs that find nothing to do cost about a minute).
#
# B2C_RELEASE_OPTIMIZE=none (CI's install test only; never for artefacts anyone installs): the same build without the
# optimiser (Swift -Onone, C -O0), in <repo>/.build-release-unoptimized, packaged into <repo>/dist-unoptimized. The
# files, their places, the static linking and the Depends are the release's; only the machine code is slower. The
# optimised build was half of CI's CPU time (about 2,400 of 5,200 CPU-seconds on two cores: CI took 2,750-3,212 s,
# over its 40 minutes); a cold build of the three programs unoptimised took 1,053 CPU-seconds (bench/README.md, "CI time").
#
# The .deb is compressed with xz -z1: xz's default -z6 took 93 s for 54 MB, -z1 15 s for 63 MB (the same 238 MB tree,
# two cores).
set -euo pipefail
build_only=false build=true
case "${1:-}" in
    --build-only) build_only=true ;;
    --no-build) build=false ;;
    "") ;;
    *) printf 'release: unknown argument %s (--build-only or --no-build)\n' "$1" >&2; exit 64 ;;
esac
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${B2C_RELEASE_OPTIMIZE:-speed}" in
    speed) SCRATCH=${B2C_RELEASE_SCRATCH:-$ROOT/.build-release-static} DIST=${B2C_DIST:-$ROOT/dist} UNOPTIMIZED=() ;;
    none)
        SCRATCH=${B2C_RELEASE_SCRATCH:-$ROOT/.build-release-unoptimized} DIST=${B2C_DIST:-$ROOT/dist-unoptimized}
        UNOPTIMIZED=(-Xswiftc -Onone -Xcc -O0 -Xcxx -O0)
        ;;
    *) printf 'release: B2C_RELEASE_OPTIMIZE is %s; it takes speed (the default) or none (CI)\n' "$B2C_RELEASE_OPTIMIZE" >&2; exit 64 ;;
esac
# b2c answers a repeated token cache hit itself and hands every other command to b2c-client (the full client): users run
# b2c and b2c-emulator, which have the completions and man pages (b2c's are generated from b2c-client's commands).
PROGRAMS=(b2c b2c-client b2c-emulator)
COMMANDS=(b2c b2c-emulator)

say() { printf 'release: %s\n' "$*" >&2; }
die() { printf 'release: %s\n' "$*" >&2; exit 1; }
for tool in swift dpkg-deb dpkg gzip sha256sum readelf strip tar python3; do
    command -v "$tool" >/dev/null 2>&1 || die "needs '$tool' (Debian: apt-get install binutils dpkg gzip tar python3)"
done

cd "$ROOT"
source "$ROOT/scripts/release-flags.sh"
if $build; then
    say "building ${PROGRAMS[*]} for release (${RELEASE_FLAGS[*]} ${UNOPTIMIZED[*]-}) in $SCRATCH…"
    # The tenant first: its modules are the longest chain of the build (each waits for the one before), so it starts while
    # there are others to build beside it; the client's and b2c's are then only their own links.
    for p in b2c-emulator b2c-client b2c; do
        swift build -c release "${RELEASE_FLAGS[@]}" ${UNOPTIMIZED[@]+"${UNOPTIMIZED[@]}"} --scratch-path "$SCRATCH" --product "$p" \
            >"$SCRATCH.release.log" 2>&1 \
            || { tail -30 "$SCRATCH.release.log" >&2; die "the release build of $p failed"; }
    done
else
    for p in "${PROGRAMS[@]}"; do
        [[ -x $SCRATCH/release/$p ]] || die "--no-build: no $SCRATCH/release/$p (run scripts/release.sh --build-only first)"
    done
fi
$build_only && { say "built in $SCRATCH/release"; exit 0; }
BIN=$SCRATCH/release
version=$("$BIN/b2c" --version | awk '{ print $2 }')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([.+~-][0-9A-Za-z.+~-]+)?$ ]] || die "b2c --version printed '$version', not a version"
emulator_version=$("$BIN/b2c-emulator" --version | awk '{ print $2 }')
[[ $emulator_version == "$version" ]] || die "b2c is $version but b2c-emulator is $emulator_version"
arch=$(uname -m)
debarch=$(dpkg --print-architecture)

say "writing man pages (scripts/man-pages.py, from each program's --experimental-dump-help)…"
manuals=$SCRATCH.manuals
rm -rf "$manuals"
# Dated by the commit, so that the same commit gives the same pages.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)} \
    python3 "$ROOT/scripts/man-pages.py" "$manuals" "$BIN/b2c-client" "$BIN/b2c-emulator" || die "the man pages could not be written"
# The commands' examples stay as written (a discussion is text that man fills).
"$ROOT/scripts/man-examples.sh" "$manuals"/*/*.1

stage=$(mktemp -d "${TMPDIR:-/tmp}/b2c-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
name=b2c-$version-linux-$arch
tree=$stage/$name
mkdir -p "$tree/bin" "$tree/completions/bash" "$tree/completions/zsh" "$tree/completions/fish" "$tree/man/man1" "$tree/doc"
for p in "${PROGRAMS[@]}"; do
    # Debug info goes (it is most of the file); the symbol table stays, so that a crash report names functions.
    strip --strip-debug -o "$tree/bin/$p" "$BIN/$p"
    chmod 755 "$tree/bin/$p"
done
for p in "${COMMANDS[@]}"; do
    "$BIN/$p" --generate-completion-script bash >"$tree/completions/bash/$p"
    "$BIN/$p" --generate-completion-script zsh >"$tree/completions/zsh/_$p"
    "$BIN/$p" --generate-completion-script fish >"$tree/completions/fish/$p.fish"
    source=$p
    [[ $p == b2c ]] && source=b2c-client
    pages=$(find "$manuals/$source" -name '*.1' 2>/dev/null | wc -l)
    ((pages > 0)) || die "no man pages for $p in $manuals/$source"
    cp "$manuals/$source"/*.1 "$tree/man/man1/"
done
gzip -9n "$tree"/man/man1/*.1
cp README.md "$tree/"
cp -r docs/. "$tree/doc/"
cp policies.example.json "$tree/doc/"
"$ROOT/scripts/notices.sh" >"$tree/THIRD-PARTY-NOTICES.txt"

mkdir -p "$DIST"
tarball=$DIST/$name.tar.gz
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name -czf "$tarball" "$name"

# The Debian package: the same files in Debian's places.
pkg=$stage/deb
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
    "$pkg/usr/share/fish/vendor_completions.d" "$pkg/usr/share/man/man1" "$pkg/usr/share/doc/b2c"
cp "$tree"/bin/* "$pkg/usr/bin/"
cp "$tree"/completions/bash/* "$pkg/usr/share/bash-completion/completions/"
cp "$tree"/completions/zsh/* "$pkg/usr/share/zsh/vendor-completions/"
cp "$tree"/completions/fish/* "$pkg/usr/share/fish/vendor_completions.d/"
cp "$tree"/man/man1/* "$pkg/usr/share/man/man1/"
cp -r "$tree/README.md" "$tree/doc/." "$pkg/usr/share/doc/b2c/"
cp "$tree/THIRD-PARTY-NOTICES.txt" "$pkg/usr/share/doc/b2c/copyright"
# Depends: the Debian package of every shared library the binaries name (NEEDED), at least the version installed here.
depends=$(for p in "${PROGRAMS[@]}"; do readelf -dW "$tree/bin/$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done | sort -u | while read -r lib; do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|AArch64|64bit/ { print $NF; exit }')
    [[ -n $path ]] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    [[ -n $path ]] || { echo "release: no installed library $lib" >&2; exit 1; }
    owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1) || true
    [[ -n $owner ]] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
    [[ -n $owner ]] || { echo "release: no Debian package owns $path" >&2; exit 1; }
    upstream=$(dpkg-query -W -f='${Version}' "$owner" | sed 's/-[^-]*$//')
    echo "$owner (>= $upstream)"
done | sort -u | paste -sd, - | sed 's/,/, /g')
[[ -n $depends ]] || die "could not compute Depends"
size=$(du -sk "$pkg/usr" | cut -f1)
cat >"$pkg/DEBIAN/control" <<CONTROL
Package: b2c
Version: $version
Architecture: $debarch
Maintainer: b2c maintainers <b2c@invalid>
Installed-Size: $size
Depends: $depends
Section: utils
Priority: optional
Description: Azure AD B2C and Entra External ID from the command line, and a local B2C tenant
 b2c signs people and applications in to Azure AD B2C user flows and custom policies and to
 Entra External ID, keeps one account per person and policy, stores tokens encrypted in SQLite,
 refreshes them silently and calls protected APIs with them. b2c-emulator is a faithful local
 B2C tenant for offline work and CI.
CONTROL
deb=$DIST/b2c_${version}_$debarch.deb
dpkg-deb --root-owner-group -Zxz -z1 --build "$pkg" "$deb" >/dev/null

image=$DIST/b2c-emulator-$version-linux-$arch.image.tar
say "building the container image…"
"$ROOT/scripts/image.sh" "$tree/bin/b2c-emulator" "$version" "$tree/THIRD-PARTY-NOTICES.txt" "$image"

(cd "$DIST" && sha256sum "$(basename "$tarball")" "$(basename "$deb")" "$(basename "$image")" >SHA256SUMS)
say "Depends: $depends"
printf '%s\n' "$tarball" "$deb" "$image" "$DIST/SHA256SUMS"
