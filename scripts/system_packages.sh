#!/usr/bin/env bash
# Make sure the Debian packages Quire needs are installed.
#   scripts/system_packages.sh run|test|cluster|bench
# As root, missing packages are installed with apt-get; otherwise the exact command is printed.
set -euo pipefail
purpose=${1:-run}

packages=(
  # LaTeX builds (latex.compile.pdf/v1) and their sandbox
  texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-xetex texlive-luatex
  texlive-fonts-recommended latexmk biber texlive-bibtex-extra texlive-extra-utils bubblewrap  # biblatex is in bibtex-extra, texcount in extra-utils
  # Office previews and the faithful PPTX import profile; python3-uno lets the preview host keep them warm
  libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui python3-uno
  # Free fonts metric-compatible with Office's (Calibri, Cambria, Arial, Times New Roman, Courier New) and one
  # with CJK glyphs: an imported deck's text keeps its line breaks (the PPTX import copies them into the project)
  # and LibreOffice renders Office documents with them
  fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation2 fonts-droid-fallback
)
# The browser bundle (frontend/) is built with Node and npm; a Node already on the machine (from any
# source) is used as it is.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi
if [ "$purpose" = "test" ] || [ "$purpose" = "bench" ]; then
  packages+=(chromium)  # browser tests (and what a person sees, in benchmarks) drive Debian's Chromium
  packages+=(zip unzip)  # the peers of zip in and out (make bench-project, run at its smallest by the tests)
  packages+=(prometheus)  # promtool checks the shipped alerting rules and proves each one fires
fi
if [ "$purpose" = "test" ] || [ "$purpose" = "cluster" ]; then
  packages+=(pgbouncer haproxy)  # the pooled test mode and the cluster (docs/deployment.md)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

command="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "Installing system packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "Quire needs these system packages: ${missing[*]}" >&2
  echo "Run as root:  $command" >&2
  exit 1
fi
