# ---
# name: file_stats
# version: 1.0.0
# description: Report the size, line count, word count and modification time of a text file.
# inputs:
#   - name: path
#     type: string
#     description: The path of the file to inspect.
#   - name: encoding
#     type: string
#     description: The text encoding used to read the file.
#     required: false
#     default: utf-8
# outputs:
#   type: object
#   description: '{path, bytes, lines, words, modified} with modified in ISO 8601 UTC.'
# capabilities:
#   network: false
#   filesystem: read-only
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# ---
import json
import sys
from datetime import UTC, datetime
from pathlib import Path


def main(path: str, encoding: str = "utf-8") -> dict:
    target = Path(path).expanduser()
    info = target.stat()
    text = target.read_text(encoding=encoding, errors="replace")
    modified = datetime.fromtimestamp(info.st_mtime, tz=UTC)
    return {
        "path": str(target.resolve()),
        "bytes": info.st_size,
        "lines": len(text.splitlines()),
        "words": len(text.split()),
        "modified": modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
