# ---
# name: json_pick
# version: 1.0.0
# description: Pick values out of a JSON object by dotted paths such as "user.emails.0".
# inputs:
#   - name: data
#     type: object
#     description: The JSON object to read from.
#   - name: paths
#     type: array
#     description: The dotted paths to pick; a number step indexes into a list.
#     items:
#       type: string
#   - name: missing
#     type: string
#     description: The value to return for a path that does not exist.
#     required: false
#     default: ''
# outputs:
#   type: object
#   description: Each path mapped to the value found there.
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# ---
import json
import sys
from typing import Any


def pick(value: Any, path: str, missing: Any) -> Any:
    for step in path.split(".") if path else []:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.lstrip("-").isdigit() and -len(value) <= int(step) < len(value):
            value = value[int(step)]
        else:
            return missing
    return value


def main(data: dict, paths: list[str], missing: str = "") -> dict:
    return {path: pick(data, path, missing) for path in paths}


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
