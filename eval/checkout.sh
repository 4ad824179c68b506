#!/usr/bin/env bash
# Check out every repository of eval/repos.toml at its pinned commit, into DIR/<name>.
# Usage: eval/checkout.sh DIR   (needs git and network access; their code is never committed)
set -euo pipefail
target=${1:?usage: eval/checkout.sh DIR}
mkdir -p "$target"
python3 - "$(dirname "$0")/repos.toml" <<'PY' | while read -r name url commit; do
import sys, tomllib
for repo in tomllib.load(open(sys.argv[1], "rb"))["repo"]:
    print(repo["name"], repo["url"], repo["commit"])
PY
  dest="$target/$name"
  if [ ! -d "$dest/.git" ]; then
    git clone --quiet --filter=blob:limit=1m --no-checkout "$url" "$dest"
  fi
  git -C "$dest" -c advice.detachedHead=false checkout --quiet "$commit"
  echo "$name at $commit"
done
