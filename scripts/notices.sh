#!/usr/bin/env bash
# Prints the licence notices of what the release binaries contain: the Swift runtime and Foundation (linked in by
# --static-swift-stdlib), and every package the build resolved (their LICENSE and NOTICE files, from SwiftPM's
# checkouts). Used by scripts/release.sh for THIRD-PARTY-NOTICES.txt (and the Debian package's copyright file).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
checkouts=${B2C_CHECKOUTS:-$ROOT/.build/checkouts}
swift_licence=$(dirname "$(dirname "$(command -v swift)")")/share/swift/LICENSE.txt
[[ -d $checkouts ]] || { echo "notices: no $checkouts (run swift package resolve)" >&2; exit 1; }

cat <<'HEAD'
b2c and b2c-emulator include the following third-party software. Each section names the component and
reproduces its licence and notice files as published with it.

Not included in these files, reproduced from the components' own statements:
- The Swift standard library, runtime, Concurrency, Dispatch and Foundation (swift.org): Apache License 2.0
  with the Runtime Library Exception (the first section below).
- ICU, linked into Foundation's internationalisation support (swift-foundation-icu): the Unicode License v3
  (https://github.com/swiftlang/swift-foundation-icu/blob/main/LICENSE).
- BoringSSL, inside swift-crypto and swift-nio-ssl: see their NOTICE files below (OpenSSL, ISC and
  BSD-style terms).
HEAD
emit() {
    printf '\n\n==============================================================================\n%s\n' "$1"
    printf '==============================================================================\n\n'
    cat "$2"
}
if [[ -f $swift_licence ]]; then emit "Swift (runtime, standard library, Foundation) — $swift_licence" "$swift_licence"; fi
for dir in "$checkouts"/*/; do
    name=$(basename "$dir")
    found=0
    for f in "$dir"LICENSE* "$dir"LICENCE* "$dir"NOTICE* "$dir"COPYING*; do
        [[ -f $f ]] || continue
        emit "$name — $(basename "$f")" "$f"
        found=1
    done
    ((found)) || { echo "notices: $name has no licence file" >&2; exit 1; }
done
