#!/usr/bin/env bash
# Builds the local tenant's container image from a release b2c-emulator, without a container daemon or a base image:
#
#   scripts/image.sh BINARY VERSION NOTICES OUT.tar
#
# The image starts from nothing and holds only what the program uses: the binary, each library `ldd` names (and the
# dynamic loader), the CA roots (for the HTTPS calls a tenant makes), /etc/passwd and /etc/group naming one user,
# b2c (65532), /tmp, the state directory /var/lib/b2c-emulator (owned by b2c: a volume mounted there inherits it),
# and the licence notices. No shell, no package manager.
#
# Its configuration: entrypoint b2c-emulator, command `serve`, user 65532, port 8080, and the environment that makes
# `serve` listen on 0.0.0.0:8080, log one line per request, and require the admin token from every peer, loopback ones
# included (B2C_EMULATOR_HOST, _PORT, _LOG_FORMAT, _ADMIN_TOKEN_REQUIRED; an option given on the command line wins):
# a port forwarder (pasta, --network host) can hand the host's connections in from a loopback address. OCI
# annotations (on the manifest) and labels (in the configuration) name the title, version, revision, creation time
# and, when the clone has an `origin` remote or B2C_IMAGE_SOURCE is set, the source.
#
# OUT.tar is an OCI image layout (`podman load`, `docker load` from Docker 25 on, skopeo's oci-archive:) that also
# carries Docker's manifest.json (`docker load` before 25); both name it b2c-emulator:VERSION. File times are the
# commit's (SOURCE_DATE_EPOCH when set), so the same commit and binary give the same layer.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { printf 'image: %s\n' "$*" >&2; exit 1; }
(($# == 4)) || die "usage: scripts/image.sh BINARY VERSION NOTICES OUT.tar"
binary=$1 version=$2 notices=$3 out=$4
for tool in umoci tar ldd python3; do
    command -v "$tool" >/dev/null 2>&1 || die "needs '$tool' (Debian: apt-get install umoci tar libc-bin python3)"
done
[[ -x $binary ]] || die "no program at $binary"

epoch=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
revision=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || true)
source=${B2C_IMAGE_SOURCE:-$(git -C "$ROOT" remote get-url origin 2>/dev/null || true)}
arch=$(uname -m)
case $arch in x86_64) ociarch=amd64 ;; aarch64) ociarch=arm64 ;; *) ociarch=$arch ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/b2c-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
mkdir -p "$rootfs/usr/bin" "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/var/lib/b2c-emulator" "$rootfs/usr/share/doc/b2c"
cp "$binary" "$rootfs/usr/bin/b2c-emulator"
chmod 755 "$rootfs/usr/bin/b2c-emulator"
# Each library at the path the loader finds it under here (the dynamic loader by the path the binary names).
libs=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
[[ -n $libs ]] || die "ldd names no library for $binary"
while read -r lib; do
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
done <<<"$libs"
ldd "$binary" | grep -q 'not found' && die "$binary needs a library that is not installed: $(ldd "$binary" | grep 'not found')"
roots=/etc/ssl/certs/ca-certificates.crt
[[ -s $roots ]] || die "no CA roots at $roots (Debian: apt-get install ca-certificates)"
cp "$roots" "$rootfs/etc/ssl/certs/"
cp "$notices" "$rootfs/usr/share/doc/b2c/THIRD-PARTY-NOTICES.txt"
printf 'root:x:0:0:root:/root:/nonexistent\nb2c:x:65532:65532:b2c-emulator:/var/lib/b2c-emulator:/nonexistent\n' \
    >"$rootfs/etc/passwd"
printf 'root:x:0:\nb2c:x:65532:\n' >"$rootfs/etc/group"
chmod 1777 "$rootfs/tmp"
chmod 750 "$rootfs/var/lib/b2c-emulator"

# One layer, written by tar so that owners and times do not depend on who builds: everything root's, the state
# directory b2c's.
tarflags=(--sort=name --mtime="@$epoch" --numeric-owner --format=pax --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
tar -C "$rootfs" "${tarflags[@]}" --owner=0 --group=0 --exclude=./var/lib/b2c-emulator -cf "$work/layer.tar" .
tar -C "$rootfs" "${tarflags[@]}" --owner=65532 --group=65532 -rf "$work/layer.tar" ./var/lib/b2c-emulator

layout=$work/oci
ref="$layout:b2c-emulator:$version"
umoci init --layout "$layout"
umoci new --image "$ref"
umoci raw add-layer --image "$ref" --history.created "$created" --history.created_by "scripts/image.sh" "$work/layer.tar"
annotations=(
    org.opencontainers.image.title=b2c-emulator
    "org.opencontainers.image.description=A local Azure AD B2C / Entra External ID tenant for development and CI"
    "org.opencontainers.image.version=$version"
    "org.opencontainers.image.created=$created"
)
[[ -n $revision ]] && annotations+=("org.opencontainers.image.revision=$revision")
[[ -n $source ]] && annotations+=("org.opencontainers.image.source=$source")
config=(
    --created "$created" --architecture "$ociarch" --os linux --author "b2c maintainers"
    --config.entrypoint /usr/bin/b2c-emulator --config.cmd serve
    --config.user 65532:65532 --config.workingdir /var/lib/b2c-emulator --config.exposedports 8080/tcp
    --config.env PATH=/usr/bin --config.env HOME=/var/lib/b2c-emulator
    --config.env B2C_EMULATOR_HOST=0.0.0.0 --config.env B2C_EMULATOR_PORT=8080 --config.env B2C_EMULATOR_LOG_FORMAT=text
    --config.env B2C_EMULATOR_ADMIN_TOKEN_REQUIRED=true
    --history.created "$created" --history.created_by "scripts/image.sh (configuration)"
)
for a in "${annotations[@]}"; do config+=(--manifest.annotation "$a" --config.label "$a"); done
umoci config --image "$ref" "${config[@]}"
umoci gc --layout "$layout"

# Docker before 25 loads only its own format: a manifest.json beside the layout names the same blobs.
python3 - "$layout" "b2c-emulator:$version" <<'PY'
import json, sys
layout, name = sys.argv[1], sys.argv[2]
index = json.load(open(f"{layout}/index.json"))
[entry] = index["manifests"]
manifest = json.load(open(f"{layout}/blobs/{entry['digest'].replace(':', '/')}"))
blob = lambda d: "blobs/" + d["digest"].replace(":", "/")
docker = [{"Config": blob(manifest["config"]), "RepoTags": [name], "Layers": [blob(l) for l in manifest["layers"]]}]
json.dump(docker, open(f"{layout}/manifest.json", "w"), separators=(",", ":"))
PY
chmod -R a+rX "$layout"
mkdir -p "$(dirname "$out")"
tar -C "$layout" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf "$out.part" .
mv "$out.part" "$out"
printf 'image: %s (b2c-emulator:%s, %s compressed layer)\n' "$out" "$version" \
    "$(du -h "$layout"/blobs/sha256/* | sort -h | tail -1 | cut -f1)" >&2
