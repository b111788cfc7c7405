#!/usr/bin/env bash
# Install the real agent CLIs at pinned versions into a test-only prefix (never global).
# Usage: .ci/install-clis.sh [PREFIX]   (default: <repo>/.realcli)
# Idempotent: a CLI already at its pinned version is not reinstalled.
# The binaries end up in PREFIX/node_modules/.bin/{claude,opencode,kilo}.
set -euo pipefail

# Pinned versions: bump together with docs/real-clis.md and the recorded fixtures.
CLAUDE_VERSION=2.1.330
OPENCODE_VERSION=1.18.33
KILO_VERSION=7.7.7   # newest @kilocode/cli whose platform package installs here

here="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-$here/.realcli}"

die() { echo "install-clis: error: $*" >&2; exit 1; }
command -v npm >/dev/null || die "npm not found on PATH (Node 20+ needed)"
command -v node >/dev/null || die "node not found on PATH (Node 20+ needed)"

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
[ -f "$prefix/package.json" ] || echo '{"name":"aidd-realcli","private":true}' >"$prefix/package.json"

installed_version() {  # <package name> -> version from its package.json, or empty
    local pj="$prefix/node_modules/$1/package.json"
    [ -f "$pj" ] && node -p "require('$pj').version" 2>/dev/null || true
}

wanted=()
for spec in "@anthropic-ai/claude-code@$CLAUDE_VERSION" "opencode-ai@$OPENCODE_VERSION" \
            "@kilocode/cli@$KILO_VERSION"; do
    name="${spec%@*}"; version="${spec##*@}"
    [ "$(installed_version "$name")" = "$version" ] || wanted+=("$spec")
done

start=$(date +%s)
if [ ${#wanted[@]} -gt 0 ]; then
    echo "install-clis: installing ${wanted[*]} into $prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-package-lock --save-exact \
        --loglevel=error "${wanted[@]}" \
        || die "npm install failed for: ${wanted[*]}"
else
    echo "install-clis: pinned versions already installed in $prefix"
fi

bin="$prefix/node_modules/.bin"
export DISABLE_AUTOUPDATER=1 OPENCODE_DISABLE_AUTOUPDATE=1 HOME="$(mktemp -d)"
trap 'rm -rf "$HOME"' EXIT
for cli in claude opencode kilo; do
    [ -x "$bin/$cli" ] || die "$bin/$cli missing after install"
    v="$(timeout 20 "$bin/$cli" --version </dev/null 2>&1 | head -n1)" \
        || die "$cli --version failed: $v"
    echo "install-clis: $cli $v"
done
echo "install-clis: done in $(( $(date +%s) - start ))s"
