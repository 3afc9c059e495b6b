#!/usr/bin/env bash
# Keeps the indented lines of a man page's DESCRIPTION as they are written. swift-argument-parser's manual generator
# puts a command's `discussion` there as plain text lines, which man fills into a paragraph: the example command lines
# ("Examples:" and the lines indented under it) would run together. Each run of indented lines becomes a literal
# display (.Bd -literal), its common indentation given by the display's offset instead.
# Usage: scripts/man-examples.sh PAGE.1...   (rewrites each page in place)
set -euo pipefail
for page in "$@"; do
    awk '
        function close_block() { if (inblock) { print ".Ed"; inblock = 0 } }
        /^\.Sh / { close_block(); indesc = ($0 == ".Sh DESCRIPTION"); print; next }
        indesc && /^\./ { close_block(); if ($0 ~ /^\.Bl /) indesc = 0; print; next }
        indesc && /^[ \t]+[^ \t]/ {
            if (!inblock) {
                print ".Bd -literal -offset indent"
                inblock = 1
                match($0, /^[ \t]+/)
                indent = RLENGTH
            }
            line = $0
            n = 0
            while (n < indent && substr(line, 1, 1) ~ /[ \t]/) { line = substr(line, 2); n++ }
            print line
            next
        }
        indesc && inblock { close_block(); print ".Pp"; print; next }
        { print }
        END { close_block() }
    ' "$page" >"$page.tmp"
    mv "$page.tmp" "$page"
done
