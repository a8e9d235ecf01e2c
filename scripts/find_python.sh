#!/usr/bin/env bash
# Print the path of a Python matching .python-version (3.12), or explain how to get one.
set -euo pipefail
want=$(cat "$(dirname "$0")/../.python-version")
pyenv_root=$(command -v pyenv >/dev/null 2>&1 && pyenv root || echo "$HOME/.pyenv")
for candidate in "$pyenv_root"/versions/"$want"*/bin/python"$want" /usr/local/bin/python"$want" \
                 /usr/bin/python"$want" "python$want"; do
  if path=$(command -v "$candidate" 2>/dev/null) && "$path" -c "import sys; assert sys.version.startswith('$want')" 2>/dev/null; then
    echo "$path"
    exit 0
  fi
done
echo "Python $want is required. Install it with: pyenv install $want  (or: apt-get install python$want python$want-venv)" >&2
exit 1
