# The flags of every release build of b2c (sourced by scripts/release.sh and bench/lib.sh, which share the scratch path
# .build-release-static: the same flags keep either script's build incremental for the other).
#
#   --static-swift-stdlib   the Swift runtime and Foundation linked in: a token cache hit starts in about half the time
#                           (no shared objects to map and relocate; bench/README.md, "lean client")
#   -gnone, -g0             no DWARF: the artefacts are stripped anyway (release.sh), and emitting and linking about
#                           200 MB of it per binary was a share of CI's release build (measured in the commit that added
#                           this file). Symbol tables stay, so profiles (bench/startup-profile.sh) still name functions.
RELEASE_FLAGS=(--static-swift-stdlib -Xswiftc -gnone -Xcc -g0 -Xcxx -g0)
