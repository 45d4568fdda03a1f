# ---
# name: delete_file
# version: 1.0.0
# description: Delete one file from disk after a person approves the exact path.
# inputs:
#   - name: path
#     type: string
#     description: The path of the file to delete; folders are refused.
#   - name: missing_ok
#     type: boolean
#     description: Whether a path that does not exist counts as success.
#     required: false
#     default: false
# outputs:
#   type: object
#   description: '{path, deleted, bytes} where deleted is false only for a missing file with missing_ok.'
# capabilities:
#   network: false
#   filesystem: read-write
#   human_confirm: true
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# ---
import json
import os
import sys


def main(path: str, missing_ok: bool = False) -> dict:
    target = os.path.abspath(os.path.expanduser(path))
    if not os.path.lexists(target):
        if missing_ok:
            return {"path": target, "deleted": False, "bytes": 0}
        raise FileNotFoundError(f"no such file: {target}")
    if os.path.isdir(target) and not os.path.islink(target):
        raise IsADirectoryError(f"refusing to delete a folder: {target}")
    size = os.lstat(target).st_size
    os.remove(target)
    return {"path": target, "deleted": True, "bytes": size}


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
