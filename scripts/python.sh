# Sourced by the scripts that run Python: PYTHON is the interpreter of the repository's virtual
# environment, which scripts/setup.sh creates (packages never go into the system interpreter).
PYTHON="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv/bin/python"
if [ ! -x "$PYTHON" ]; then
  echo "no virtual environment at ${PYTHON%/bin/python}: run bash scripts/setup.sh first" >&2
  exit 1
fi
